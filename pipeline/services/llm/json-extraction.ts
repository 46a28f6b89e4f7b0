/**
 * Finds the JSON object in a model's reply. Models wrap JSON in markdown fences (even in JSON mode),
 * put a sentence before it, or add notes after it. Order of attempts:
 * 1. the whole reply, trimmed, when it parses as a JSON object;
 * 2. the last fenced code block (```json … ``` or ``` … ```) whose content parses as an object;
 * 3. the last balanced top-level `{…}` that parses (string-aware, so braces inside strings count not).
 */

/** The outcome of {@link extractJsonObject}: the value and where it came from. */
export type JsonExtraction =
  | { found: true; value: Record<string, unknown>; source: 'whole' | 'fenced' | 'balanced' }
  | { found: false; reason: string };

/**
 * Extracts the JSON object from a reply.
 *
 * @param text the model's raw reply.
 * @returns `{found: true, value, source}` or `{found: false, reason}`; never throws.
 */
export function extractJsonObject(text: string): JsonExtraction {
  const whole = parseObject(text.trim());
  if (whole !== undefined) return { found: true, value: whole, source: 'whole' };

  const fenced = [...text.matchAll(/```[ \t]*[A-Za-z0-9_-]*[ \t]*\r?\n?([\s\S]*?)```/g)];
  for (const match of fenced.reverse()) {
    const value = parseObject((match[1] ?? '').trim());
    if (value !== undefined) return { found: true, value, source: 'fenced' };
  }

  const spans = balancedObjectSpans(text);
  for (const span of spans.reverse()) {
    const value = parseObject(text.slice(span.start, span.end));
    if (value !== undefined) return { found: true, value, source: 'balanced' };
  }

  if (text.trim() === '') return { found: false, reason: 'the reply is empty' };
  return { found: false, reason: 'the reply contains no parseable JSON object' };
}

/**
 * The spans of balanced top-level `{…}` candidates, left to right. From each `{` not inside an earlier
 * span, scans forward tracking strings and escapes; an unbalanced start is skipped, so a stray `{` in
 * prose does not hide a later object.
 *
 * @param text the text to scan.
 * @returns `[start, end)` spans.
 */
export function balancedObjectSpans(text: string): Array<{ start: number; end: number }> {
  const spans: Array<{ start: number; end: number }> = [];
  let position = 0;
  while (position < text.length) {
    const start = text.indexOf('{', position);
    if (start < 0) break;
    const end = matchingBraceEnd(text, start);
    if (end === undefined) {
      position = start + 1;
    } else {
      spans.push({ start, end });
      position = end;
    }
  }
  return spans;
}

function matchingBraceEnd(text: string, start: number): number | undefined {
  let depth = 0;
  let inString = false;
  for (let index = start; index < text.length; index += 1) {
    const character = text[index];
    if (inString) {
      if (character === '\\') index += 1;
      else if (character === '"') inString = false;
      continue;
    }
    if (character === '"') inString = true;
    else if (character === '{') depth += 1;
    else if (character === '}') {
      depth -= 1;
      if (depth === 0) return index + 1;
    }
  }
  return undefined;
}

function parseObject(candidate: string): Record<string, unknown> | undefined {
  if (!candidate.startsWith('{')) return undefined;
  try {
    const value: unknown = JSON.parse(candidate);
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}
