/**
 * `duplexsynth chat`: real two-party recordings -> a Chat-track dataset in the benchmark layout,
 * `OUT/data/{lang}/chat/{dataset}/` (docs/dataset-format.md "One dataset folder"):
 *
 *     duplexsynth chat --format ctm|textgrid|nxt|candor|magicdata|... --language CODE --out OUT
 *       [--dataset NAME] [--audio DIR] [--tiers NAME...] [--speakers A,B] [--speaker-map FILE]
 *       [--allow-upsample] [--test-hours H] [--no-score] PATH...
 *
 * Steps: load the recordings with their timings (any loader of corpora/, audio required), cut each
 * into segments of about 120 s without splitting an utterance (stages/cut-chat-segments.ts), write per
 * segment a 2-channel PCM16 WAV, its events line (docs/events.md, both channels evaluated: the
 * benchmark's `--channels 0,1`), `txt_align` from the word timings, and metadata (speakers from the
 * corpus); commit the dataset atomically (stages/render-dataset.ts `DatasetWriter`), then score
 * dialogue-level DNSMOS (stages/score-quality.ts) and split test/dev speaker-disjoint by whole
 * speaker groups, like the MT-QA track (stages/split-dev-test.ts `splitDatasets`).
 *
 * A recording that cannot be used (no audio, audio shorter than its timings) is listed with its
 * reason in `summary.json` (`failed`) and the others go on; exit code 3 when any failed. What cannot
 * become one speaker per channel (a mono mix, a missing or mismatched speaker file, a third RTTM speaker
 * without `--speakers`) and audio below 16 kHz without `--allow-upsample` are refused before anything
 * is written (recording-checks.ts; one line, exit code 2). The manifest records how the events were
 * derived (`eventDerivation`), which `duplexsynth verify` follows (pipeline/run/verify-chat-events.ts).
 */
import path from 'node:path';
import { formatEventsLine } from '../../pipeline/events/index.ts';
import type { Channel, Language, ReferenceRecording } from '../../pipeline/model/types.ts';
import { readReferenceAudio } from '../../corpora/reference-recording.ts';
import type { ReferenceCorpusFormat } from '../../corpora/reference-corpus-formats.ts';
import { type RawAudio } from '../../pipeline/audio/raw-audio.ts';
import { resample } from '../../pipeline/audio/resample.ts';
import {
  chatSegmentContent,
  chatSegmentSpans,
  DEFAULT_CHAT_SEGMENT_OPTIONS,
  type ChatSegmentContent,
} from '../../stages/cut-chat-segments.ts';
import { DatasetWriter, datasetRelativePath } from '../../stages/render-dataset.ts';
import { scoreDatasetQuality } from '../../stages/score-quality.ts';
import type { RecordingMosScorer } from '../../pipeline/services/mos/mos-scorer.ts';
import { splitDatasets } from '../../stages/split-dev-test.ts';
import { loadTranscribedRecordings } from './prompts.ts';
import { chatDialogueMetadataSchema } from '../../pipeline/model/dialogue-metadata.ts';
import { chatSummarySchema, type ChatSummary } from '../../pipeline/model/dataset-summary.ts';
import type { EventDerivation } from '../../pipeline/model/dataset-manifest.ts';
import { decodeWav, encodeWavPcm16 } from '../../pipeline/audio/wav.ts';
import {
  createVoiceActivityDetector,
  detectTrackSpeech,
  voiceActivitySettings,
  type VoiceActivityDetector,
} from '../../pipeline/services/vad/voice-activity-detector.ts';
import { formatRecord } from '../../pipeline/storage/json-records.ts';
import { checkRecordingAudio, MINIMUM_SAMPLE_RATE, RecordingRefusedError } from './recording-checks.ts';

/** Options of the chat command (as commander parses them). */
export interface ChatOptions {
  format: ReferenceCorpusFormat;
  language: Language;
  out: string;
  dataset?: string;
  audio?: string;
  tiers?: string[];
  vad: 'silero' | 'webrtc';
  testHours: number;
  /** `--speakers A,B`: the two speakers of an RTTM file with more, in channel order (else such a file is refused). */
  speakers?: [string, string];
  /** `--strict`: stop at the first malformed corpus record (default: skip it, name it, count it in the notes). */
  strict?: boolean;
  /** `--speaker-map FILE`: recording/channel -> speaker id (speaker-map.ts), for the speaker-disjoint split. */
  speakerMap?: string;
  /** `--allow-upsample`: take audio below 16 kHz, upsampled to 16 kHz (recorded in the summary); else refused. */
  allowUpsample?: boolean;
  /** false with `--no-score`: no DNSMOS, no split. */
  score: boolean;
  log?: (line: string) => void;
  /** A DNSMOS scorer to use instead of the models (stages/score-quality.ts `dnsmosScorer`). */
  dnsmosScorer?: RecordingMosScorer;
}

