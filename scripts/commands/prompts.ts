/**
 * `duplexsynth prompts`: real conversations with transcripts -> the speaker prompt pool that the TTS
 * config reads (`tts.{lang}.speakerPrompts.manifest`): single-speaker clips of 3-10 s with no speech
 * on the other channel, their exact transcripts, loudness-normalized, speaker ids from the corpus.
 *
 *     duplexsynth prompts --format candor|magicdata|textgrid|ctm|nxt|... --out DIR
 *       [--per-speaker N] [--min-snr DB] [--seed N] [--min-seconds S] [--max-seconds S]
 *       [--loudness LUFS | --no-loudness] [--audio DIR] [--tiers NAME...] [--vad silero|webrtc] PATH...
 *
 * Writes `DIR/speaker-prompts.jsonl` (the manifest), `DIR/clips/*.wav` (16 kHz mono PCM16) and
 * `DIR/prompt-pool-summary.json` (speakers, clips kept, every candidate rejected with its reason),
 * prints a summary, and exits with code 1 when no clip was kept. The pool is built in `DIR.partial/`
 * and renamed over DIR when complete, so a failed run leaves the previous pool intact. The same
 * input, options and seed give byte-identical files (corpora/speaker-prompts.ts).
 */
import { mkdir, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { Command, InvalidArgumentError, Option } from 'commander';
import type { ReferenceRecording } from '../../pipeline/model/types.ts';
import { writeAtomic } from '../../pipeline/storage/write-atomic.ts';
import { createVoiceActivityDetector, type VoiceActivityDetector } from '../../pipeline/services/vad/voice-activity-detector.ts';
import { loadReferenceCorpus, REFERENCE_CORPUS_FORMATS, type ReferenceCorpusFormat } from '../../corpora/reference-corpora.ts';
import {
  EBU_R128_LOUDNESS,
  SPEAKER_PROMPT_MANIFEST,
  writeSpeakerPromptPool,
  type RejectedSpeakerPrompt,
  type SpeakerPromptOptions,
} from '../../corpora/speaker-prompts.ts';
import { nonNegativeInteger, positiveInteger, positiveNumber } from './option-parsers.ts';
import { checkFolder } from '../../pipeline/run/output-checks.ts';
import type { SpeakerPromptLine } from '../../pipeline/model/speaker-prompt.ts';
import { checkRecordingAudio, type UpsampledAudio } from './recording-checks.ts';
import { applySpeakerMap, readSpeakerMap } from './speaker-map.ts';
import { findRecordingAudio } from '../../corpora/word-timings.ts';

/** File name of the summary inside the pool folder. */
export const PROMPT_POOL_SUMMARY = 'prompt-pool-summary.json';

/** Options of the prompts command (as commander parses them), see the module comment. */
export interface PromptsOptions {
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
  /** Every rejected candidate (times in seconds). */
  rejected: (Omit<RejectedSpeakerPrompt, 'start' | 'end'> & { start: number; end: number })[];
  /** Audio below 16 kHz taken with `--allow-upsample`: file name, its rate and the clips' rate, Hz. */
  upsampled?: UpsampledAudio[];
}

/**
 * Loads the recordings of one format with the options the prompts command knows: `--audio` (TextGrid,
 * CTM, NXT: where the audio is), `--tiers` (TextGrid speaker tiers), `--vad` (stereo-wav; no
 * transcripts, so only useful to see that nothing qualifies).
 * @throws the loaders' errors (ReferenceCorpusError naming file and line, ...).
 */
export async function loadTranscribedRecordings(
  format: ReferenceCorpusFormat,
  paths: readonly string[],
  options: Pick<PromptsOptions, 'audio' | 'tiers' | 'vad' | 'speakers' | 'speakerMap'> & { detector?: VoiceActivityDetector },
): Promise<ReferenceRecording[]> {
  const recordings = await loadRecordingsOfFormat(format, paths, options);
  const withAudio = options.audio === undefined ? recordings : await Promise.all(recordings.map((recording) => attachAudio(recording, path.resolve(options.audio as string))));
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
  let next: ReferenceRecording = { ...recording, audio: found.audio, durationCs: Math.max(recording.durationCs, found.durationCs), notes: [...recording.notes, found.note] };
  const [label0, label1] = [next.channelSpeakers[0], next.channelSpeakers[1]];
  if (recording.format === 'rttm' && !next.notes.some((note) => note.includes('(chosen by --speakers)')) && label1 < label0) {
    next = { ...next, segments: { 0: next.segments[1], 1: next.segments[0] }, channelSpeakers: { 0: label1, 1: label0 } };
    next.notes.push(`channels in speaker-label order for the audio: channel 0 = ${label1}, channel 1 = ${label0} (--speakers to choose)`);
  }
  return next;
}

/** The format's loader with the options the commands know (see loadTranscribedRecordings). */
async function loadRecordingsOfFormat(
  format: ReferenceCorpusFormat,
  paths: readonly string[],
  options: Pick<PromptsOptions, 'audio' | 'tiers' | 'vad' | 'speakers'> & { detector?: VoiceActivityDetector },
): Promise<ReferenceRecording[]> {
  const audioDirectory = options.audio === undefined ? {} : { audioDirectory: path.resolve(options.audio) };
  switch (format) {
    case 'stereo-wav': {
      if (options.detector !== undefined) return await loadReferenceCorpus('stereo-wav', paths, { detector: options.detector });
      const detector = await createVoiceActivityDetector(options.vad);
      try {
        return await loadReferenceCorpus('stereo-wav', paths, { detector });
      } finally {
        await detector.release?.();
      }
    }
    case 'textgrid':
      return loadReferenceCorpus('textgrid', paths, { ...audioDirectory, ...(options.tiers === undefined ? {} : { speakerTiers: options.tiers }) });
    case 'ctm':
      return loadReferenceCorpus('ctm', paths, audioDirectory);
    case 'nxt':
      return loadReferenceCorpus('nxt', paths, audioDirectory);
    case 'rttm': {
      // a third voice would be in the audio: refused unless --speakers picks the two (corpora/rttm-recordings.ts)
      const loaded = await loadReferenceCorpus('rttm', paths, { extraSpeakers: 'refuse', ...(options.speakers === undefined ? {} : { speakers: options.speakers }) });
      // RTTM labels (A, B) repeat in every call: the speaker ids are the call's own unless a speaker map says more
      return loaded.map((recording) => ({ ...recording, channelSpeakers: { 0: `${recording.id}:${recording.channelSpeakers[0]}`, 1: `${recording.id}:${recording.channelSpeakers[1]}` } }));
    }
    default:
      return loadReferenceCorpus(format, paths);
  }
}

function countBy<T>(items: readonly T[], key: (item: T) => string): Record<string, number> {
  const counts = new Map<string, number>();
  for (const item of items) counts.set(key(item), (counts.get(key(item)) ?? 0) + 1);
  return Object.fromEntries([...counts.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)));
}

