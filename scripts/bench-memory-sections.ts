/**
 * The bench's memory sections: `memory` (peak resident set of a 20- and a 200-dialogue build) and
 * `dryrun` (peak resident set of `build --dry-run` on a 20- and a 1,000-turn conversation), each run
 * in a process of its own.
 */
import { execFile } from 'node:child_process';
import type { DryRunMeasurement } from '../pipeline/orchestration/plan-build.bench.ts';
import { runnableModule, TYPESCRIPT_LOADER_ARGUMENTS } from '../pipeline/storage/package-files.ts';
import { ratio } from './bench-measure.ts';
import { saturationInChildProcess } from './bench-saturation-section.ts';
import type { BenchOptions, SectionFindings } from './bench-section.ts';

/**
 * Peak resident set (getrusage maxrss) of a 20- and a 200-dialogue build, each in its own process,
 * against 4 loopback CosyVoice2 servers at RTF 0.002 with the 'speex' resampler and no profile (a
 * 200-dialogue build against espeak-ng would take about an hour here); quality scoring off. The peak
 * includes the loopback servers' thread, which runs in the same process.
 */
export async function memorySection(_options: BenchOptions, findings: SectionFindings): Promise<string> {
  const runOne = (dialogues: number) =>
    saturationInChildProcess({
      dialogues,
      servers: 4,
      realTimeFactor: 0.002,
      profile: false,
      resampleQuality: 'speex',
    });
  const small = await runOne(20);
  const large = await runOne(200);
  findings.figures.push(
    {
      measure: 'peak RSS MiB of a 20-dialogue build (loopback servers included)',
      value: small.maxResidentMebibytes.toFixed(0),
    },
    {
      measure: 'peak RSS MiB of a 200-dialogue build (loopback servers included)',
      value: large.maxResidentMebibytes.toFixed(0),
      ratio: `${ratio(large.maxResidentMebibytes, small.maxResidentMebibytes)} (/ 20 dialogues)`,
    },
  );
  const row = (result: typeof small) =>
    `| ${result.options.dialogues} | ${result.writtenAudioSeconds.toFixed(0)} | ${result.wallSeconds.toFixed(1)} | ${result.maxResidentMebibytes.toFixed(0)} | ${result.failedDialogues} |`;
  return [
    'Each build in its own process (`node --import tsx/esm pipeline/orchestration/build-saturation.bench.ts N 4 0.002` with SATURATION_RESAMPLER=speex): 4 loopback CosyVoice2 servers at RTF 0.002, quality scoring off.',
    '',
    '| dialogues | dialogue audio written s | wall s | peak RSS MiB (process, servers included) | failed |',
    '|---:|---:|---:|---:|---:|',
    row(small),
    row(large),
    '',
    `- peak RSS, 200 / 20 dialogues = ${ratio(large.maxResidentMebibytes, small.maxResidentMebibytes)} (goal <= 1.5)`,
  ].join('\n');
}

/**
 * `build --dry-run` of one conversation of 20 and of 1,000 turns (pipeline/orchestration/plan-build.bench.ts),
 * each in its own process: the peak resident set's ratio is the claim (memory independent of the
 * conversation's length; the planner holds one window of stand-in clips).
 */
export async function dryRunSection(_options: BenchOptions, findings: SectionFindings): Promise<string> {
  const script = runnableModule('pipeline/orchestration/plan-build.bench.ts');
  const runOne = (turns: number) =>
    new Promise<DryRunMeasurement>((resolve, reject) => {
      execFile(
        process.execPath,
        [...TYPESCRIPT_LOADER_ARGUMENTS, script, String(turns)],
        { maxBuffer: 64 * 2 ** 20 },
        (error, stdout) =>
          error ? reject(error) : resolve(JSON.parse(stdout.trim().split('\n').at(-1)!) as DryRunMeasurement),
      );
    });
  const short = await runOne(20);
  const long = await runOne(1000);
  findings.figures.push(
    {
      measure: 'peak RSS MiB of `build --dry-run`, one 20-turn conversation',
      value: short.maxResidentMebibytes.toFixed(0),
    },
    {
      measure: 'peak RSS MiB of `build --dry-run`, one 1,000-turn conversation',
      value: long.maxResidentMebibytes.toFixed(0),
      ratio: `${ratio(long.maxResidentMebibytes, short.maxResidentMebibytes)} (/ 20 turns)`,
    },
  );
  const row = (result: DryRunMeasurement) =>
    `| ${result.turns} | ${(result.corpusBytes / 1e6).toFixed(2)} | ${result.utterances} | ${result.wallSeconds.toFixed(1)} | ${result.maxResidentMebibytes.toFixed(0)} |`;
  return [
    'Each dry run in its own process (`node --import tsx/esm pipeline/orchestration/plan-build.bench.ts TURNS`): one conversation, offline English config (rules rewrite, espeak-ng), empty cache, so every clip is a planned request answered with stand-in audio.',
    '',
    '| turns | corpus MB | utterances planned | wall s | peak RSS MiB |',
    '|---:|---:|---:|---:|---:|',
    row(short),
    row(long),
    '',
    `- peak RSS, 1,000 / 20 turns = ${ratio(long.maxResidentMebibytes, short.maxResidentMebibytes)} for ${ratio(long.utterances, short.utterances, 0)} times the utterances`,
  ].join('\n');
}
