/**
 * The synthesis cache: one entry per synthesized text, keyed by the engine id and version, voice,
 * text, language, sample rate, detector settings and resampler, holding the clip as a WAV (and the
 * full-band clip after it) with its speech segments and word timings, and what the speech
 * recognition check found in it when the engine ran one (its edits and reference tokens: the
 * dataset summary's error rate is summed from these, pipeline/services/tts/recognition-tally.ts). Also the stage's settings as
 * resolved from the build config, which the keys are made of.
 */
import { type ResampleQuality } from '../pipeline/audio/resample.ts';
import { decodeWav, encodeWavFilesPcm16, encodeWavPcm16 } from '../pipeline/audio/wav.ts';
import { recordStoredSamplesDigest } from '../pipeline/audio/samples-digest.ts';
import type { SpeechDetectorOptions } from '../pipeline/audio/speech-regions.ts';
import type { BuildConfig } from '../pipeline/config.ts';
import type { Language, SpeakerRole, SpeechSegment } from '../pipeline/model/types.ts';
import type { StageCacheKey } from '../pipeline/run/stage.ts';
import type { ContentCache } from '../pipeline/storage/content-cache.ts';
import {
  SpeechSynthesisError,
  type SpeechSynthesizer,
  type VoiceSettings,
} from '../pipeline/services/tts/speech-synthesizer.ts';
import { voiceCacheKeyOf } from '../pipeline/services/tts/voice-files.ts';
import {
  synthesizeUtterance,
  type SynthesizedUtterance,
  type SynthesizeUtteranceOptions,
} from '../pipeline/services/tts/synthesize-utterance.ts';

/** Cache stage name; bump `SYNTHESIZE_STAGE_VERSION` when the stage's output changes meaning. */
export const SYNTHESIZE_STAGE = 'synthesize-speech';
export const SYNTHESIZE_STAGE_VERSION = 1;

/** Settings of the stage, resolved from the build config. */
export interface SynthesizeSettings {
  language: Language;
  voices: Record<SpeakerRole, VoiceSettings>;
  sampleRate: number;
  detector: Partial<SpeechDetectorOptions>;
  minimumUtteranceSeconds: number;
  /** Silences inside an utterance longer than this (seconds) are shortened to it; null = keep as synthesized. */
  maximumInternalPauseSeconds: number | null;
  /** Resampler from the engine's rate to `sampleRate` (audio/resample.ts `resample`); default {@link DEFAULT_SYNTHESIS_RESAMPLE_QUALITY}. */
  resampleQuality?: ResampleQuality;
  /** Where the resampling runs (synthesize-utterance.ts `resampler`, e.g. a worker pool); default this thread. Not part of cache keys: same samples. */
  resampler?: SynthesizeUtteranceOptions['resampler'];
  /** Keep each clip at the engine's own rate too, when it is above `sampleRate` (`audio.fullBandMaster`). Default false. */
  fullBand?: boolean;
}

/**
 * The stage's settings for one language from the build config (all but the voices and the resampler
 * thread): what the build synthesizes with, and what `--dry-run` (pipeline/orchestration/plan-build.ts) keys
 * its cache look-ups with, so the two cannot drift apart.
 * @param detector the speech detector settings (seconds, dBFS) as resolved for the build
 */
export function synthesizeSettingsOf(
  config: Pick<BuildConfig, 'audio' | 'synthesis'>,
  language: Language,
  detector: Partial<SpeechDetectorOptions>,
): Omit<SynthesizeSettings, 'voices' | 'resampler'> {
  return {
    language,
    sampleRate: config.audio.sampleRate,
    detector,
    minimumUtteranceSeconds: config.synthesis.minimumUtteranceSeconds,
    maximumInternalPauseSeconds: config.synthesis.maximumInternalPauseSeconds,
    resampleQuality: config.synthesis.resampleQuality,
    fullBand: config.audio.fullBandMaster,
  };
}

/** What a synthesis cache entry holds besides its WAV bytes. */
interface CachedMetadata {
  sampleRate: number;
  durationCs: number;
  segments: SpeechSegment[];
  words: { start: number; end: number; word: string }[];
  wordTimingSource: SynthesizedUtterance['wordTimingSource'];
  /** The speech recognition check's counts of the clip; absent when the engine ran none (and in entries stored before the counts were kept). */
  recognized?: SynthesizedUtterance['recognized'];
  /** With a full-band clip: the entry's bytes are the output-rate WAV, then the full-band WAV from this byte offset. */
  fullBand?: { byteOffset: number; sampleRate: number };
}

/**
 * The resampler of the stage when the settings name none: SpeexDSP (audio/resample.ts 'speex'), about
 * 100 times cheaper than libsamplerate's 'best' with its written samples within two 16-bit steps of
 * it; 'best' is set explicitly (`synthesis.resampleQuality: best`).
 */
export const DEFAULT_SYNTHESIS_RESAMPLE_QUALITY: ResampleQuality = 'speex';

function resampleQualityOf(settings: Pick<SynthesizeSettings, 'resampleQuality'>): ResampleQuality {
  return settings.resampleQuality ?? DEFAULT_SYNTHESIS_RESAMPLE_QUALITY;
}

