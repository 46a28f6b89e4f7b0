/**
 * COMETKiwi (Unbabel/wmt22-cometkiwi-da): reference-free translation quality estimation, one score
 * in 0..1 per (source, translation) pair, through one of two scorers:
 *
 * 1. the `comet-score` command of the `unbabel-comet` Python package (./comet-score-command.ts;
 *    docs/quality-and-splits.md, "COMETKiwi"):
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
import { serviceAddress } from '../service-address.ts';
import { COMET_SCORE_COMMAND, findExecutable, runCometScoreCommand } from './comet-score-command.ts';
import {
  COMETKIWI_MODEL,
  CometKiwiError,
  validatePairs,
  type CometKiwiComputed,
  type CometKiwiOptions,
  type CometKiwiResult,
  type TranslationPair,
} from './cometkiwi-scorer-contract.ts';

export {
  COMET_SCORE_COMMAND,
  extractCometScores,
  findExecutable,
  parseCometScoreOutput,
  runCometScoreCommand,
  type CometScoreOutput,
  type CometScoreSegmentLine,
} from './comet-score-command.ts';
export {
  COMETKIWI_MODEL,
  CometKiwiError,
  toSegmentLine,
  type CometKiwiComputed,
  type CometKiwiNotComputed,
  type CometKiwiOptions,
  type CometKiwiResult,
  type TranslationPair,
} from './cometkiwi-scorer-contract.ts';

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
