/**
 * The pause mark of the LLM rewrite: the rewrite may mark the place a speaker would pause in a
 * question with ` | ` (prompt `rewrite-spoken.v2`, rule 11). `pausePointOf` reads and removes it; the
 * TURN_HOLD split (`turn-hold-split.ts`) takes the marked place when it is allowed.
 */

/** A question as the LLM rewrite wrote it, read for its pause mark (`pausePointOf`). */
export interface MarkedQuestion {
  /** The question without the mark (spaces collapsed). */
  text: string;
  /** The marked word boundary: the number of words before the mark; absent without a mark. */
  pausePoint?: number;
  /** Why the mark cannot be read (more than one, at the start or the end); absent when it can. */
  problem?: string;
}

/** The pause mark of the rewrite prompt (`rewrite-spoken.v2` rule 11): a vertical bar between words. */
const PAUSE_MARK = /\s*[|‖]\s*/g;

/**
 * Reads and removes the pause mark ` | ` a rewrite may put in a question (module comment). The text
 * comes back without any mark whatever the problem, so nothing unspeakable reaches the speech engine.
 * @param text one question of the rewrite's reply
 * @returns the text without the mark, the marked word boundary, or the problem with the mark
 */
export function pausePointOf(text: string): MarkedQuestion {
  const parts = text.split(PAUSE_MARK);
  const clean = parts.join(' ').replace(/\s+/g, ' ').trim();
  if (parts.length === 1) return { text: clean };
  if (parts.length > 2) return { text: clean, problem: `marks ${parts.length - 1} pause points with "|"; at most one` };
  const before = parts[0]!
    .trim()
    .split(/\s+/)
    .filter((word) => word.length > 0).length;
  const after = parts[1]!
    .trim()
    .split(/\s+/)
    .filter((word) => word.length > 0).length;
  if (before === 0 || after === 0)
    return { text: clean, problem: `has its pause mark "|" at the ${before === 0 ? 'start' : 'end'}` };
  return { text: clean, pausePoint: before };
}
