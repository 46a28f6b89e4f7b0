/**
 * Regenerates the shipped timing statistics and their histograms (`*.timing.plots/*.svg`) in
 * `pipeline/timeline/defaults/` by running `duplexsynth measure` (scripts/commands/measure.ts, the
 * same code path as the command line) on real speaker timings in the shared folder
 * (`DUPLEXSYNTH_SHARED`, default `../shared`):
 * - `en.timing.json` (the English default): the 128 HCRC Map Task dialogues, word-level NXT timings
 *   (`corpora/reference-timing/maptask`), so speaker changes are measured to the centisecond;
 * - `ja.timing.json` (the Japanese default): CallFriend Japanese, utterance-level RTTM;
 * - `en.callfriend.timing.json` (an English alternative for `timeline.statistics.en`): CallFriend
 *   North American English, utterance-level RTTM; its 18 % atom at 0.00 s (abutting transcript
 *   bullets) is spread over ± 0.10 s by the sampler (timing-statistics.ts `censorAtoms`).
 *
 *     npx tsx scripts/derive-default-timing.ts            # write every file
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
import { registerMeasureCommand } from './commands/measure-command.ts';

/** How to rerun this script, recorded in the files' notes. */
export const DERIVE_DEFAULT_TIMING_COMMAND = 'npx tsx scripts/derive-default-timing.ts';

/** The shipped statistics files: `{language}` (the language's default) or `{language}.{corpus}` (an alternative). */
export type DefaultTimingName = string;
export const DEFAULT_TIMING_NAMES: readonly DefaultTimingName[] = ['en', 'ja', 'en.callfriend', 'zh', 'de', 'prior'];

const SHARED_FOLDER_NAME = 'the shared folder (DUPLEXSYNTH_SHARED, default ../shared beside the project root)';
const REGENERATE = `Regenerate with ${DERIVE_DEFAULT_TIMING_COMMAND} (runs the command above on the shared folder).`;
const CALLFRIEND_LICENCE = 'CC BY-NC-SA 3.0';
const CALLFRIEND_ORIGIN =
  'TalkBank CABank CHAT files converted to RTTM by pthavarasa/CallHome-CallFriend-bergmann, commit 9031a9c';
const CALLFRIEND_CHANNELS =
  'per call, channel 0 = the speaker with more talk time, channel 1 = the other (corpora/rttm.ts); the calls are ' +
  'symmetric conversations, so the direction carries no user/system role and the sampler pools both directions';
const CALLFRIEND_NOTES = [
  'Times come from utterance-level CHAT bullets, not voice activity detection: bullets of different speakers often ' +
    'abut or overlap where the speech itself does not, so overlaps are somewhat overstated.',
  'Speakers beyond the two with the most talk time were dropped; speaker changes, TURN_HOLDs and SHORTPAUSEs ' +
    'containing their speech were discarded (discardedNearExcludedSpeech).',
  REGENERATE,
];

/** What each shipped file is measured from, relative to the shared folder. */
export const DEFAULT_TIMING_SOURCES: Record<
  DefaultTimingName,
  {
    language: Language;
    format: string;
    folder: string | string[];
    corpus: string;
    licence: string;
    origin: string;
    channelMapping: string;
    timingResolution: string;
    notes: string[];
  }
