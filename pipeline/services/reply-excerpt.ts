/**
 * What a service sent back, as a failure message shows it: the content type and the start of the
 * body on one line. A server that answers 200 with an HTML page (a proxy's login or error page, a
 * web UI at the configured address) is told apart from a model's reply this way.
 */

/** Characters of a body a message quotes. */
export const REPLY_EXCERPT_LENGTH = 120;

/**
 * The body's start on one line: whitespace runs as one space, cut at {@link REPLY_EXCERPT_LENGTH}
 * characters with `…`.
 * @param body the body text, or a parsed value (shown as JSON).
 * @returns e.g. `<html><head><title>Sign in</title>…`; `(empty)` for an empty body.
 */
export function replyExcerpt(body: unknown): string {
  const text = typeof body === 'string' ? body : (JSON.stringify(body) ?? String(body));
  const line = text.replace(/\s+/g, ' ').trim();
  if (line === '') return '(empty)';
  return line.length > REPLY_EXCERPT_LENGTH ? `${line.slice(0, REPLY_EXCERPT_LENGTH)}…` : line;
}

/**
 * The content type and excerpt of a reply, for the end of a message.
 * @param contentType the `content-type` header, or null/undefined when absent.
 * @param body the body text or parsed value.
 * @returns e.g. `content type text/html; charset=utf-8, body: <html>…`.
 */
export function describeReply(contentType: string | null | undefined, body: unknown): string {
  return `content type ${contentType ?? 'none'}, body: ${replyExcerpt(body)}`;
}
