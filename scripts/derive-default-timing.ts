/**
 * Regenerates the shipped default timing statistics, `pipeline/timeline/defaults/{en,ja}.timing.json`
 * and their histograms `pipeline/timeline/defaults/{en,ja}.timing.plots/*.svg`, by running
 * `duplexsynth measure` (scripts/commands/measure.ts, the same code path as the command line) on the
 * real CallFriend speaker timings in the shared folder (`corpora/reference-timing/rttm/{en,ja}`;
 * `DUPLEXSYNTH_SHARED`, default `../shared`).
 *
 *     npx tsx scripts/derive-default-timing.ts            # write both languages' files
 *     npx tsx scripts/derive-default-timing.ts --check    # write nothing; exit 1 if a file would change
 *
 * The output is deterministic (sorted values, relative paths, no date), so `--check` and the tests
 * regenerate it byte for byte.
 */
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Command } from 'commander';
import { sharedDirectory } from '../pipeline/config.ts';
import type { Language } from '../pipeline/model/types.ts';
import { defaultTimingStatisticsPath } from '../pipeline/timeline/timing-statistics.ts';
import { registerMeasureCommand } from './commands/measure.ts';

/** How to rerun this script, recorded in the files' notes. */
export const DERIVE_DEFAULT_TIMING_COMMAND = 'npx tsx scripts/derive-default-timing.ts';

/** Where each language's reference timings are, relative to the shared folder, and what they are. */
export const DEFAULT_TIMING_SOURCES: Record<Language, { folder: string; corpus: string }> = {
  en: {
    folder: 'corpora/reference-timing/rttm/en',
    corpus: 'CallFriend North American English (TalkBank CABank), two-party telephone calls',
  },
  ja: {
    folder: 'corpora/reference-timing/rttm/ja',
    corpus: 'CallFriend Japanese (TalkBank CABank), two-party telephone calls',
  },
};

const LICENCE = 'CC BY-NC-SA 3.0';
const ORIGIN = 'TalkBank CABank CHAT files converted to RTTM by pthavarasa/CallHome-CallFriend-bergmann, commit 9031a9c';
const CHANNEL_MAPPING =
  'per call, channel 0 = the speaker with more talk time, channel 1 = the other (corpora/rttm.ts); the calls are ' +
  'symmetric conversations, so the direction carries no user/system role and the sampler pools both directions';
const SHARED_FOLDER_NAME = 'the shared folder (DUPLEXSYNTH_SHARED, default ../shared beside the project root)';
const NOTES = [
  'Times come from utterance-level CHAT bullets, not voice activity detection: bullets of different speakers often ' +
    'abut or overlap where the speech itself does not, so overlaps are somewhat overstated.',
  'Speakers beyond the two with the most talk time were dropped; speaker changes, TURN_HOLDs and SHORTPAUSEs ' +
    'containing their speech were discarded (discardedNearExcludedSpeech).',
  `Regenerate with ${DERIVE_DEFAULT_TIMING_COMMAND} (runs the command above on the shared folder).`,
];

/**
 * The `duplexsynth measure` arguments (after `measure`) that produce one language's defaults.
 * @param sharedRoot the shared folder
 * @param out the statistics file to write (default: the shipped file)
 */
export function defaultTimingArguments(language: Language, sharedRoot: string, out = defaultTimingStatisticsPath(language)): string[] {
  const source = DEFAULT_TIMING_SOURCES[language];
  return [
    '--format', 'rttm',
    '--language', language,
    '--sampler-use', 'pooled',
    '--corpus', source.corpus,
    '--licence', LICENCE,
    '--origin', ORIGIN,
    '--channel-mapping', CHANNEL_MAPPING,
    '--relative-to', sharedRoot,
    '--relative-to-name', SHARED_FOLDER_NAME,
    '--note', ...NOTES,
    '--out', out,
    path.join(sharedRoot, source.folder),
  ];
}

/**
 * Runs `duplexsynth measure` with `defaultTimingArguments` through commander.
 * @param extra more arguments, e.g. `--check`
 * @returns the exit code the command set (0, or 1 when `--check` found a stale file)
 * @throws the command's errors (see scripts/commands/measure.ts `runMeasure`)
 */
export async function runDefaultTimingMeasure(language: Language, sharedRoot: string, out?: string, extra: string[] = []): Promise<number> {
  const program = new Command('duplexsynth').exitOverride();
  registerMeasureCommand(program);
  const previous = process.exitCode;
  process.exitCode = undefined;
  try {
    await program.parseAsync(['measure', ...extra, ...defaultTimingArguments(language, sharedRoot, out)], { from: 'user' });
    return Number(process.exitCode ?? 0);
  } finally {
    process.exitCode = previous;
  }
}

async function main(argv: readonly string[]): Promise<number> {
  const extra = argv.includes('--check') ? ['--check'] : [];
  let code = 0;
  for (const language of ['en', 'ja'] as const) {
    code = Math.max(code, await runDefaultTimingMeasure(language, sharedDirectory(), undefined, extra));
  }
  return code;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
      process.exitCode = 1;
    },
  );
}
