/**
 * What every COMETKiwi scorer (./cometkiwi.ts) takes and returns: the model, the (source,
 * translation) pairs and their line-aligned form, the options, the computed or not-computed result,
 * and the error of a scorer that ran but failed.
 */

/** The COMETKiwi model the paper reports (docs/quality-and-splits.md, "COMETKiwi"). Gated on Hugging Face, licence CC BY-NC-SA 4.0. */
export const COMETKIWI_MODEL = 'Unbabel/wmt22-cometkiwi-da';

/** One pair to score: the source sentence and its machine translation. */
export interface TranslationPair {
  /** Source text (here: the English spoken-style text). */
  src: string;
  /** Translation (here: the Japanese final text). */
  mt: string;
}

/** Scores of a computed COMETKiwi run. */
export interface CometKiwiComputed {
  computed: true;
  /** Which scorer produced the scores. */
  scorer: 'command' | 'http';
  /** The model name passed to the scorer. */
  model: string;
  /** One score per input pair, in input order, 0..1 (the command prints 4 decimals). */
  segmentScores: number[];
  /** The scorer's system score (the mean of the segment scores in COMET). */
  systemScore: number;
}

/** COMETKiwi could not be computed; `reason` says why (never replaced by a number). */
export interface CometKiwiNotComputed {
  computed: false;
  reason: string;
}

/** Result of `scoreTranslations` (./cometkiwi.ts). */
export type CometKiwiResult = CometKiwiComputed | CometKiwiNotComputed;

/** Where and how to score; every field is optional. */
export interface CometKiwiOptions {
  /**
   * URL of an HTTP scorer (see the comment of ./cometkiwi.ts for the assumed request and response shape).
   * When set, it is used and the command is not tried. Default: none.
   */
  httpUrl?: string | null;
  /** Extra HTTP request headers (for example an authorization header). */
  httpHeaders?: Record<string, string>;
  /** Pairs per HTTP request. Default 64. */
  httpBatchSize?: number;
  /** The command to run: a name looked up on PATH, or a path. Default `comet-score`. */
  command?: string;
  /** Model name. Default {@link COMETKIWI_MODEL}. */
  model?: string;
  /**
   * `--gpus N` for the command (0 = CPU). Default: not passed, so the command's own default applies
   * (1 GPU in unbabel-comet 2.x, which fails on a machine without a GPU: pass 0 there).
   */
  gpus?: number | null;
  /** `--batch_size N` for the command. Default: not passed (the command's default, 16 in 2.x). */
  batchSize?: number | null;
  /** Give up after this many milliseconds (whole command run, or each HTTP request). Default 3600000. */
  timeoutMilliseconds?: number;
  /** Environment for the PATH look-up and the command. Default `process.env`. */
  environment?: NodeJS.ProcessEnv;
}

/** A configured scorer ran but failed (exit status, unparseable output, HTTP error, wrong shape). */
export class CometKiwiError extends Error {
  override readonly name = 'CometKiwiError';
}

/**
 * Makes a text safe for a line-aligned segment file: line breaks (CR, LF, and the other characters
 * Python's `str.splitlines` treats as breaks) and runs of white space become one space; the result
 * is trimmed (`comet-score` strips each line anyway).
 */
export function toSegmentLine(text: string): string {
  return text.replace(/[\s\u0085\u2028\u2029]+/gu, ' ').trim();
}

/** The pairs as segment lines ({@link toSegmentLine}). @throws RangeError when a source or translation is empty */
export function validatePairs(pairs: readonly TranslationPair[]): TranslationPair[] {
  return pairs.map((pair, index) => {
    const src = toSegmentLine(pair.src);
    const mt = toSegmentLine(pair.mt);
    if (src === '' || mt === '')
      throw new RangeError(`translation pair ${index} has an empty ${src === '' ? 'source' : 'translation'}`);
    return { src, mt };
  });
}
