/**
 * `duplexsynth prompts`: real conversations with transcripts -> the speaker prompt pool that the TTS
 * config reads (`tts.{lang}.speakerPrompts.manifest`): single-speaker clips of 3-10 s with no speech
 * on the other channel, their exact transcripts, loudness-normalized, speaker ids from the corpus.
 *
 *     duplexsynth prompts --format candor|magicdata|textgrid|ctm|nxt|... --out DIR
 *       [--per-speaker N] [--min-snr DB] [--seed N] [--min-seconds S] [--max-seconds S]
 *       [--loudness LUFS | --no-loudness] [--audio DIR] [--tiers NAME...] [--vad silero|webrtc]
 *       [--transcripts FILE] [--asr-url URL [--asr-model NAME] [--asr-language CODE] [--asr-key-variable NAME]] PATH...
 *
 * Recordings without transcripts (stereo-wav: speech by the voice activity detector; RTTM turns with
 * `--audio`) give clips of clean single-speaker speech whose text comes from an OpenAI-compatible ASR
 * service (`--asr-url`) or from `DIR/transcripts.tsv`, which every such run writes and a person fills in
 * for the next run (`--transcripts`); a clip without a text stays out of the manifest
 * (./prompt-transcripts.ts).
 *
 * Writes `DIR/speaker-prompts.jsonl` (the manifest), `DIR/clips/*.wav` (16 kHz mono PCM16) and
 * `DIR/prompt-pool-summary.json` (speakers, clips kept, every candidate rejected with its reason),
 * prints a summary, and exits with code 1 when no clip was kept. The pool is built in `DIR.partial/`
 * and renamed over DIR when complete, so a failed run leaves the previous pool intact. The same
 * input, options and seed give byte-identical files (corpora/speaker-prompts.ts).
 */
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import type { ReferenceRecording } from '../../pipeline/model/types.ts';
import { writeAtomic } from '../../pipeline/storage/write-atomic.ts';
import {
  createVoiceActivityDetector,
  type VoiceActivityDetector,
} from '../../pipeline/services/vad/voice-activity-detector.ts';
import { loadReferenceCorpus, type ReferenceCorpusFormat } from '../../corpora/reference-corpora.ts';
import {
  EBU_R128_LOUDNESS,
  SPEAKER_PROMPT_MANIFEST,
  writeSpeakerPromptPool,
  type RejectedSpeakerPrompt,
  type SpeakerPromptOptions,
} from '../../corpora/speaker-prompts.ts';
import type { SpeakerPromptLine } from '../../pipeline/model/speaker-prompt.ts';
import { checkRecordingAudio, type UpsampledAudio } from './recording-checks.ts';
import { applySpeakerMap, readSpeakerMap } from './speaker-map.ts';
import { findRecordingAudio } from '../../corpora/word-timings.ts';
import {
  createPromptTranscriber,
  formatPromptTranscripts,
  PROMPT_TRANSCRIPTS_FILE,
  type PromptTranscriberOptions,
  type PromptTranscriptRow,
} from './prompt-transcripts.ts';
import { restoreInterruptedSwap, swapPoolIntoPlace } from './prompt-pool-swap.ts';

/** File name of the summary inside the pool folder. */
export const PROMPT_POOL_SUMMARY = 'prompt-pool-summary.json';

/**
 * Options of the prompts command (as commander parses them), see the module comment; `--transcripts`
 * and the `--asr-*` options are those of the transcriber (prompt-transcripts.ts).
 */
export interface PromptsOptions extends PromptTranscriberOptions {
  format: ReferenceCorpusFormat;
  out: string;
  perSpeaker: number;
  minSnr?: number;
  seed: number;
  minSeconds: number;
  maxSeconds: number;
  /** Target loudness, LUFS, or false for `--no-loudness`. */
  loudness: number | false;
  audio?: string;
  tiers?: string[];
  vad: 'silero' | 'webrtc';
  /** `--allow-upsample`: take audio below 16 kHz (recorded in the summary); else refused. */
  allowUpsample?: boolean;
  /** `--speakers A,B`: the two speakers of an RTTM file with more, in channel order. */
  speakers?: [string, string];
  /** `--strict`: stop at the first malformed corpus record (default: skip it, name it, count it). */
  strict?: boolean;
  /** `--speaker-map FILE`: recording/channel -> speaker id (speaker-map.ts). */
  speakerMap?: string;
}

/** Per speaker: clips kept and candidates rejected by reason. */
export interface PromptPoolSpeakerSummary {
  corpus: string;
  speaker: string;
  clips: number;
  rejected: Record<string, number>;
}

