/**
 * The one way a zod validation failure becomes a message: each problem as `path: message`, the path
 * dotted, array positions included (`utterances.3.start`; the LLM repair requests quote it so), joined by `; `, at most a few of
 * them and a count of the rest. Callers put the file (and line) in front, so every message names the
 * file, the field and the problem: `metadata/x.json: speakers.user.channel: Invalid input`.
 */
import type { z } from 'zod';

/** How {@link describeIssues} writes the problems. */
export interface IssueFormat {
  /** Shown for an issue on the value itself (empty path). Default `(top level)`. */
  root?: string;
  /** Written before every path, e.g. `tts.en.service` for a nested block validated on its own. */
  prefix?: string;
  /** At most this many problems are listed, the rest counted. Default 10. */
  limit?: number;
}

/**
 * A field path as written in messages: keys and array indices joined by dots.
 * @param path zod issue path (keys and indices)
 * @param prefix written first (joined with a dot), e.g. `tts.en.service`
 * @returns `''` for an empty path without prefix
 */
export function issuePath(path: readonly PropertyKey[], prefix = ''): string {
  return [...(prefix === '' ? [] : [prefix]), ...path.map(String)].join('.');
}

/**
 * The problems of a failed validation on one line.
 * @param issues `error.issues` of a zod `safeParse` failure (at least one)
 * @returns e.g. `audio.sampleRate: Too small: expected number to be >0; seed: Invalid input (and 2 more problems)`
 */
export function describeIssues(issues: readonly z.core.$ZodIssue[], format: IssueFormat = {}): string {
  const limit = format.limit ?? 10;
  const shown = issues
    .slice(0, limit)
    .map((issue) => `${issuePath(issue.path, format.prefix) || (format.root ?? '(top level)')}: ${issue.message}`);
  const more = issues.length - shown.length;
  return `${shown.join('; ')}${more > 0 ? ` (and ${more} more problem${more > 1 ? 's' : ''})` : ''}`;
}
