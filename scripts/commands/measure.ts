/**
 * `duplexsynth measure`: real two-party recordings -> timing statistics JSON (version 2) and one SVG
 * histogram per distribution beside it (`STATS.plots/*.svg`).
 *
 *     duplexsynth measure --format stereo-wav|candor|magicdata|rttm|m3-events|nxt|textgrid|ctm --out STATS.json
 *       [--language CODE] [--vad silero|webrtc] [--sampler-use pooled|per-direction]
 *       [--corpus TEXT] [--licence TEXT] [--origin TEXT] [--channel-mapping TEXT] [--note TEXT...]
 *       [--relative-to DIR] [--relative-to-name TEXT] [--check] PATH...
 *
 * The recordings are read by the reference corpus loaders (corpora/), measured by the stage
 * `stages/measure-conversations.ts`, and written deterministically. `--check` writes nothing and exits
 * with code 1 when a file would change (used to keep the shipped defaults in step:
 * scripts/derive-default-timing.ts).
 *
 * The `command` recorded in the file's provenance is this command line in a machine-independent form:
 * the measuring options, `--out` as a file name only, and the PATHs relative to `--relative-to`
 * (descriptive options are recorded in their own provenance fields).
 */
import { BuildInputError } from '../../pipeline/model/build-errors.ts';
import { requireInputPaths } from '../../pipeline/run/command-paths.ts';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { Command, InvalidArgumentError, Option } from 'commander';
import type { Language, ReferenceRecording } from '../../pipeline/model/types.ts';
import { createVoiceActivityDetector } from '../../pipeline/services/vad/voice-activity-detector.ts';
import {
  measureReferenceRecordings,
  renderTimingStatisticsFiles,
  writeTimingStatisticsFiles,
  type MeasurableReferenceRecording,
} from '../../stages/measure-conversations.ts';
import { loadReferenceCorpus, REFERENCE_CORPUS_FORMATS } from '../../corpora/reference-corpora.ts';
import { readRttm, toTwoChannelSegments } from '../../corpora/rttm.ts';
import { checkFolder } from '../../pipeline/run/output-checks.ts';
import { applySpeakerMap, readSpeakerMap } from './speaker-map.ts';
import { languageCode } from './option-parsers.ts';

/** Reference corpus formats the command reads (the registry's, corpora/reference-corpora.ts). */
export const REFERENCE_FORMATS = REFERENCE_CORPUS_FORMATS;
/** One of `REFERENCE_FORMATS`. */
export type ReferenceFormat = (typeof REFERENCE_FORMATS)[number];
/** Voice activity detectors for audio formats. */
export type VoiceActivityDetectorName = 'silero' | 'webrtc';

/** Reads the recordings of one format from the given files or folders. */
export type ReferenceRecordingLoader = (
  format: ReferenceFormat,
  paths: readonly string[],
  options: { language: Language; vad: VoiceActivityDetectorName; tiers?: readonly string[] },
) => Promise<MeasurableReferenceRecording[]>;

/** Language of a format whose corpus has only one (CANDOR English, MagicData Japanese); else none. */
const FORMAT_LANGUAGE: Partial<Record<ReferenceFormat, Language>> = { candor: 'en', magicdata: 'ja' };
/** Formats whose segments come from voice activity detection on audio. */
const AUDIO_FORMATS: ReadonlySet<ReferenceFormat> = new Set<ReferenceFormat>(['stereo-wav']);

/** Options of the measure command (as commander parses them), see the module comment. */
export interface MeasureOptions {
  format: ReferenceFormat;
  out: string;
  language?: Language;
  vad: VoiceActivityDetectorName;
  samplerUse: 'pooled' | 'per-direction';
  corpus?: string;
  licence: string;
  origin: string;
  channelMapping: string;
  note: string[];
  relativeTo: string;
  relativeToName?: string;
  /** Timing resolution of the source times (seconds): atoms are spread over ± this much by the sampler. */
  timingResolution?: number;
  check?: boolean;
  /** `--speaker-map FILE`: recording/channel -> speaker id (speaker-map.ts). */
  speakerMap?: string;
  /** `--tiers`: the TextGrid speaker tiers in channel order (corpora/textgrid.ts `speakerTiers`). */
  tiers?: string[];
}

function displayPath(file: string, directory: string): string {
  const relative = path.relative(path.resolve(directory), path.resolve(file));
  return (relative === '' ? '.' : relative).split(path.sep).join('/');
}

