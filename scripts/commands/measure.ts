/**
 * `duplexsynth measure`: real two-party recordings -> timing statistics JSON (version 2) and one SVG
 * histogram per distribution beside it (`STATS.plots/*.svg`).
 *
 *     duplexsynth measure --format stereo-wav|candor|magicdata|rttm|m3-events|nxt|textgrid|ctm --out STATS.json
 *       [--language CODE] [--vad silero|webrtc] [--sampler-use pooled|per-direction] [--speakers A,B|most-talk]
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
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Language, ReferenceRecording } from '../../pipeline/model/types.ts';
import { createVoiceActivityDetector } from '../../pipeline/services/vad/voice-activity-detector.ts';
import {
  measureReferenceRecordings,
  renderTimingStatisticsFiles,
  writeTimingStatisticsFiles,
  type MeasurableReferenceRecording,
} from '../../stages/measure-conversations.ts';
import { loadReferenceCorpus, REFERENCE_CORPUS_FORMATS } from '../../corpora/reference-corpora.ts';
import { mergeOverlappingSegments, readRttm, toTwoChannelSegments } from '../../corpora/rttm.ts';
import { applySpeakerMap, readSpeakerMap } from './speaker-map.ts';

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
  options: {
    language: Language;
    vad: VoiceActivityDetectorName;
    tiers?: readonly string[];
    speakers?: MeasureSpeakers;
    /** Stop at the first malformed record instead of skipping it (`--strict`). */
    strict?: boolean;
  },
) => Promise<MeasurableReferenceRecording[]>;

/**
 * `--speakers` of measure (RTTM): two labels in channel order, or `most-talk` (per file the two with
 * most talk time, channel 0 the one with more). Either way the other speakers' speech is excluded
 * speech: measurements touching it are discarded.
 */
export type MeasureSpeakers = readonly [string, string] | 'most-talk';

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
  /** `--speakers A,B` or `--speakers most-talk`: which two of an RTTM file with more speakers (refused without it). */
  speakers?: MeasureSpeakers;
  /** `--strict`: stop at the first malformed corpus record (default: skip it, name it, count it). */
  strict?: boolean;
}

function displayPath(file: string, directory: string): string {
  const relative = path.relative(path.resolve(directory), path.resolve(file));
  return (relative === '' ? '.' : relative).split(path.sep).join('/');
}