/** What {@link runChat} wrote. */
export interface ChatResult {
  directory: string;
  segments: { id: string; recording: string; start: number; end: number; durationSeconds: number }[];
  failed: { id: string; stage: string; reason: string }[];
  notes: string[];
  /** Malformed corpus records the readers skipped (`FILE:LINE: REASON`, each once; also in `notes`). */
  skippedRecords: string[];
  /** Written split files (`test.jsonl`, `dev.jsonl`, ...) when scored. */
  splits: Record<string, string[]>;
}

/**
 * Both channels of a recording as two equal-length tracks at one sample rate (channel 0's file rate,
 * or 16 kHz for lower rates, which checkRecordingAudio let through only with `--allow-upsample`).
 * @throws RecordingRefusedError when both channels hold the same samples (a mono mix stored as stereo).
 */
async function recordingTracks(
  recording: ReferenceRecording,
): Promise<{ tracks: [Float32Array, Float32Array]; sampleRate: number }> {
  const entries = ([0, 1] as const).map((channel) =>
    (recording.audio ?? []).find((entry) => entry.channel === channel),
  );
  if (entries.some((entry) => entry === undefined)) throw new Error('no audio for both channels');
  const decoded = new Map<string, RawAudio>();
  for (const entry of entries)
    if (!decoded.has(entry!.path)) decoded.set(entry!.path, await readReferenceAudio(entry!.path));
  const channelOf = (channel: Channel): RawAudio => {
    const audio = decoded.get(entries[channel]!.path) as RawAudio;
    const samples = audio.channels.length >= 2 ? audio.channels[channel] : audio.channels[0];
    if (samples === undefined) throw new Error(`${entries[channel]!.path} has no audio channels`);
    return { channels: [samples], sampleRate: audio.sampleRate };
  };
  let first = channelOf(0);
  let second = channelOf(1);
  if (first.sampleRate < MINIMUM_SAMPLE_RATE) first = await resample(first, MINIMUM_SAMPLE_RATE, 'best');
  if (second.sampleRate !== first.sampleRate) second = await resample(second, first.sampleRate, 'best');
  const [track0, track1] = [first.channels[0] as Float32Array, second.channels[0] as Float32Array];
  if (track0.length === track1.length && track0.every((value, index) => value === track1[index])) {
    throw new RecordingRefusedError(
      `chat: recording ${recording.id}: both channels of ${entries[0]!.path} hold the same samples (a mono mix stored as stereo); the Chat track needs one speaker per channel`,
    );
  }
  return { tracks: [track0, track1], sampleRate: first.sampleRate };
}

/**
 * Runs the chat command's work (module comment).
 * @returns the dataset folder, the segments written, the failed recordings and the notes.
 * @throws the loaders' errors (a malformed timing file names file and line); NothingBuiltError when no
 *   segment could be cut; the scorer's and the split stage's errors.
 */
export async function runChat(paths: readonly string[], options: ChatOptions): Promise<ChatResult> {
  // Without a transcript the events come from the voice activity detector: the one that found where to
  // cut also derives each segment's events from the segment's written samples, as `verify` does again.
  const detector = options.format === 'stereo-wav' ? await createVoiceActivityDetector(options.vad) : undefined;
  try {
    return await cutAndWriteChat(paths, options, detector);
  } finally {
    await detector?.release?.();
  }
}

/**
 * How the events of a chat dataset are derived, recorded in its manifest so that `verify` judges it by
 * the same rules (pipeline/run/verify-chat-events.ts): the voice activity detector for recordings
 * without a transcript, else the word timings, utterance timings or speaker turns the corpus has.
 */
export function chatEventDerivation(
  recordings: readonly ReferenceRecording[],
  detector: VoiceActivityDetector | undefined,
): EventDerivation {
  const thresholds = { ...DEFAULT_CHAT_SEGMENT_OPTIONS.thresholds };
  if (detector !== undefined)
    return { from: 'voice-activity', hasWords: false, thresholds, voiceActivity: voiceActivitySettings(detector) };
  const supervisions = recordings.flatMap((recording) => recording.supervisions ?? []);
  if (supervisions.some((supervision) => supervision.words !== undefined))
    return { from: 'words', hasWords: true, thresholds };
  if (supervisions.length > 0) return { from: 'supervisions', hasWords: true, thresholds };
  return { from: 'turns', hasWords: false, thresholds };
}