> = {
  en: {
    language: 'en',
    format: 'nxt',
    folder: 'corpora/reference-timing/maptask',
    corpus: 'HCRC Map Task Corpus (Scottish English, 128 task-oriented two-party dialogues), word-level timed units',
    licence: 'CC BY-NC-SA 2.5',
    origin:
      'HCRC Map Task Corpus Annotations v2.1 (University of Edinburgh) via pastav/HCRC_Map_Task, commit cb3701b, folder maptaskv2-1/Data/timed-units',
    channelMapping:
      'per dialogue, channel 0 = the instruction giver (q*.g), channel 1 = the follower (q*.f) (corpora/nxt.ts); the sampler pools both ' +
      'directions, so the roles of the map task do not become user/system roles',
    timingResolution: '0.01',
    notes: [
      'Word-level times (NXT timed units, 4 decimals): words of one speaker that touch or overlap form one speech segment, noise ' +
        'and silence elements are not speech, and speech segments become IPUs by the docs/events.md rules, so floor transfers are ' +
        'measured to the centisecond (no transcript-bullet atom at 0.00 s).',
      'Task-oriented dialogue over maps (64 dialogues with eye contact, 64 without): gaps are somewhat longer than in casual conversation.',
      'CallFriend English (utterance-level telephone calls) is shipped as an alternative: en.callfriend.timing.json.',
      REGENERATE,
    ],
  },
  ja: {
    language: 'ja',
    format: 'rttm',
    folder: 'corpora/reference-timing/rttm/ja',
    corpus: 'CallFriend Japanese (TalkBank CABank), two-party telephone calls',
    licence: CALLFRIEND_LICENCE,
    origin: CALLFRIEND_ORIGIN,
    channelMapping: CALLFRIEND_CHANNELS,
    timingResolution: '0.1',
    notes: CALLFRIEND_NOTES,
  },
  'en.callfriend': {
    language: 'en',
    format: 'rttm',
    folder: 'corpora/reference-timing/rttm/en',
    corpus: 'CallFriend North American English (TalkBank CABank), two-party telephone calls',
    licence: CALLFRIEND_LICENCE,
    origin: CALLFRIEND_ORIGIN,
    channelMapping: CALLFRIEND_CHANNELS,
    timingResolution: '0.1',
    notes: CALLFRIEND_NOTES,
  },
  zh: {
    language: 'zh',
    format: 'rttm',
    folder: 'corpora/reference-timing/rttm/zh',
    corpus: 'CallHome Mandarin Chinese (TalkBank CABank), 140 two-party telephone calls',
    licence: CALLFRIEND_LICENCE,
    origin: CALLFRIEND_ORIGIN,
    channelMapping: CALLFRIEND_CHANNELS,
    timingResolution: '0.1',
    notes: CALLFRIEND_NOTES,
  },
  de: {
    language: 'de',
    format: 'rttm',
    folder: 'corpora/reference-timing/rttm/de',
    corpus: 'CallHome German (TalkBank CABank), 120 two-party telephone calls',
    licence: CALLFRIEND_LICENCE,
    origin: CALLFRIEND_ORIGIN,
    channelMapping: CALLFRIEND_CHANNELS,
    timingResolution: '0.1',
    notes: CALLFRIEND_NOTES,
  },
  // The cross-language prior, for a language without measured statistics: the telephone calls of four
  // languages pooled. Stivers et al. 2009 (PNAS 106:10587, polar-question offsets in 10 languages) found
  // one shared distribution (mode 0-200 ms in every language; means from Japanese +7 ms to Danish +469 ms),
  // so a pool of several languages' calls stands in for one not measured yet.
  prior: {
    language: 'mul',
    format: 'rttm',
    folder: [
      'corpora/reference-timing/rttm/en',
      'corpora/reference-timing/rttm/ja',
      'corpora/reference-timing/rttm/zh',
      'corpora/reference-timing/rttm/de',
    ],
    corpus:
      'Cross-language prior: CallFriend English (31) and Japanese (31), CallHome Mandarin Chinese (140) and German (120) telephone calls (TalkBank CABank), pooled',
    licence: CALLFRIEND_LICENCE,
    origin: CALLFRIEND_ORIGIN,
    channelMapping: CALLFRIEND_CHANNELS,
    timingResolution: '0.1',
    notes: [
      'Used for a language whose pack has no measured statistics (timing.statistics: null), with a warning and a line in the summary. ' +
        'Stivers et al. 2009, "Universals and cultural variation in turn-taking in conversation", PNAS 106(26):10587-10592: ' +
        'response offsets to polar questions in 10 languages share one distribution (mode 0-200 ms in each; mean from +7 ms, Japanese, to +469 ms, Danish).',
      ...CALLFRIEND_NOTES,
    ],
  },
};

/** Path of a shipped statistics file. */
export function defaultTimingFile(name: DefaultTimingName): string {
  return !name.includes('.')
    ? defaultTimingStatisticsPath(name)
    : path.join(path.dirname(defaultTimingStatisticsPath('en')), `${name}.timing.json`);
}

/**
 * The `duplexsynth measure` arguments (after `measure`) that produce one shipped file.
 * @param sharedRoot the shared folder
 * @param out the statistics file to write (default: the shipped file)
 */
export function defaultTimingArguments(
  name: DefaultTimingName,
  sharedRoot: string,
  out = defaultTimingFile(name),
): string[] {
  const source = DEFAULT_TIMING_SOURCES[name];
  if (!source)
    throw new Error(`no shipped timing statistics named ${name} (known: ${DEFAULT_TIMING_NAMES.join(', ')})`);
  return [
    '--format',
    source.format,
    '--language',
    source.language,
    '--sampler-use',
    'pooled',
    '--timing-resolution',
    source.timingResolution,
    // a few calls have a third person on the line: keep the two who talk most, discard what touches the others' speech
    ...(source.format === 'rttm' ? ['--speakers', 'most-talk'] : []),
    '--corpus',
    source.corpus,
    '--licence',
    source.licence,
    '--origin',
    source.origin,
    '--channel-mapping',
    source.channelMapping,
    '--relative-to',
    sharedRoot,
    '--relative-to-name',
    SHARED_FOLDER_NAME,
    '--note',
    ...source.notes,
    '--out',
    out,
    ...(Array.isArray(source.folder) ? source.folder : [source.folder]).map((folder) => path.join(sharedRoot, folder)),
  ];
}

/**
 * Runs `duplexsynth measure` with `defaultTimingArguments` through commander.
 * @param extra more arguments, e.g. `--check`
 * @returns the exit code the command set (0, or 1 when `--check` found a stale file)
 * @throws the command's errors (see scripts/commands/measure.ts `runMeasure`)
 */
export async function runDefaultTimingMeasure(
  name: DefaultTimingName,
  sharedRoot: string,
  out?: string,
  extra: string[] = [],
): Promise<number> {
  const program = new Command('duplexsynth').exitOverride();
  registerMeasureCommand(program);
  const previous = process.exitCode;
  process.exitCode = undefined;
  try {
    await program.parseAsync(['measure', ...extra, ...defaultTimingArguments(name, sharedRoot, out)], { from: 'user' });
    return Number(process.exitCode ?? 0);
  } finally {
    process.exitCode = previous;
  }
}

async function main(argv: readonly string[]): Promise<number> {
  const extra = argv.includes('--check') ? ['--check'] : [];
  let code = 0;
  for (const name of DEFAULT_TIMING_NAMES) {
    code = Math.max(code, await runDefaultTimingMeasure(name, sharedDirectory(), undefined, extra));
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
