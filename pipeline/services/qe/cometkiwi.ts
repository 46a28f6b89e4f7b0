/**
 * COMETKiwi (Unbabel/wmt22-cometkiwi-da): reference-free translation quality estimation, one score
 * in 0..1 per (source, translation) pair, through one of two scorers:
 *
 * 1. the `comet-score` command of the `unbabel-comet` Python package (../shared/docs/services.md):
 *    `comet-score -s src.txt -t mt.txt --model Unbabel/wmt22-cometkiwi-da [--gpus N] [--batch_size N]`
 *    with line-aligned UTF-8 files; its standard output is one line per segment
 *    `{mt path}\tSegment {i}\tscore: 0.8123` followed by the system line `{mt path}\tscore: 0.7990`
 *    (scores printed with 4 decimals by `comet/cli/score.py`); its standard error carries log noise
 *    (PyTorch Lightning, Hugging Face downloads, progress bars) and is only kept for error messages;
 * 2. an HTTP scorer (a small service wrapping `model.predict` of the same package), with this ASSUMED
 *    wire shape, mirroring `comet.models.base.CometModel.predict(samples)`:
 *    request `POST {url}` with `Content-Type: application/json` and body
 *    `{"model": "Unbabel/wmt22-cometkiwi-da", "data": [{"src": "...", "mt": "..."}, ...]}`;
 *    response 200 with `{"scores": [0.81, ...], "system_score"?: 0.80}` — `scores` in request order,
 *    one per item of `data`; `system_score` is optional (the mean of `scores` is used when absent).
 *    Any other status, or a body not of that shape, is an error.
 *
 * When neither scorer is available (no HTTP scorer configured and `comet-score` not on PATH) the
 * result is `{computed: false, reason}`: this module never makes up a number.
 */