/** Quotes an argument for the recorded command when it holds characters a shell would split on. */
function shellWord(word: string): string {
  return /^[\w./:=@+-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/**
 * Adds the speech of the speakers the RTTM loader dropped (a third person on the call) as
 * `excludedSpeech`, so measurements containing it are discarded: `ReferenceRecording` carries only
 * the two kept channels, so the file is read again with corpora/rttm.ts.
 */
async function withDroppedSpeakersSpeech(recording: ReferenceRecording): Promise<MeasurableReferenceRecording> {
  const source = recording.sources[0];
  if (source === undefined) return recording;
  const twoChannel = toTwoChannelSegments(await readRttm(source));
  return { ...recording, excludedSpeech: twoChannel.droppedSpeakers.flatMap((dropped) => dropped.segments) };
}

/**
 * The default loader: the reference corpus registry (corpora/reference-corpora.ts), with
 * - `stereo-wav`: the chosen voice activity detector (pipeline/services/vad), created here and
 *   released afterwards;
 * - `rttm`: duplicates kept by the loader (`skipDuplicates: false`) so that the measure stage skips
 *   and records them in the provenance, and the dropped speakers' speech added as `excludedSpeech`.
 * @throws the registry's and the loaders' errors (RangeError for an unknown format,
 *   ReferenceCorpusError, parser errors naming file and line); VoiceActivityDetectionError when the
 *   detector cannot be loaded
 */
export async function loadReferenceRecordingsForMeasure(
  format: ReferenceFormat,
  paths: readonly string[],
  options: { vad: VoiceActivityDetectorName; tiers?: readonly string[] } = { vad: 'silero' },
): Promise<MeasurableReferenceRecording[]> {
  switch (format) {
    case 'textgrid':
      return loadReferenceCorpus('textgrid', paths, options.tiers === undefined ? {} : { speakerTiers: options.tiers });
    case 'stereo-wav': {
      const detector = await createVoiceActivityDetector(options.vad);
      try {
        return await loadReferenceCorpus('stereo-wav', paths, { detector });
      } finally {
        await detector.release?.();
      }
    }
    case 'rttm':
      return Promise.all((await loadReferenceCorpus('rttm', paths, { skipDuplicates: false })).map(withDroppedSpeakersSpeech));
    default:
      return loadReferenceCorpus(format, paths);
  }
}

/**
 * Runs the measure command's work (without commander): load, measure, then write or check.
 * @returns the paths written (or, with `check`, the paths that would change; empty when up to date)
 * @throws Error when the language is missing for a format that does not imply one; the loader's and
 *   the stage's errors (MeasureTurnTakingError, SegmentValidationError, TimingStatisticsError)
 */
export async function runMeasure(
  paths: readonly string[],
  options: MeasureOptions,
  loadRecordings: ReferenceRecordingLoader = loadReferenceRecordingsForMeasure,
): Promise<{ paths: string[]; changed: boolean }> {
  const language = options.language ?? FORMAT_LANGUAGE[options.format];
  if (language === undefined) throw new Error(`--language is required for --format ${options.format}`);
  const loaded = await loadRecordings(options.format, paths, { language, vad: options.vad, ...(options.tiers === undefined ? {} : { tiers: options.tiers }) });
  const recordings = options.speakerMap === undefined ? loaded : applySpeakerMap(loaded, await readSpeakerMap(options.speakerMap), options.speakerMap).recordings;
  if (recordings.length === 0) {
    throw new BuildInputError(`no ${options.format} recordings found in ${paths.map((file) => path.resolve(file)).join(', ')}; give files or folders of that format`);
  }
  const usesVad = AUDIO_FORMATS.has(options.format);
  const commandWords = [
    'duplexsynth',
    'measure',
    '--format',
    options.format,
    '--language',
    language,
    ...(usesVad ? ['--vad', options.vad] : []),
    ...(options.tiers === undefined ? [] : ['--tiers', ...options.tiers]),
    '--sampler-use',
    options.samplerUse,
    ...(options.timingResolution !== undefined ? ['--timing-resolution', String(options.timingResolution)] : []),
    '--out',
    path.basename(options.out),
    ...paths.map((file) => displayPath(file, options.relativeTo)),
  ];
  const statistics = measureReferenceRecordings({
    recordings,
    language,
    format: options.format,
    samplerUse: options.samplerUse,
    ...(options.timingResolution !== undefined ? { timingResolutionSeconds: options.timingResolution } : {}),
    provenance: {
      corpus: options.corpus ?? `${options.format} recordings`,
      licence: options.licence,
      origin: options.origin,
      pathsRelativeTo: { directory: options.relativeTo, name: options.relativeToName ?? options.relativeTo },
      channelMapping: options.channelMapping,
      voiceActivityDetection: usesVad ? options.vad : null,
      command: commandWords.map(shellWord).join(' '),
      notes: options.note,
    },
  });
  if (options.check) {
    const stale: string[] = [];
    for (const [file, text] of await renderTimingStatisticsFiles(statistics, options.out)) {
      const current = await readFile(file, 'utf8').catch(() => null);
      if (current !== text) stale.push(file);
    }
    return { paths: stale, changed: stale.length > 0 };
  }
  return { paths: await writeTimingStatisticsFiles(statistics, options.out), changed: true };
}

/**
 * Adds the `measure` command to a commander program (the lead wires it into scripts/cli.ts).
 * Prints the written paths, one per line; with `--check`, prints the stale ones to stderr and sets
 * exit code 1 when any.
 * @param loadRecordings injectable loader (tests); default: the reference corpus loaders
 * @returns the `measure` command
 */
export function registerMeasureCommand(program: Command, loadRecordings?: ReferenceRecordingLoader): Command {
  return program
    .command('measure')
    .description('measure turn-taking timing of real two-party recordings into timing statistics (JSON + SVG histograms)')
    .argument('<path...>', 'recording files or folders of the format')
    .addOption(new Option('--format <format>', 'reference corpus format').choices(REFERENCE_FORMATS).makeOptionMandatory())
    .requiredOption('--out <file>', 'statistics JSON to write; histograms go to <file without .json>.plots/')
    .addOption(new Option('--language <language>', 'language of the recordings (a BCP-47 code such as en, ja, zh, de; default: en for candor, ja for magicdata)').argParser(languageCode))
    .addOption(new Option('--vad <detector>', 'voice activity detector for audio formats').choices(['silero', 'webrtc']).default('silero'))
    .option('--tiers <name...>', 'textgrid: the speaker tiers in channel order')
    .option('--speaker-map <file>', 'tab-separated recording, channel (0, 1 or the corpus label), speaker id')
    .addOption(
      new Option('--sampler-use <use>', 'pooled: both directions as one distribution (symmetric conversations); per-direction: channels have roles')
        .choices(['pooled', 'per-direction'])
        .default('pooled'),
    )
    .option('--corpus <text>', 'what the recordings are (written into the provenance)')
    .option('--licence <text>', 'licence of the recordings', 'not stated')
    .option('--origin <text>', 'where the recordings come from', 'not stated')
    .option('--channel-mapping <text>', 'how speakers were put on channels 0 and 1', 'as assigned by the corpus loader (channelSpeakers)')
    .option('--note <text...>', 'notes to record in the provenance', [])
    .option('--relative-to <dir>', 'write source paths relative to this folder', '.')
    .option('--relative-to-name <text>', 'what --relative-to is, as written into the file (default: the folder as given)')
    .option(
      '--timing-resolution <seconds>',
      'resolution of the source times: a value holding more than 2 % of a list (an atom) is spread over ± this much by the sampler (default 0.1)',
      (value: string) => {
        const seconds = Number(value);
        if (!Number.isFinite(seconds) || seconds < 0.01 || Math.abs(seconds * 100 - Math.round(seconds * 100)) > 1e-9) throw new InvalidArgumentError('a number of seconds ≥ 0.01 with at most 2 decimals');
        return seconds;
      },
    )
    .option('--check', 'write nothing; exit 1 when a file would change')
    .action(async (paths: string[], options: MeasureOptions) => {
      await requireInputPaths(paths, `${options.format} recordings`); // a missing path: one line, nothing written
      if (!options.check) await checkFolder(path.dirname(path.resolve(options.out)), 'statistics folder'); // /proc, a read-only disk: one line
      const result = await runMeasure(paths, options, loadRecordings);
      if (options.check) {
        for (const file of result.paths) console.error(`${file}: out of date`);
        if (result.changed) process.exitCode = 1;
        return;
      }
      for (const file of result.paths) console.log(file);
    });
}
