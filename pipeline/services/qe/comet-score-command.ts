/**
 * The `comet-score` command of the `unbabel-comet` Python package as a COMETKiwi scorer (./cometkiwi.ts):
 * finding it on PATH, running it on line-aligned source and translation files, and reading the segment
 * and system scores from its standard output.
 */
import { constants as fileSystemConstants } from 'node:fs';
import { access, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import {
  COMETKIWI_MODEL,
  CometKiwiError,
  validatePairs,
  type CometKiwiComputed,
  type CometKiwiOptions,
  type TranslationPair,
} from './cometkiwi-scorer-contract.ts';

/** Name of the command-line scorer installed by `pip install unbabel-comet`. */
export const COMET_SCORE_COMMAND = 'comet-score';

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
