/**
 * Plain two-party recordings as `ReferenceRecording`s: stereo audio files with one speaker per
 * channel, or pairs of mono files with one speaker each. No transcripts: speech segments come from a
 * voice activity detector run on each channel separately, which the caller passes in (dependency
 * injection: `createVoiceActivityDetector('silero' | 'webrtc')` of pipeline/services/vad, the energy
 * detector of pipeline/audio/speech-regions.ts wrapped in the interface for clean audio, or
 * `FakeVoiceActivityDetector` in tests). Audio is read with `readAudioFile` (WAV, and MP3/FLAC/...
 * through ffmpeg) unless another reader is given.
 *
 * Inputs:
 * - a stereo file: recording id = file name without extension, channel c = file channel c;
 * - a pair of mono files, either given explicitly (`{ id, files: [channel0, channel1] }`) or found by
 *   name: `<id>_0.<ext>` and `<id>_1.<ext>` in the same folder or list;
 * - a folder: its `*.wav` files (sorted by name), each a stereo file or one half of such a pair.
 * A file with more than two channels, a mono file without its partner, or a stereo file given as one
 * half of a pair is an error.
 *
 * Speakers default to `{id}:0` and `{id}:1` (the audio says nothing about who speaks).
 */
import path from 'node:path';
import type { RawAudio } from '../pipeline/audio/raw-audio.ts';
import type { Centiseconds, Channel, ReferenceRecording, SpeechSegment } from '../pipeline/model/types.ts';
import {
  detectChannels,
  detectSpeakerRecordings,
  type VoiceActivityDetector,
} from '../pipeline/services/vad/voice-activity-detector.ts';
import {
  formatCentiseconds,
  framesToCentiseconds,
  isDirectory,
  isFile,
  listFiles,
  readReferenceAudio,
  REFERENCE_CHANNELS,
  ReferenceCorpusError,
  type AudioFileReader,
} from './reference-recording.ts';
import { mergeOverlappingSegments } from './rttm.ts';

/** A pair of mono files, one speaker each. */
export interface MonoFilePair {
  /** Recording id. */
  id: string;
  /** File of channel 0, file of channel 1. */
  files: readonly [string, string];
}

/** One input of {@link prepareStereoWav}: a folder, a stereo file, one half of a `_0`/`_1` pair, or an explicit pair. */
export type StereoWavSource = string | MonoFilePair;

/** Options of {@link prepareStereoWav}. */
export interface StereoWavOptions {
  /** Finds the speech of each channel. Required. */
  detector: VoiceActivityDetector;
  /** Reads an audio file; default {@link readReferenceAudio} (WAV in process, other formats through ffmpeg). */
  readAudio?: AudioFileReader;
  /** Speaker ids per recording id, overriding `{id}:0` / `{id}:1`. */
  channelSpeakers?: Readonly<Record<string, Readonly<Record<Channel, string>>>>;
}

/** File name suffix of the two halves of a mono pair found by name: `<id>_0.wav`, `<id>_1.wav`. */
const PAIR_SUFFIX = /^(.+)_([01])$/;

/** One recording to read: a stereo file, or two mono files. */
type PlannedRecording =
  { id: string; kind: 'stereo'; file: string } | { id: string; kind: 'pair'; files: readonly [string, string] };