import { constants as fileSystemConstants } from 'node:fs';
import { access, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { serviceAddress } from '../service-address.ts';

/** The COMETKiwi model the paper reports (services.md). Gated on Hugging Face, licence CC BY-NC-SA 4.0. */
export const COMETKIWI_MODEL = 'Unbabel/wmt22-cometkiwi-da';

/** Name of the command-line scorer installed by `pip install unbabel-comet`. */
export const COMET_SCORE_COMMAND = 'comet-score';

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

/** Result of {@link scoreTranslations}. */
export type CometKiwiResult = CometKiwiComputed | CometKiwiNotComputed;

/** Where and how to score; every field is optional. */
export interface CometKiwiOptions {
  /**
   * URL of an HTTP scorer (see the module comment for the assumed request and response shape).
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

/** One parsed segment line of `comet-score`. */
export interface CometScoreSegmentLine {
  path: string;
  index: number;
  score: number;
}

/** The parsed standard output of `comet-score`. */
export interface CometScoreOutput {
  segments: CometScoreSegmentLine[];
  /** The system line; null when absent. */
  system: { path: string; score: number } | null;
  /** Lines that are neither segment nor system lines (kept for error messages). */
  otherLines: string[];
}

const SEGMENT_LINE = /^(.*)\tSegment (\d+)\tscore: (\S+)$/;
const SYSTEM_LINE = /^(.*)\tscore: (\S+)$/;

function parseScoreNumber(text: string, line: string): number {
  const value = Number(text);
  if (!/^[-+]?\d+(\.\d+)?([eE][-+]?\d+)?$/.test(text) || !Number.isFinite(value)) {
    throw new CometKiwiError(`comet-score printed a score that is not a finite number: ${JSON.stringify(line)}`);
  }
  return value;
}

/**
 * Parses the standard output of `comet-score` (unbabel-comet 2.x `comet/cli/score.py`): segment lines
 * `{path}\tSegment {i}\tscore: {x:.4f}` and system lines `{path}\tscore: {x:.4f}`. Lines of any other
 * form (a `Predictions saved in` line, stray prints) are collected in `otherLines`. A trailing `\r`
 * is ignored.
 * @param stdout the command's whole standard output.
 * @returns segment lines in output order, the (last) system line, and the other lines.
 * @throws CometKiwiError when a segment or system line holds a score that is not a finite number
 *   (for example `nan`).
 */
export function parseCometScoreOutput(stdout: string): CometScoreOutput {
  const segments: CometScoreSegmentLine[] = [];
  let system: CometScoreOutput['system'] = null;
  const otherLines: string[] = [];
  for (const rawLine of stdout.split('\n')) {
    const line = rawLine.endsWith('\r') ? rawLine.slice(0, -1) : rawLine;
    if (line.trim() === '') continue;
    const segment = SEGMENT_LINE.exec(line);
    if (segment) {
      segments.push({ path: segment[1]!, index: Number(segment[2]), score: parseScoreNumber(segment[3]!, line) });
      continue;
    }
    const systemMatch = SYSTEM_LINE.exec(line);
    if (systemMatch) {
      system = { path: systemMatch[1]!, score: parseScoreNumber(systemMatch[2]!, line) };
      continue;
    }
    otherLines.push(line);
  }
  return { segments, system, otherLines };
}

/**
 * The segment scores of one `comet-score` run for the translation file `translationPath`, checked
 * against the number of input lines: exactly one segment line per index 0..expectedSegments-1 and
 * a system line, all naming `translationPath` (the command prints the `-t` argument as given).
 * @returns scores in segment order and the system score.
 * @throws CometKiwiError naming what is missing, duplicated or unexpected.
 */
export function extractCometScores(
  output: CometScoreOutput,
  translationPath: string,
  expectedSegments: number,
): { segmentScores: number[]; systemScore: number } {
  const scores: (number | undefined)[] = new Array(expectedSegments).fill(undefined);
  for (const segment of output.segments) {
    if (segment.path !== translationPath) {
      throw new CometKiwiError(
        `comet-score printed a segment line for ${JSON.stringify(segment.path)}, expected ${JSON.stringify(translationPath)}`,
      );
    }
    if (segment.index >= expectedSegments) {
      throw new CometKiwiError(
        `comet-score printed segment ${segment.index} but only ${expectedSegments} segments were given`,
      );
    }
    if (scores[segment.index] !== undefined)
      throw new CometKiwiError(`comet-score printed segment ${segment.index} twice`);
    scores[segment.index] = segment.score;
  }
  const missing = scores.flatMap((score, index) => (score === undefined ? [index] : []));
  if (missing.length > 0) {
    const hint = output.otherLines.length > 0 ? `; other output: ${output.otherLines.slice(-3).join(' | ')}` : '';
    throw new CometKiwiError(
      `comet-score printed ${expectedSegments - missing.length} of ${expectedSegments} segment scores (first missing: segment ${missing[0]})${hint}`,
    );
  }
  if (output.system === null) throw new CometKiwiError('comet-score printed no system score line');
  if (output.system.path !== translationPath) {
    throw new CometKiwiError(
      `comet-score printed the system score for ${JSON.stringify(output.system.path)}, expected ${JSON.stringify(translationPath)}`,
    );
  }
  return { segmentScores: scores as number[], systemScore: output.system.score };
}

/**
 * Makes a text safe for a line-aligned segment file: line breaks (CR, LF, and the other characters
 * Python's `str.splitlines` treats as breaks) and runs of white space become one space; the result
 * is trimmed (`comet-score` strips each line anyway).
 */
export function toSegmentLine(text: string): string {
  return text.replace(/[\s\u0085\u2028\u2029]+/gu, ' ').trim();
}

/**
 * Finds an executable: a name containing a path separator is checked as is (relative to the current
 * folder); otherwise each folder of the `PATH` in `environment` is tried in order.
 * @returns the absolute path of the first regular file with execute permission, or null.
 */
export async function findExecutable(
  command: string,
  environment: NodeJS.ProcessEnv = process.env,
): Promise<string | null> {
  const candidates = command.includes('/')
    ? [path.resolve(command)]
    : (environment.PATH ?? '')
        .split(path.delimiter)
        .filter((folder) => folder !== '')
        .map((folder) => path.resolve(folder, command));
  for (const candidate of candidates) {
    try {
      await access(candidate, fileSystemConstants.X_OK);
      if ((await stat(candidate)).isFile()) return candidate;
    } catch {
      // not here; try the next folder
    }
  }
  return null;
}

/** The last `count` non-empty lines of a text, joined by ` | ` (for error messages). */
function tailLines(text: string, count: number): string {
  return text
    .split('\n')
    .map((line) => line.trimEnd())
    .filter((line) => line.trim() !== '')
    .slice(-count)
    .join(' | ');
}

function validatePairs(pairs: readonly TranslationPair[]): TranslationPair[] {
  return pairs.map((pair, index) => {
    const src = toSegmentLine(pair.src);
    const mt = toSegmentLine(pair.mt);
    if (src === '' || mt === '')
      throw new RangeError(`translation pair ${index} has an empty ${src === '' ? 'source' : 'translation'}`);
    return { src, mt };
  });
}

/**
 * Runs the `comet-score` executable at `executable` on `pairs` in a fresh temporary folder
 * (`src.txt`, `mt.txt`, UTF-8, one segment per line; removed afterwards) and parses its output.
 * The child gets `PYTHONUTF8=1` and `PYTHONIOENCODING=utf-8` so that Python reads and prints UTF-8
 * whatever the locale.
 * @throws CometKiwiError when the command cannot be started, times out, exits non-zero (the message
 *   holds the exit code and the last lines of standard error), or prints output that
 *   {@link extractCometScores} rejects.
 */
export async function runCometScoreCommand(
  executable: string,
  pairs: readonly TranslationPair[],
  options: Pick<CometKiwiOptions, 'model' | 'gpus' | 'batchSize' | 'timeoutMilliseconds' | 'environment'> = {},
): Promise<CometKiwiComputed> {
  const model = options.model ?? COMETKIWI_MODEL;
  const lines = validatePairs(pairs);
  const folder = await mkdtemp(path.join(os.tmpdir(), 'duplexsynth-cometkiwi-'));
  try {
    const sourcePath = path.join(folder, 'src.txt');
    const translationPath = path.join(folder, 'mt.txt');
    await writeFile(sourcePath, lines.map((pair) => `${pair.src}\n`).join(''), 'utf8');
    await writeFile(translationPath, lines.map((pair) => `${pair.mt}\n`).join(''), 'utf8');
    const args = ['-s', sourcePath, '-t', translationPath, '--model', model];
    if (options.gpus !== undefined && options.gpus !== null) args.push('--gpus', String(options.gpus));
    if (options.batchSize !== undefined && options.batchSize !== null)
      args.push('--batch_size', String(options.batchSize));
    const result = await execa(executable, args, {
      env: { ...(options.environment ?? process.env), PYTHONUTF8: '1', PYTHONIOENCODING: 'utf-8' },
      extendEnv: false,
      reject: false,
      stdin: 'ignore',
      timeout: options.timeoutMilliseconds ?? 3_600_000,
      encoding: 'utf8',
      stripFinalNewline: false,
    });
    const stderr = typeof result.stderr === 'string' ? result.stderr : '';
    const stdout = typeof result.stdout === 'string' ? result.stdout : '';
    if (result.failed) {
      const cause = result.timedOut
        ? `timed out after ${options.timeoutMilliseconds ?? 3_600_000} ms`
        : result.exitCode !== undefined
          ? `exited with code ${result.exitCode}`
          : `could not be run (${result.shortMessage})`;
      throw new CometKiwiError(`${executable} ${cause}${stderr.trim() ? `: ${tailLines(stderr, 3)}` : ''}`);
    }
    const scores = extractCometScores(parseCometScoreOutput(stdout), translationPath, lines.length);
    return { computed: true, scorer: 'command', model, ...scores };
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}

/**
 * Scores `pairs` with the HTTP scorer at `url` (request and response shape in the module comment),
 * `batchSize` pairs per request, in order. The system score is the scorer's `system_score` when one
 * request covered every pair and it sent one, else the mean of the segment scores.
 * @throws CometKiwiError on a network error or timeout, a non-200 status (with the start of the
 *   body), a body that is not JSON, or `scores` that is not an array of finite numbers of the
 *   request's length.
 */
export async function scoreWithHttpScorer(
  url: string,
  pairs: readonly TranslationPair[],
  options: Pick<CometKiwiOptions, 'model' | 'httpHeaders' | 'httpBatchSize' | 'timeoutMilliseconds'> = {},
): Promise<CometKiwiComputed> {
  const model = options.model ?? COMETKIWI_MODEL;
  const address = serviceAddress(url); // messages name the scorer without credentials or a query
  const timeoutMilliseconds = options.timeoutMilliseconds ?? 3_600_000;
  const lines = validatePairs(pairs);
  const batchSize = Math.max(1, options.httpBatchSize ?? 64);
  const segmentScores: number[] = [];
  let reportedSystemScore: number | null = null;
  for (let start = 0; start < lines.length; start += batchSize) {
    const batch = lines.slice(start, start + batchSize);
    let response: Response;
    let text: string;
    try {
      response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json', ...(options.httpHeaders ?? {}) },
        body: JSON.stringify({ model, data: batch }),
        signal: AbortSignal.timeout(timeoutMilliseconds),
      });
      text = await response.text();
    } catch (error) {
      if ((error as Error).name === 'TimeoutError')
        throw new CometKiwiError(
          `COMETKiwi HTTP scorer ${address}: no response within the ${timeoutMilliseconds / 1000} s timeout`,
          { cause: error },
        );
      const cause = (error as Error).cause instanceof Error ? `: ${((error as Error).cause as Error).message}` : '';
      throw new CometKiwiError(
        `COMETKiwi HTTP scorer ${address} could not be reached: ${(error as Error).message}${cause}`,
        { cause: error },
      );
    }
    if (response.status !== 200)
      throw new CometKiwiError(
        `COMETKiwi HTTP scorer ${address} answered HTTP ${response.status}: ${text.slice(0, 200)}`,
      );
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new CometKiwiError(
        `COMETKiwi HTTP scorer ${address} answered with a body that is not JSON: ${text.slice(0, 200)}`,
      );
    }
    const scores = (body as { scores?: unknown }).scores;
    if (
      !Array.isArray(scores) ||
      scores.length !== batch.length ||
      !scores.every((score) => typeof score === 'number' && Number.isFinite(score))
    ) {
      throw new CometKiwiError(
        `COMETKiwi HTTP scorer ${address} answered without "scores": an array of ${batch.length} finite numbers: ${text.slice(0, 200)}`,
      );
    }
    segmentScores.push(...(scores as number[]));
    const system = (body as { system_score?: unknown }).system_score;
    reportedSystemScore = typeof system === 'number' && Number.isFinite(system) ? system : null;
  }
  const mean = segmentScores.reduce((sum, score) => sum + score, 0) / segmentScores.length;
  const systemScore = lines.length <= batchSize && reportedSystemScore !== null ? reportedSystemScore : mean;
  return { computed: true, scorer: 'http', model, segmentScores, systemScore };
}