/**
 * The cache entry of one synthesis: engine id and version, voice, text, language, sample rate,
 * detector settings, and the resampler unless it is libsamplerate's `best`, under `synthesize-speech`.
 * The voice's files enter by the sha256 of their bytes, not by their path
 * (pipeline/services/tts/voice-files.ts `voiceCacheKeyOf`), so the same prompt recordings at another
 * path (another machine, a copied pool) name the same entries; voices without files keep their keys.
 * @throws SpeechSynthesisError `invalid-voice` when a file the voice names cannot be read
 */
export function synthesisCacheKey(
  synthesizer: SpeechSynthesizer,
  text: string,
  role: SpeakerRole,
  settings: SynthesizeSettings,
): StageCacheKey {
  const keyMaterial = {
    version: SYNTHESIZE_STAGE_VERSION,
    engine: synthesizer.id,
    engineVersion: synthesizer.version,
    voice: voiceKeyOf(synthesizer, text, settings.voices[role]),
    text,
    language: settings.language,
    sampleRate: settings.sampleRate,
    detector: settings.detector,
    // every resampler but libsamplerate's 'best' is part of the key (a key without one means 'best',
    // whose entries keep their keys); the default 'speex' writes other samples
    ...(resampleQualityOf(settings) !== 'best' ? { resampleQuality: resampleQualityOf(settings) } : {}),
    // entries with the engine-rate clip are keyed apart (entries without it keep their keys)
    ...(settings.fullBand ? { fullBand: true } : {}),
  };
  return { stage: SYNTHESIZE_STAGE, keyMaterial };
}

/** {@link voiceCacheKeyOf}, a file that cannot be read reported as the engine reports an unusable voice. */
function voiceKeyOf(synthesizer: SpeechSynthesizer, text: string, voice: VoiceSettings): VoiceSettings {
  try {
    return voiceCacheKeyOf(voice);
  } catch (error) {
    throw new SpeechSynthesisError(
      synthesizer.id,
      text,
      'invalid-voice',
      `cannot read the voice prompt ${String(voice.promptWav)}: ${(error as Error).message}`,
      { cause: error },
    );
  }
}

/** What {@link synthesizeCached} synthesizes with: the cache in front of the engine, and the stage's settings. */
export interface SynthesisContext {
  cache: ContentCache;
  synthesizer: SpeechSynthesizer;
  settings: SynthesizeSettings;
}

/**
 * Synthesize one text with the cache in front.
 * @throws SpeechSynthesisError from the engine
 */
export async function synthesizeCached(
  { cache, synthesizer, settings }: SynthesisContext,
  text: string,
  role: SpeakerRole,
): Promise<SynthesizedUtterance> {
  const voice = settings.voices[role];
  const key = synthesisCacheKey(synthesizer, text, role, settings);
  return cache.binary<SynthesizedUtterance, CachedMetadata>(
    key.stage,
    key.keyMaterial,
    () =>
      synthesizeUtterance(
        synthesizer,
        { text, language: settings.language, voice },
        {
          sampleRate: settings.sampleRate,
          detector: settings.detector,
          resampleQuality: resampleQualityOf(settings),
          ...(settings.resampler ? { resampler: settings.resampler } : {}),
          ...(settings.fullBand ? { fullBand: true } : {}),
        },
      ),
    {
      encode: (value) => {
        const metadata: CachedMetadata = {
          sampleRate: value.sampleRate,
          durationCs: value.durationCs,
          segments: value.segments,
          words: value.words,
          wordTimingSource: value.wordTimingSource,
          ...(value.recognized ? { recognized: value.recognized } : {}),
        };
        const audio = { channels: [value.audio], sampleRate: value.sampleRate };
        if (!value.fullBand) return { bytes: encodeWavPcm16(audio), metadata };
        // both WAVs encoded into one buffer (no second copy to join them)
        const { bytes, files } = encodeWavFilesPcm16([
          audio,
          { channels: [value.fullBand.audio], sampleRate: value.fullBand.sampleRate },
        ]);
        return {
          bytes,
          metadata: {
            ...metadata,
            fullBand: { byteOffset: files[0]!.byteLength, sampleRate: value.fullBand.sampleRate },
          },
        };
      },
      decode: (bytes, metadata) => {
        const { fullBand, ...rest } = metadata;
        if (!fullBand) return { ...rest, audio: decodeWav(bytes, 'synthesis cache entry').channels[0]! };
        const fullBandAudio = decodeWav(bytes.subarray(fullBand.byteOffset), 'synthesis cache entry (full band)');
        return {
          ...rest,
          audio: decodeWav(bytes.subarray(0, fullBand.byteOffset), 'synthesis cache entry').channels[0]!,
          fullBand: { audio: fullBandAudio.channels[0]!, sampleRate: fullBandAudio.sampleRate },
        };
      },
      // the entry's sha256 names its clips in the placement's cache key, which then need not hash them again
      stored: (value, dataSha256) => {
        recordStoredSamplesDigest(value.audio, dataSha256, 'audio');
        if (value.fullBand) recordStoredSamplesDigest(value.fullBand.audio, dataSha256, 'full-band');
      },
    },
    '.wav',
  );
}