/** Expands folders, pairs `<id>_0`/`<id>_1` files, and gives every recording its id. */
async function planRecordings(sources: readonly StereoWavSource[]): Promise<PlannedRecording[]> {
  const entries: StereoWavSource[] = [];
  for (const source of sources) {
    if (typeof source !== 'string') entries.push(source);
    else if (await isDirectory(source)) entries.push(...(await listFiles(source, ['.wav'])));
    else entries.push(path.normalize(source));
  }
  const listed = new Set(entries.filter((entry): entry is string => typeof entry === 'string'));
  const planned: PlannedRecording[] = [];
  const used = new Set<string>();
  for (const entry of entries) {
    if (typeof entry !== 'string') {
      planned.push({ id: entry.id, kind: 'pair', files: entry.files });
      continue;
    }
    if (used.has(entry)) continue;
    const extension = path.extname(entry);
    const base = path.basename(entry, extension);
    const match = PAIR_SUFFIX.exec(base);
    const partner =
      match === null
        ? undefined
        : path.join(path.dirname(entry), `${match[1]}_${match[2] === '0' ? '1' : '0'}${extension}`);
    if (match !== null && partner !== undefined && listed.has(partner)) {
      const [first, second] = match[2] === '0' ? [entry, partner] : [partner, entry];
      planned.push({ id: match[1] as string, kind: 'pair', files: [first, second] });
      used.add(partner);
    } else {
      planned.push({ id: base, kind: 'stereo', file: entry });
    }
    used.add(entry);
  }
  const seen = new Set<string>();
  for (const recording of planned) {
    if (seen.has(recording.id)) {
      throw new ReferenceCorpusError(
        recording.kind === 'stereo' ? recording.file : recording.files[0],
        {},
        `recording id ${JSON.stringify(recording.id)} is given twice`,
      );
    }
    seen.add(recording.id);
  }
  return planned;
}

/** Reads one audio file, naming it in the error when it is missing. */
async function readExistingAudio(file: string, readAudio: AudioFileReader): Promise<RawAudio> {
  if (!(await isFile(file))) throw new ReferenceCorpusError(file, {}, 'audio file not found');
  return readAudio(file);
}

/**
 * Makes one channel's detector output a valid segment list: checked to be integer centiseconds,
 * clipped to [0, durationCs], empty segments dropped, overlapping or abutting ones merged.
 *
 * @returns the segments and what had to be fixed (for the notes).
 * @throws ReferenceCorpusError naming the file when the detector returned non-integer times.
 */
function sanitizeSegments(
  detected: readonly SpeechSegment[],
  durationCs: Centiseconds,
  file: string,
  detectorId: string,
): { segments: SpeechSegment[]; fixes: string[] } {
  const fixes: string[] = [];
  for (const segment of detected) {
    if (!Number.isSafeInteger(segment.start) || !Number.isSafeInteger(segment.end)) {
      throw new ReferenceCorpusError(
        file,
        {},
        `the voice activity detector ${detectorId} returned [${segment.start}, ${segment.end}], not integer centiseconds`,
      );
    }
  }
  const clipped = detected.map((segment) => ({
    start: Math.max(0, segment.start),
    end: Math.min(durationCs, segment.end),
  }));
  const clippedCount = clipped.filter(
    (segment, index) => segment.start !== detected[index]?.start || segment.end !== detected[index]?.end,
  ).length;
  if (clippedCount > 0) fixes.push(`${clippedCount} segments clipped to the recording`);
  const nonEmpty = clipped.filter((segment) => segment.end > segment.start);
  if (nonEmpty.length < clipped.length) fixes.push(`${clipped.length - nonEmpty.length} empty segments dropped`);
  const merged = mergeOverlappingSegments(nonEmpty);
  if (merged.mergedCount > 0) fixes.push(`${merged.mergedCount} overlapping or abutting segments merged`);
  return { segments: merged.segments, fixes };
}

/** Total length of segments in centiseconds. */
function talkTime(segments: readonly SpeechSegment[]): Centiseconds {
  return segments.reduce((sum, segment) => sum + segment.end - segment.start, 0);
}

/**
 * Loads one planned recording: reads the audio, runs the detector per channel.
 */