/**
 * Says which scorer {@link scoreTranslations} would use, without running it.
 * @returns `{kind: 'http', url}`, `{kind: 'command', executable}` (absolute path), or
 *   `{kind: 'none', reason}` naming what was looked for.
 */
export async function resolveCometKiwiScorer(
  options: CometKiwiOptions = {},
): Promise<{ kind: 'http'; url: string } | { kind: 'command'; executable: string } | { kind: 'none'; reason: string }> {
  if (options.httpUrl) return { kind: 'http', url: options.httpUrl };
  const command = options.command ?? COMET_SCORE_COMMAND;
  const executable = await findExecutable(command, options.environment ?? process.env);
  if (executable !== null) return { kind: 'command', executable };
  return {
    kind: 'none',
    reason: `no COMETKiwi scorer: the command "${command}" is not on PATH (pip install unbabel-comet; the model ${options.model ?? COMETKIWI_MODEL} is gated and needs a Hugging Face token) and no HTTP scorer is configured`,
  };
}

/**
 * COMETKiwi scores of `pairs`: with the HTTP scorer when `options.httpUrl` is set, else with the
 * `comet-score` command when it is on PATH, else `{computed: false, reason}`. An empty `pairs` list
 * is also `{computed: false, reason}`.
 * @param pairs source and translation texts; line breaks inside a text become spaces.
 * @throws RangeError when a pair has an empty source or translation; CometKiwiError when the chosen
 *   scorer runs but fails (see {@link runCometScoreCommand}, {@link scoreWithHttpScorer}).
 */
export async function scoreTranslations(
  pairs: readonly TranslationPair[],
  options: CometKiwiOptions = {},
): Promise<CometKiwiResult> {
  if (pairs.length === 0) return { computed: false, reason: 'no translated utterances to score' };
  const scorer = await resolveCometKiwiScorer(options);
  if (scorer.kind === 'none') return { computed: false, reason: scorer.reason };
  if (scorer.kind === 'http') return scoreWithHttpScorer(scorer.url, pairs, options);
  return runCometScoreCommand(scorer.executable, pairs, options);
}