/** The content of `prompt-pool-summary.json`. */
export interface PromptPoolSummary {
  format: string;
  recordings: number;
  clips: number;
  speakers: PromptPoolSpeakerSummary[];
  /** Rejection counts by reason, all speakers. */
  rejectedByReason: Record<string, number>;
  /** Recordings or channels left out (no transcripts, no audio) and speakers over the limit. */
  skipped: string[];
  /** Malformed corpus records the readers skipped (`FILE:LINE: REASON`, each once); absent when none. */
  skippedRecords?: string[];
  /** Every rejected candidate (times in seconds). */
  rejected: (Omit<RejectedSpeakerPrompt, 'start' | 'end'> & { start: number; end: number })[];
  /** Audio below 16 kHz taken with `--allow-upsample`: file name, its rate and the clips' rate, Hz. */
  upsampled?: UpsampledAudio[];
  /**
   * Clips cut from speech without a transcript (prompt-transcripts.ts), when there are any: how many
   * got a text and from whom, and those still without one (in `clips/`, not in the manifest).
   */
  untranscribedSpeech?: {
    /** `transcripts.tsv` in the pool folder: every such clip with its text or an empty one to fill in. */
    transcriptsFile: string;
    /** The ASR service and/or the filled-in TSV used, or null. */
    transcriber: string | null;
    transcribed: number;
    /** Clips without a text: id, `clips/<id>.wav`, why. */
    awaitingText: { id: string; path: string; reason: string }[];
  };
}

/**
 * Loads the recordings of one format with the options the prompts command knows: `--audio` (TextGrid,
 * CTM, NXT, RTTM: where the audio is), `--tiers` (TextGrid speaker tiers), `--vad` (stereo-wav: the
 * detector that finds each channel's speech; the texts come from prompt-transcripts.ts).
 * @throws the loaders' errors (ReferenceCorpusError naming file and line, ...).
 */
export async function loadTranscribedRecordings(
  format: ReferenceCorpusFormat,
  paths: readonly string[],
  options: Pick<PromptsOptions, 'audio' | 'tiers' | 'vad' | 'speakers' | 'speakerMap' | 'strict'> & {
    detector?: VoiceActivityDetector;
  },
): Promise<ReferenceRecording[]> {
  const recordings = await loadRecordingsOfFormat(format, paths, options);
  const withAudio =
    options.audio === undefined
      ? recordings
      : await Promise.all(recordings.map((recording) => attachAudio(recording, path.resolve(options.audio as string))));
  if (options.speakerMap === undefined) return withAudio;
  return applySpeakerMap(withAudio, await readSpeakerMap(options.speakerMap), options.speakerMap).recordings;
}

/**
 * `--audio DIR` for a recording whose format brings no audio (RTTM, or timings whose audio is
 * elsewhere): `<id>.wav` or `<id>_0.wav` + `<id>_1.wav` in DIR (corpora/word-timings.ts
 * `findRecordingAudio`). An RTTM recording's channels are then put in speaker-label order (`A` on
 * channel 0, as CallHome's left channel) unless `--speakers` chose the order.
 */
async function attachAudio(recording: ReferenceRecording, directory: string): Promise<ReferenceRecording> {
  if ((recording.audio ?? []).length > 0) return recording;
  const found = await findRecordingAudio(directory, recording.id);
  if (found === undefined) return recording;
  let next: ReferenceRecording = {
    ...recording,
    audio: found.audio,
    durationCs: Math.max(recording.durationCs, found.durationCs),
    notes: [...recording.notes, found.note],
  };
  const [label0, label1] = [next.channelSpeakers[0], next.channelSpeakers[1]];
  if (
    recording.format === 'rttm' &&
    !next.notes.some((note) => note.includes('(chosen by --speakers)')) &&
    label1 < label0
  ) {
    next = {
      ...next,
      segments: { 0: next.segments[1], 1: next.segments[0] },
      channelSpeakers: { 0: label1, 1: label0 },
    };
    next.notes.push(
      `channels in speaker-label order for the audio: channel 0 = ${label1}, channel 1 = ${label0} (--speakers to choose)`,
    );
  }
  return next;
}