async function loadRecording(planned: PlannedRecording, options: StereoWavOptions): Promise<ReferenceRecording> {
  const readAudio = options.readAudio ?? readReferenceAudio;
  const detector = options.detector;
  const notes: string[] = [];
  let lengths: Centiseconds[];
  let detected: Record<Channel, SpeechSegment[]>;
  let files: [string, string];
  if (planned.kind === 'stereo') {
    const audio = await readExistingAudio(planned.file, readAudio);
    if (audio.channels.length !== 2) {
      const hint =
        audio.channels.length === 1
          ? ` (a mono file needs a partner: name the two files ${planned.id}_0${path.extname(planned.file)} and ${planned.id}_1${path.extname(planned.file)})`
          : '';
      throw new ReferenceCorpusError(
        planned.file,
        {},
        `has ${audio.channels.length} channels, expected 2 (one speaker per channel)${hint}`,
      );
    }
    lengths = [framesToCentiseconds(audio.channels[0]?.length ?? 0, audio.sampleRate)];
    detected = await detectChannels(audio, detector);
    files = [planned.file, planned.file];
    notes.push(`stereo file ${path.basename(planned.file)}: channel 0 = left, channel 1 = right`);
  } else {
    const pair: RawAudio[] = [];
    for (const file of planned.files) {
      const audio = await readExistingAudio(file, readAudio);
      if (audio.channels.length !== 1)
        throw new ReferenceCorpusError(
          file,
          {},
          `has ${audio.channels.length} channels, expected 1 (one mono file per speaker)`,
        );
      pair.push(audio);
    }
    const [first, second] = pair as [RawAudio, RawAudio];
    lengths = pair.map((audio) => framesToCentiseconds(audio.channels[0]?.length ?? 0, audio.sampleRate));
    detected = await detectSpeakerRecordings([first, second], detector);
    files = [planned.files[0], planned.files[1]];
    notes.push(`mono pair: channel 0 = ${path.basename(files[0])}, channel 1 = ${path.basename(files[1])}`);
    if (Math.max(...lengths) - Math.min(...lengths) > 100) {
      notes.push(`the two files differ in length: ${lengths.map(formatCentiseconds).join(' s and ')} s`);
    }
  }
  const durationCs = Math.max(...lengths);
  const segments: Record<Channel, SpeechSegment[]> = { 0: [], 1: [] };
  for (const channel of REFERENCE_CHANNELS) {
    const sanitized = sanitizeSegments(detected[channel], durationCs, files[channel], detector.id);
    segments[channel] = sanitized.segments;
    if (sanitized.fixes.length > 0) notes.push(`channel ${channel}: ${sanitized.fixes.join(', ')}`);
  }
  for (const channel of REFERENCE_CHANNELS) {
    const fraction = durationCs === 0 ? 0 : talkTime(segments[channel]) / durationCs;
    notes.push(
      `channel ${channel}: ${segments[channel].length} speech segments from voice activity detection (${detector.id}), talk ${(fraction * 100).toFixed(1)}% of the recording`,
    );
  }
  notes.push('no transcripts: no supervisions');
  const channelSpeakers = options.channelSpeakers?.[planned.id] ?? { 0: `${planned.id}:0`, 1: `${planned.id}:1` };
  return {
    id: planned.id,
    format: 'stereo-wav',
    sources: planned.kind === 'stereo' ? [planned.file] : [...planned.files],
    durationCs,
    segments,
    channelSpeakers: { 0: channelSpeakers[0], 1: channelSpeakers[1] },
    audio: REFERENCE_CHANNELS.map((channel) => ({ path: files[channel], channel })),
    notes,
  };
}

/**
 * Loads stereo recordings (or mono pairs), finding the speech of each channel with the injected
 * detector.
 *
 * @param sources folders, files and explicit pairs (see the file comment); recordings come out in
 *   this order (a folder's files by name).
 * @param options `detector` (required), `readAudio`, `channelSpeakers`.
 * @returns one `ReferenceRecording` per stereo file or pair (`format: 'stereo-wav'`), with
 *   `durationCs` = the longer channel's length rounded up to a centisecond, segments in integer
 *   centiseconds, audio entries, no supervisions.
 * @throws ReferenceCorpusError naming the file when it is missing, has the wrong number of channels,
 *   or a recording id is given twice, or when the detector returns non-integer times; the reader's
 *   error (AudioFileError) when a file cannot be decoded; the detector's (VoiceActivityDetectionError).
 */
export async function prepareStereoWav(
  sources: readonly StereoWavSource[],
  options: StereoWavOptions,
): Promise<ReferenceRecording[]> {
  const recordings: ReferenceRecording[] = [];
  for (const planned of await planRecordings(sources)) recordings.push(await loadRecording(planned, options));
  return recordings;
}