/** Quotes an argument for the recorded command when it holds characters a shell would split on. */
function shellWord(word: string): string {
  return /^[\w./:=@+,-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/**
 * Adds the speech of the speakers the RTTM loader left out (a third person on the call) as
 * `excludedSpeech`, so measurements containing it are discarded: `ReferenceRecording` carries only
 * the two kept channels, so the file is read again with corpora/rttm.ts.
 */
async function withDroppedSpeakersSpeech(
  recording: ReferenceRecording,
  speakers: MeasureSpeakers | undefined,
  strict: boolean,
): Promise<MeasurableReferenceRecording> {
  const source = recording.sources[0];
  if (source === undefined) return recording;
  const parsed = await readRttm(source, { strict });
  if (speakers === undefined || speakers === 'most-talk')
    return {
      ...recording,
      excludedSpeech: toTwoChannelSegments(parsed).droppedSpeakers.flatMap((dropped) => dropped.segments),
    };
  const others = parsed.turns
    .filter((turn) => !speakers.includes(turn.speaker))
    .map((turn) => ({ start: turn.start, end: turn.end }));
  return { ...recording, excludedSpeech: mergeOverlappingSegments(others).segments };
}

/**
 * The default loader: the reference corpus registry (corpora/reference-corpora.ts), with
 * - `stereo-wav`: the chosen voice activity detector (pipeline/services/vad), created here and
 *   released afterwards;
 * - `ctm`, `textgrid`, `nxt`, `candor`, `magicdata`: malformed records skipped (listed in `skippedRecords`) unless `strict`;
 * - `rttm`: malformed SPEAKER lines skipped (listed in `skippedRecords`) unless `strict`; duplicates kept by the loader (`skipDuplicates: false`) so that the measure stage skips
 *   and records them in the provenance; a file with a third speaker refused unless `speakers` says
 *   which two to keep (labels, or `most-talk`), the others' speech added as `excludedSpeech`.
 * @throws the registry's and the loaders' errors (RangeError for an unknown format,
 *   ReferenceCorpusError, parser errors naming file and line); VoiceActivityDetectionError when the
 *   detector cannot be loaded
 */
export async function loadReferenceRecordingsForMeasure(
  format: ReferenceFormat,
  paths: readonly string[],
  options: {
    vad: VoiceActivityDetectorName;
    tiers?: readonly string[];
    speakers?: MeasureSpeakers;
    strict?: boolean;
  } = {
    vad: 'silero',
  },
): Promise<MeasurableReferenceRecording[]> {
  switch (format) {
    case 'textgrid':
      return loadReferenceCorpus('textgrid', paths, {
        strict: options.strict ?? false,
        ...(options.tiers === undefined ? {} : { speakerTiers: options.tiers }),
      });
    case 'ctm':
      return loadReferenceCorpus('ctm', paths, { strict: options.strict ?? false });
    case 'nxt':
      return loadReferenceCorpus('nxt', paths, { strict: options.strict ?? false });
    case 'candor':
    case 'magicdata':
      return loadReferenceCorpus(format, paths, { strict: options.strict ?? false });
    case 'stereo-wav': {
      const detector = await createVoiceActivityDetector(options.vad);
      try {
        return await loadReferenceCorpus('stereo-wav', paths, { detector });
      } finally {
        await detector.release?.();
      }
    }
    case 'rttm': {
      const choice =
        options.speakers === undefined
          ? {
              extraSpeakers: 'refuse' as const,
              extraSpeakersHint:
                "--speakers A,B (channel order) or --speakers most-talk (the two who talk most; measurements touching the others' speech are discarded)",
            }
          : options.speakers === 'most-talk'
            ? { extraSpeakers: 'drop' as const }
            : { speakers: options.speakers };
      const strict = options.strict ?? false;
      const loaded = await loadReferenceCorpus('rttm', paths, { skipDuplicates: false, strict, ...choice });
      return Promise.all(loaded.map((recording) => withDroppedSpeakersSpeech(recording, options.speakers, strict)));
    }
    default:
      return loadReferenceCorpus(format, paths);
  }
}

/**
 * Runs the measure command's work (without commander): load, measure, then write or check.
 * @returns the paths written (or, with `check`, the paths that would change; empty when up to date), and
 *   the malformed records the readers skipped (`FILE:LINE: REASON`, each once)
 * @throws Error when the language is missing for a format that does not imply one; the loader's and
 *   the stage's errors (MeasureTurnTakingError, SegmentValidationError, TimingStatisticsError)
 */
export async function runMeasure(
  paths: readonly string[],
  options: MeasureOptions,
  loadRecordings: ReferenceRecordingLoader = loadReferenceRecordingsForMeasure,
): Promise<{ paths: string[]; changed: boolean; skippedRecords: string[] }> {
  const language = options.language ?? FORMAT_LANGUAGE[options.format];
  if (language === undefined) throw new Error(`--language is required for --format ${options.format}`);
  const loaded = await loadRecordings(options.format, paths, {
    language,
    vad: options.vad,
    ...(options.tiers === undefined ? {} : { tiers: options.tiers }),
    ...(options.speakers === undefined ? {} : { speakers: options.speakers }),
    ...(options.strict === undefined ? {} : { strict: options.strict }),
  });
  const skippedRecords = loaded.flatMap((recording) => recording.skippedRecords ?? []);
  const recordings =
    options.speakerMap === undefined
      ? loaded
      : applySpeakerMap(loaded, await readSpeakerMap(options.speakerMap), options.speakerMap).recordings;
  if (recordings.length === 0) {
    throw new BuildInputError(
      `no ${options.format} recordings found in ${paths.map((file) => path.resolve(file)).join(', ')}; give files or folders of that format`,
    );
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
    ...(options.speakers === undefined
      ? []
      : ['--speakers', options.speakers === 'most-talk' ? 'most-talk' : options.speakers.join(',')]),
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
    return { paths: stale, changed: stale.length > 0, skippedRecords };
  }
  return { paths: await writeTimingStatisticsFiles(statistics, options.out), changed: true, skippedRecords };
}