/** The format's loader with the options the commands know (see loadTranscribedRecordings). */
async function loadRecordingsOfFormat(
  format: ReferenceCorpusFormat,
  paths: readonly string[],
  options: Pick<PromptsOptions, 'audio' | 'tiers' | 'vad' | 'speakers' | 'strict'> & {
    detector?: VoiceActivityDetector;
  },
): Promise<ReferenceRecording[]> {
  const strict = options.strict ?? false; // a malformed record is skipped and named (recording.skippedRecords) unless --strict
  const readerOptions = {
    strict,
    ...(options.audio === undefined ? {} : { audioDirectory: path.resolve(options.audio) }),
  };
  switch (format) {
    case 'stereo-wav': {
      if (options.detector !== undefined)
        return await loadReferenceCorpus('stereo-wav', paths, { detector: options.detector });
      const detector = await createVoiceActivityDetector(options.vad);
      try {
        return await loadReferenceCorpus('stereo-wav', paths, { detector });
      } finally {
        await detector.release?.();
      }
    }
    case 'textgrid':
      return loadReferenceCorpus('textgrid', paths, {
        ...readerOptions,
        ...(options.tiers === undefined ? {} : { speakerTiers: options.tiers }),
      });
    case 'ctm':
      return loadReferenceCorpus('ctm', paths, readerOptions);
    case 'nxt':
      return loadReferenceCorpus('nxt', paths, readerOptions);
    case 'rttm': {
      // a third voice would be in the audio: refused unless --speakers picks the two (corpora/rttm-recordings.ts)
      const loaded = await loadReferenceCorpus('rttm', paths, {
        strict,
        extraSpeakers: 'refuse',
        ...(options.speakers === undefined ? {} : { speakers: options.speakers }),
      });
      // RTTM labels (A, B) repeat in every call: the speaker ids are the call's own unless a speaker map says more
      return loaded.map((recording) => ({
        ...recording,
        channelSpeakers: {
          0: `${recording.id}:${recording.channelSpeakers[0]}`,
          1: `${recording.id}:${recording.channelSpeakers[1]}`,
        },
      }));
    }
    default:
      return loadReferenceCorpus(format, paths, { strict });
  }
}

function countBy<T>(items: readonly T[], key: (item: T) => string): Record<string, number> {
  const counts = new Map<string, number>();
  for (const item of items) counts.set(key(item), (counts.get(key(item)) ?? 0) + 1);
  return Object.fromEntries(
    [...counts.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)),
  );
}

/** The summary of a written pool (deterministic order: corpus, speaker). */
export function summarizePromptPool(
  format: string,
  recordings: readonly ReferenceRecording[],
  entries: readonly SpeakerPromptLine[],
  rejected: readonly RejectedSpeakerPrompt[],
  skipped: readonly string[],
): PromptPoolSummary {
  const keyOf = (corpus: string, speaker: string) => `${corpus}\u0000${speaker}`;
  const speakers = new Map<string, PromptPoolSpeakerSummary>();
  const speakerOf = (corpus: string, speaker: string) => {
    const key = keyOf(corpus, speaker);
    const existing = speakers.get(key) ?? { corpus, speaker, clips: 0, rejected: {} };
    speakers.set(key, existing);
    return existing;
  };
  for (const recording of recordings)
    for (const channel of [0, 1] as const) speakerOf(recording.format, recording.channelSpeakers[channel]);
  for (const entry of entries) speakerOf(entry.corpus, entry.speaker).clips += 1;
  for (const item of rejected) {
    const summary = speakerOf(item.corpus, item.speaker);
    summary.rejected[item.reason] = (summary.rejected[item.reason] ?? 0) + 1;
  }
  return {
    format,
    recordings: recordings.length,
    clips: entries.length,
    speakers: [...speakers.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, summary]) => summary),
    rejectedByReason: countBy(rejected, (item) => item.reason),
    skipped: [...skipped],
    rejected: rejected.map((item) => ({ ...item, start: item.start / 100, end: item.end / 100 })),
  };
}

/**
 * Runs the prompts command's work (without commander): load, cut, write the pool atomically.
 * @returns the manifest path (in the final folder) and the summary.
 * @throws RangeError for invalid options; the loaders' and the pool's errors.
 */
export async function runPrompts(
  paths: readonly string[],
  options: PromptsOptions,
): Promise<{ manifestPath: string; summary: PromptPoolSummary }> {
  const recordings = await loadTranscribedRecordings(options.format, paths, options);
  const upsampled = await checkRecordingAudio(recordings, {
    onePerChannel: false,
    allowUpsample: options.allowUpsample === true,
    command: 'prompts',
  });
  // read before the pool folder is replaced: the filled-in TSV may be the pool's own transcripts.tsv
  const transcriber = await createPromptTranscriber(options);
  const out = path.resolve(options.out);
  const partial = `${out}.partial`;
  await restoreInterruptedSwap(out);
  await rm(partial, { recursive: true, force: true });
  await mkdir(partial, { recursive: true });
  try {
    return await writePool(recordings, options, transcriber, upsampled, out, partial);
  } catch (error) {
    await rm(partial, { recursive: true, force: true }); // a dead ASR service, a full disk: the previous pool stays, no half pool
    throw error;
  }
}

