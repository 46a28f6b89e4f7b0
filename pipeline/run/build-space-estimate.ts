/**
 * The bytes a build writes, estimated before it starts so that a disk too small is refused up front
 * (./output-checks.ts `checkFolder`). Every file the build writes is counted:
 *
 * - each dataset's WAVs (the base dataset and, with `datasets.bargeIn`, its barge-in variant): 2
 *   channels of 16-bit PCM at `audio.sampleRate`, written once into the cache (`place-timeline/`) and
 *   linked into the dataset (a copy when the two folders are on different file systems);
 * - the full-band masters (`audio_fullband/`, with `audio.fullBandMaster` when the engine's rate is
 *   above `sampleRate`): the same dialogues at the TTS engine's own rate, cached and linked the same way;
 * - the synthesized utterances in the cache (`synthesize-speech/`): mono 16-bit at the engine's rate;
 * - per dialogue and dataset the metadata, alignments, manifest lines, waveform envelopes and report
 *   page, and per dataset its plots, summaries and report pages ({@link BYTES_PER_DIALOGUE},
 *   {@link BYTES_PER_DATASET}).
 *
 * The speech length comes from the text (./output-checks.ts `estimatePlannedAudioBytes`: 12
 * characters per second plus the gaps), so the estimate runs above what a build writes; a small real
 * build (pipeline/run/build-space-estimate.test.ts) writes between half of it and all of it.
 */
import { stat } from 'node:fs/promises';
import path from 'node:path';
import type { BuildConfig } from '../config.ts';
import type { Language, SourceConversation } from '../model/types.ts';
import { checkFolder, estimatePlannedAudioBytes } from './output-checks.ts';

/**
 * Output rate of each TTS backend, Hz: espeak-ng 22050, Open JTalk 48000, the CosyVoice2 servers
 * 24000 (their `service.sampleRate` when set), an OpenAI speech service at most 48000.
 */
const ENGINE_SAMPLE_RATES: Readonly<Record<string, number>> = {
  'espeak-ng': 22050,
  'open-jtalk': 48000,
  cosyvoice2: 24000,
  'cosyvoice2-triton': 24000,
  'openai-speech': 48000,
};
/** Rate assumed for a backend missing from {@link ENGINE_SAMPLE_RATES}: the highest a build writes. */
const HIGHEST_ENGINE_SAMPLE_RATE = 48000;
/**
 * Bytes per dialogue and dataset besides its audio: metadata JSON (about 5 KB), alignments (1 KB),
 * waveform envelopes (17 KB), report page (42 KB), measured on a two-dialogue espeak-ng build; 100 KB
 * leaves a margin.
 */
export const BYTES_PER_DIALOGUE = 100_000;
/** Bytes per dataset besides its dialogues: plots (200 KB), summaries, manifest, report assets; 400 KB leaves a margin. */
export const BYTES_PER_DATASET = 400_000;

/** What a build writes, by where it lands. */
export interface BuildSpaceEstimate {
  /** Dataset and full-band WAVs: in the cache, linked into the output folder. */
  linkedAudioBytes: number;
  /** Synthesized utterances, cache only. */
  speechCacheBytes: number;
  /** Metadata, alignments, summaries and the report: output folder (waveform envelopes: cache). */
  otherBytes: number;
  /** Everything, each byte counted once (output and cache on one file system). */
  totalBytes: number;
}

/** The rate a language's TTS engine outputs, Hz (see {@link ENGINE_SAMPLE_RATES}). */
function engineSampleRate(config: BuildConfig, language: Language): number {
  const tts = (config.tts as Record<string, { backend?: string; service?: { sampleRate?: number } } | undefined>)[
    language
  ];
  const configured = tts?.service?.sampleRate;
  if (typeof configured === 'number' && configured > 0) return configured;
  return ENGINE_SAMPLE_RATES[tts?.backend ?? ''] ?? HIGHEST_ENGINE_SAMPLE_RATE;
}

/**
 * Estimates the bytes a build of `conversations` writes (see the module comment).
 * @param config the build (languages, datasets, audio settings, TTS backends)
 * @param conversations the ingested conversations (each built in every language)
 * @returns the bytes by kind and in all
 */
export function estimateBuildBytes(
  config: BuildConfig,
  conversations: readonly SourceConversation[],
): BuildSpaceEstimate {
  const datasetsPerLanguage = config.datasets.bargeIn ? 2 : 1;
  const sampleRate = config.audio.sampleRate;
  let linkedAudioBytes = 0;
  let speechCacheBytes = 0;
  for (const language of config.languages) {
    const engineRate = engineSampleRate(config, language);
    linkedAudioBytes += estimatePlannedAudioBytes(conversations, datasetsPerLanguage, sampleRate);
    if (config.audio.fullBandMaster && engineRate > sampleRate)
      linkedAudioBytes += estimatePlannedAudioBytes(conversations, datasetsPerLanguage, engineRate);
    speechCacheBytes += Math.ceil(estimatePlannedAudioBytes(conversations, 1, engineRate) / 2); // mono: half of 2 channels
  }
  const datasets = config.languages.length * datasetsPerLanguage;
  const otherBytes = datasets * (BYTES_PER_DATASET + conversations.length * BYTES_PER_DIALOGUE);
  return {
    linkedAudioBytes,
    speechCacheBytes,
    otherBytes,
    totalBytes: linkedAudioBytes + speechCacheBytes + otherBytes,
  };
}

/**
 * Checks that the output and cache folders have room for the whole build (see the module comment):
 * on one file system each must have the total free (the dataset WAVs are links to the cache's), on
 * two the output its audio copies and pages, the cache its audio and utterances. Call it under the
 * output folder's lock, after the unfinished datasets were removed (./output-checks.ts `checkFreeSpace`).
 * @param config the build (its output and cache folders exist)
 * @param conversations the ingested conversations
 * @throws DiskFullError naming the folder, the space needed and the space free
 */
export async function checkBuildSpace(
  config: BuildConfig,
  conversations: readonly SourceConversation[],
): Promise<void> {
  const estimate = estimateBuildBytes(config, conversations);
  const device = async (folder: string) => (await stat(path.resolve(folder))).dev;
  const sameFileSystem =
    (await device(config.output.directory).catch(() => -1)) ===
    (await device(config.output.cacheDirectory).catch(() => -2));
  const output = sameFileSystem ? estimate.totalBytes : estimate.linkedAudioBytes + estimate.otherBytes;
  const cache = sameFileSystem ? estimate.totalBytes : estimate.linkedAudioBytes + estimate.speechCacheBytes;
  await checkFolder(config.output.directory, 'output folder', output);
  await checkFolder(config.output.cacheDirectory, 'cache folder', cache);
}