/** The summary of a written pool (deterministic order: corpus, speaker). */
export function summarizePromptPool(format: string, recordings: readonly ReferenceRecording[], entries: readonly SpeakerPromptLine[], rejected: readonly RejectedSpeakerPrompt[], skipped: readonly string[]): PromptPoolSummary {
  const keyOf = (corpus: string, speaker: string) => `${corpus}\u0000${speaker}`;
  const speakers = new Map<string, PromptPoolSpeakerSummary>();
  const speakerOf = (corpus: string, speaker: string) => {
    const key = keyOf(corpus, speaker);
    const existing = speakers.get(key) ?? { corpus, speaker, clips: 0, rejected: {} };
    speakers.set(key, existing);
    return existing;
  };
  for (const recording of recordings) for (const channel of [0, 1] as const) speakerOf(recording.format, recording.channelSpeakers[channel]);
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
export async function runPrompts(paths: readonly string[], options: PromptsOptions): Promise<{ manifestPath: string; summary: PromptPoolSummary }> {
  const recordings = await loadTranscribedRecordings(options.format, paths, options);
  const upsampled = await checkRecordingAudio(recordings, { onePerChannel: false, allowUpsample: options.allowUpsample === true, command: 'prompts' });
  const out = path.resolve(options.out);
  const partial = `${out}.partial`;
  await rm(partial, { recursive: true, force: true });
  await mkdir(partial, { recursive: true });
  const poolOptions: SpeakerPromptOptions = {
    clipsPerSpeaker: options.perSpeaker,
    selectionSeed: options.seed,
    minimumSnrDb: options.minSnr ?? null,
    minimumDurationSeconds: options.minSeconds,
    maximumDurationSeconds: options.maxSeconds,
    loudness: options.loudness === false ? null : { ...EBU_R128_LOUDNESS, targetLufs: options.loudness },
  };
  const pool = await writeSpeakerPromptPool(recordings, partial, poolOptions);
  const summary = summarizePromptPool(options.format, recordings, pool.entries, pool.rejected, pool.skipped);
  if (upsampled.length > 0) summary.upsampled = upsampled.map((item) => ({ ...item, file: path.basename(item.file) }));
  await writeAtomic(path.join(partial, PROMPT_POOL_SUMMARY), `${JSON.stringify(summary, null, 2)}\n`);
  await rm(out, { recursive: true, force: true });
  await rename(partial, out);
  return { manifestPath: path.join(out, SPEAKER_PROMPT_MANIFEST), summary };
}

/** The summary as printed: one line per speaker, then the rejection reasons. */
export function formatPromptPoolSummary(manifestPath: string, summary: PromptPoolSummary): string {
  const lines = [`${manifestPath}: ${summary.clips} clips of ${summary.speakers.filter((speaker) => speaker.clips > 0).length} speakers from ${summary.recordings} recordings`];
  for (const speaker of summary.speakers) {
    const reasons = Object.entries(speaker.rejected).map(([reason, count]) => `${count} ${reason}`);
    lines.push(`  ${speaker.corpus} ${speaker.speaker}: ${speaker.clips} clips${reasons.length > 0 ? `; rejected: ${reasons.join('; ')}` : ''}`);
  }
  for (const line of summary.skipped) lines.push(`  skipped: ${line}`);
  return `${lines.join('\n')}\n`;
}

/** `--speakers` value: two different speaker labels separated by a comma. */
export function speakerPair(value: string): [string, string] {
  const parts = value.split(',').map((part) => part.trim());
  if (parts.length !== 2 || parts.some((part) => part === '') || parts[0] === parts[1]) throw new InvalidArgumentError('expected two different speaker labels, e.g. A,B');
  return [parts[0] as string, parts[1] as string];
}

/** `--loudness` value: a finite number of LUFS (negative). */
function lufs(value: string): number {
  const parsed = Number(value);
  if (!Number.isFinite(parsed) || parsed >= 0) throw new InvalidArgumentError('expected a negative loudness in LUFS, e.g. -23');
  return parsed;
}

function decibels(value: string): number {
  const parsed = Number(value);
  if (!Number.isFinite(parsed)) throw new InvalidArgumentError('expected a number of dB');
  return parsed;
}

/**
 * Adds the `prompts` command to a commander program. Prints the summary; sets exit code 1 when no
 * clip was kept.
 * @returns the `prompts` command
 */
export function registerPromptsCommand(program: Command): Command {
  return program
    .command('prompts')
    .description('cut the speaker prompt pool (voice prompts with exact transcripts) from real conversations')
    .argument('<path...>', 'recording files or folders of the format')
    .addOption(new Option('--format <format>', 'reference corpus format (one with transcripts)').choices(REFERENCE_CORPUS_FORMATS).makeOptionMandatory())
    .requiredOption('--out <dir>', 'pool folder to write (speaker-prompts.jsonl, clips/, prompt-pool-summary.json)')
    .option('--per-speaker <n>', 'clips kept per speaker', positiveInteger, 3)
    .option('--min-snr <dB>', 'reject clips with a lower signal-to-noise ratio', decibels)
    .option('--seed <n>', 'seed of the per-speaker draw', nonNegativeInteger, 0)
    .option('--min-seconds <s>', 'shortest clip', positiveNumber, 3)
    .option('--max-seconds <s>', 'longest clip (at most 30)', positiveNumber, 10)
    .option('--loudness <LUFS>', 'integrated loudness of the clips (EBU R 128; true peak at most -1 dBTP)', lufs, EBU_R128_LOUDNESS.targetLufs)
    .option('--no-loudness', 'keep the clips at their recorded level')
    .option('--audio <dir>', 'folder of the audio (textgrid, ctm, nxt: <id>.wav or <id>_0.wav + <id>_1.wav); default beside the timing files')
    .option('--tiers <name...>', 'textgrid: the speaker tiers in channel order')
    .addOption(new Option('--vad <detector>', 'voice activity detector for stereo-wav').choices(['silero', 'webrtc']).default('silero'))
    .option('--allow-upsample', 'take audio below 16 kHz (recorded in prompt-pool-summary.json); refused without it')
    .option('--speakers <A,B>', 'rttm: the two speakers to keep, in channel order (a file with a third is refused without it)', speakerPair)
    .option('--speaker-map <file>', 'tab-separated recording, channel (0, 1 or the corpus label), speaker id: one id for one person across recordings')
    .action(async (paths: string[], options: PromptsOptions) => {
      await checkFolder(options.out, 'prompt pool folder'); // a file there, /proc, a read-only disk: one line, nothing removed
      const result = await runPrompts(paths, options);
      process.stdout.write(formatPromptPoolSummary(result.manifestPath, result.summary));
      if (result.summary.clips === 0) process.exitCode = 1;
    });
}