/** {@link runPrompts} once the recordings are loaded: writes the pool into `partial`, then renames it over `out`. */
async function writePool(
  recordings: readonly ReferenceRecording[],
  options: PromptsOptions,
  transcriber: Awaited<ReturnType<typeof createPromptTranscriber>>,
  upsampled: readonly UpsampledAudio[],
  out: string,
  partial: string,
): Promise<{ manifestPath: string; summary: PromptPoolSummary }> {
  const poolOptions: SpeakerPromptOptions = {
    clipsPerSpeaker: options.perSpeaker,
    selectionSeed: options.seed,
    minimumSnrDb: options.minSnr ?? null,
    minimumDurationSeconds: options.minSeconds,
    maximumDurationSeconds: options.maxSeconds,
    loudness: options.loudness === false ? null : { ...EBU_R128_LOUDNESS, targetLufs: options.loudness },
    untranscribedSpeech: true,
    transcribe: transcriber.transcribe,
  };
  const pool = await writeSpeakerPromptPool(recordings, partial, poolOptions);
  const summary = summarizePromptPool(options.format, recordings, pool.entries, pool.rejected, [
    ...pool.skipped,
    ...transcriber.unusedRows(),
  ]);
  const skippedRecords = recordings.flatMap((recording) => recording.skippedRecords ?? []);
  if (skippedRecords.length > 0) summary.skippedRecords = skippedRecords;
  if (upsampled.length > 0) summary.upsampled = upsampled.map((item) => ({ ...item, file: path.basename(item.file) }));
  if (pool.transcribed.length + pool.untranscribed.length > 0) {
    const rows: PromptTranscriptRow[] = [
      ...pool.transcribed,
      ...pool.untranscribed.map((item) => ({ ...item, text: '' })),
    ]
      .map(({ clip, path: clipPath, text }) => ({
        id: clip.id,
        speaker: clip.speaker,
        recording: clip.recording.id,
        channel: clip.channel,
        start: clip.start / 100,
        end: clip.end / 100,
        path: clipPath,
        text,
      }))
      .sort(
        (a, b) =>
          (a.speaker < b.speaker ? -1 : a.speaker > b.speaker ? 1 : 0) ||
          (a.recording < b.recording ? -1 : a.recording > b.recording ? 1 : 0) ||
          a.start - b.start ||
          a.channel - b.channel,
      );
    await writeAtomic(path.join(partial, PROMPT_TRANSCRIPTS_FILE), formatPromptTranscripts(rows));
    summary.untranscribedSpeech = {
      transcriptsFile: PROMPT_TRANSCRIPTS_FILE,
      transcriber: transcriber.description,
      transcribed: pool.transcribed.length,
      awaitingText: pool.untranscribed.map(({ clip, path: clipPath, reason }) => ({
        id: clip.id,
        path: clipPath,
        reason,
      })),
    };
  }
  await writeAtomic(path.join(partial, PROMPT_POOL_SUMMARY), `${JSON.stringify(summary, null, 2)}\n`);
  await swapPoolIntoPlace(partial, out);
  return { manifestPath: path.join(out, SPEAKER_PROMPT_MANIFEST), summary };
}

/** The summary as printed: one line per speaker, then the rejection reasons. */
export function formatPromptPoolSummary(manifestPath: string, summary: PromptPoolSummary): string {
  const lines = [
    `${manifestPath}: ${summary.clips} clips of ${summary.speakers.filter((speaker) => speaker.clips > 0).length} speakers from ${summary.recordings} recordings`,
  ];
  for (const speaker of summary.speakers) {
    const reasons = Object.entries(speaker.rejected).map(([reason, count]) => `${count} ${reason}`);
    lines.push(
      `  ${speaker.corpus} ${speaker.speaker}: ${speaker.clips} clips${reasons.length > 0 ? `; rejected: ${reasons.join('; ')}` : ''}`,
    );
  }
  for (const line of summary.skipped) lines.push(`  skipped: ${line}`);
  const records = summary.skippedRecords ?? [];
  for (const line of records) lines.push(`  skipped record: ${line}`);
  if (records.length > 0)
    lines.push(`  ${records.length} malformed corpus records skipped (--strict stops at the first)`);
  const speech = summary.untranscribedSpeech;
  if (speech !== undefined) {
    const transcriptsPath = path.join(path.dirname(manifestPath), speech.transcriptsFile);
    if (speech.transcribed > 0)
      lines.push(
        `  ${speech.transcribed} clips cut from speech without a transcript got their text from ${speech.transcriber}; correct them in ${transcriptsPath}`,
      );
    if (speech.awaitingText.length > 0) {
      lines.push(
        `  ${speech.awaitingText.length} clips await their text and are not voice prompts: write what is said into the text column of ${transcriptsPath}, then run again with --transcripts ${transcriptsPath} (or give --asr-url)`,
      );
    }
  }
  return `${lines.join('\n')}\n`;
}