async function cutAndWriteChat(
  paths: readonly string[],
  options: ChatOptions,
  detector: VoiceActivityDetector | undefined,
): Promise<ChatResult> {
  const log = options.log ?? (() => {});
  const recordings = await loadTranscribedRecordings(options.format, paths, {
    ...options,
    ...(detector === undefined ? {} : { detector }),
  });
  const derivation = chatEventDerivation(recordings, detector);
  const upsampled = await checkRecordingAudio(recordings, {
    onePerChannel: true,
    allowUpsample: options.allowUpsample === true,
    command: 'chat',
  });
  const dataset = options.dataset ?? options.format;
  const directory = path.resolve(options.out, datasetRelativePath(options.language, dataset, 'chat'));
  const writer = await DatasetWriter.open(directory);
  const failed: ChatResult['failed'] = [];
  const skippedRecords = recordings.flatMap((recording) => recording.skippedRecords ?? []);
  const notes: string[] = skippedRecords.map((record) => `skipped ${record}`);
  if (skippedRecords.length > 0)
    notes.push(`${skippedRecords.length} malformed corpus records skipped by the reader (--strict stops at the first)`);
  const written: ChatResult['segments'] = [];
  const eventCounts: Record<string, number> = {};
  const sampleRates = new Set<number>();
  /** Recordings read but too short or without a place to cut: no segment, not failed. */
  const uncut: ChatResult['failed'] = [];
  for (const recording of [...recordings].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))) {
    let audio: Awaited<ReturnType<typeof recordingTracks>>;
    try {
      audio = await recordingTracks(recording);
    } catch (error) {
      if (error instanceof RecordingRefusedError) {
        await writer.discard();
        throw error;
      }
      failed.push({ id: recording.id, stage: 'read-audio', reason: (error as Error).message });
      log(`${recording.id}: not used: ${(error as Error).message}`);
      continue;
    }
    const audioCs = Math.floor((Math.min(audio.tracks[0].length, audio.tracks[1].length) * 100) / audio.sampleRate);
    const lastSpeech = Math.max(
      ...[0, 1].flatMap((channel) => recording.segments[channel as Channel].map((segment) => segment.end)),
      0,
    );
    if (lastSpeech > audioCs) {
      failed.push({
        id: recording.id,
        stage: 'read-audio',
        reason: `the timings reach ${lastSpeech / 100} s, the audio lasts ${audioCs / 100} s`,
      });
      log(`${recording.id}: not used: the timings reach ${lastSpeech / 100} s, the audio lasts ${audioCs / 100} s`);
      continue;
    }
    sampleRates.add(audio.sampleRate);
    for (const note of recording.notes) if (/--speakers|speaker map/.test(note)) notes.push(`${recording.id}: ${note}`);
    const { spans, notes: cutNotes } = chatSegmentSpans(recording.segments, audioCs);
    for (const note of cutNotes) notes.push(`${recording.id}: ${note}`);
    if (spans.length === 0)
      uncut.push({
        id: recording.id,
        stage: 'cut-chat-segments',
        reason:
          cutNotes.join('; ') ||
          `${audioCs / 100} s of audio, no segment of ${DEFAULT_CHAT_SEGMENT_OPTIONS.minimumSeconds}-${DEFAULT_CHAT_SEGMENT_OPTIONS.maximumSeconds} s`,
      });
    for (const span of spans) {
      const from = Math.round((span.start * audio.sampleRate) / 100);
      const to = Math.round((span.end * audio.sampleRate) / 100);
      const tracks: [Float32Array, Float32Array] = [audio.tracks[0].slice(from, to), audio.tracks[1].slice(from, to)];
      let segmentRecording = recording;
      if (detector !== undefined) {
        // the samples as written (PCM16), so that verify, reading the WAV, sees what the detector saw here
        const written = decodeWav(encodeWavPcm16({ channels: tracks, sampleRate: audio.sampleRate }), recording.id);
        const local = await detectTrackSpeech(
          [written.channels[0] as Float32Array, written.channels[1] as Float32Array],
          audio.sampleRate,
          detector,
        );
        const shift = (segments: readonly { start: number; end: number }[]) =>
          segments.map((segment) => ({ start: segment.start + span.start, end: segment.end + span.start }));
        segmentRecording = { ...recording, segments: { 0: shift(local[0]), 1: shift(local[1]) } };
      }
      const content: ChatSegmentContent = chatSegmentContent(segmentRecording, span);
      for (const note of content.notes) notes.push(`${content.id}: ${note}`);
      for (const channel of [0, 1] as const)
        for (const event of content.events[channel]) eventCounts[event.event] = (eventCounts[event.event] ?? 0) + 1;
      await writer.addDialogue(
        {
          id: content.id,
          tracks,
          sampleRate: audio.sampleRate,
          eventsLine: formatEventsLine(content.id, content.events),
          words: content.words,
          metadata: {
            id: content.id,
            language: options.language,
            domain: 'chat',
            source: {
              corpus: recording.format,
              recording: recording.id,
              files: recording.sources.map((file) => path.basename(file)),
              startSeconds: span.start / 100,
              endSeconds: span.end / 100,
            },
            speakers: {
              channel0: { speakerId: `${recording.format}:${recording.channelSpeakers[0]}`, channel: 0 },
              channel1: { speakerId: `${recording.format}:${recording.channelSpeakers[1]}`, channel: 1 },
            },
            durationSeconds: (to - from) / audio.sampleRate,
            alignment: content.alignmentUnit,
            ...(derivation.from === 'turns'
              ? {
                  speech: {
                    channel0: content.segments[0].map(
                      (segment) => [segment.start / 100, segment.end / 100] as [number, number],
                    ),
                    channel1: content.segments[1].map(
                      (segment) => [segment.start / 100, segment.end / 100] as [number, number],
                    ),
                  },
                }
              : {}),
            utterances: content.utterances.map((utterance, index) => ({
              index,
              role: `channel${utterance.channel}`,
              kind: utterance.kind === 'BC' ? 'backchannel' : 'turn',
              channel: utterance.channel,
              start: utterance.start / 100,
              end: utterance.end / 100,
              text: { final: utterance.text },
            })),
            recordingNotes: recording.notes,
          },
        },
        chatDialogueMetadataSchema,
      );
      written.push({
        id: content.id,
        recording: recording.id,
        start: span.start / 100,
        end: span.end / 100,
        durationSeconds: (span.end - span.start) / 100,
      });
    }
  }
  const summary: ChatSummary = {
    format: 'duplexsynth-chat',
    version: 1,
    language: options.language,
    dataset,
    source: { format: options.format, recordings: recordings.length },
    segmenting: {
      ...DEFAULT_CHAT_SEGMENT_OPTIONS,
      rule: 'cut only where neither channel is inside an IPU (docs/events.md, Step 1), nearest to 120 s, 100-140 s',
    },
    segments: written,
    hours: Math.round((written.reduce((sum, segment) => sum + segment.durationSeconds, 0) / 3600) * 10_000) / 10_000,
    events: Object.fromEntries(Object.entries(eventCounts).sort(([a], [b]) => (a < b ? -1 : 1))),
    failed,
    notes,
    ...(upsampled.length > 0
      ? { upsampled: upsampled.map((item) => ({ ...item, file: path.basename(item.file) })) }
      : {}),
  };
  if (written.length === 0) {
    // nothing to commit: say per recording why, before the one-line NothingBuiltError of commit
    for (const item of [...failed, ...uncut].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)))
      log(`nothing built from recording ${item.id}: ${item.reason}`);
  }
  await writer.addFile('summary.json', formatRecord(path.join(directory, 'summary.json'), chatSummarySchema, summary));
  await writer.commit(
    {
      language: options.language,
      dataset,
      domain: 'chat',
      channelsEvaluated: [0, 1],
      sampleRates: [...sampleRates].sort((a, b) => a - b),
      eventDerivation: derivation,
    },
    { failures: written.length === 0 ? [...failed, ...uncut] : failed },
  );
  log(`${directory}: ${written.length} segments`);
  const splits: Record<string, string[]> = {};
  if (options.score && written.length > 0) {
    await scoreDatasetQuality(directory, {
      log,
      measureLoudness: true,
      ...(options.dnsmosScorer === undefined ? {} : { dnsmosScorer: options.dnsmosScorer }),
    });
    const [result] = await splitDatasets([directory], {
      testHours: options.testHours,
      unit: 'speaker-group',
      speakerDisjoint: true,
      log,
    });
    if (result !== undefined) {
      for (const [name, split] of Object.entries(result.report.splits))
        if (split !== undefined) splits[name] = split.ids;
    }
  }
  return { directory, segments: written, failed, notes, skippedRecords, splits };
}
