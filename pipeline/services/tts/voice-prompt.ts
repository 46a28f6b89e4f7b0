/**
 * Voice prompts for voice-cloning TTS services (CosyVoice2 zero-shot, cross-lingual, instruct2; the
 * Triton model): a recording of the reference speaker, read once, made 16 kHz mono, cut to the
 * service's 30 s limit, encoded as 16-bit WAV for upload, with its speaking tempo measured so the
 * output's tempo can be compared with it (synthesis-checks.ts, SpeechRateMonitor).
 *
 * Service rules (docs/services.md, "Voice prompts"): a file libsndfile reads (we send WAV PCM16), >= 16 kHz,
 * mono preferred, <= 30 s (CosyVoice's frontend asserts it when extracting speech tokens), and
 * `prompt_text` must be the transcript of the prompt or the prompt leaks into the output.
 */
import { readFile, stat } from 'node:fs/promises';
import { resolve as resolvePath } from 'node:path';
import type { Language } from '../../model/types.ts';
import { downmixToMono, quantizeToPcm16, WavDecodeError } from '../../audio/raw-audio.ts';
import { resample } from '../../audio/resample.ts';
import { decodeWav, encodeWavPcm16 } from '../../audio/wav.ts';
import type { SpeakerIdentity } from './offline-speaker-roster.ts';
import { SpeechSynthesisError, type VoiceSettings } from './speech-synthesizer.ts';
import { energySpeechDetector, speechRateBoundsOf, spokenLength } from './synthesis-checks.ts';
import type { SpeakerPromptLine } from '../../model/speaker-prompt.ts';

/** Sample rate of prompts sent to the services, Hz (CosyVoice loads prompts at 16 kHz). */
export const VOICE_PROMPT_SAMPLE_RATE = 16000;
/** Longest prompt the services accept, seconds. */
export const VOICE_PROMPT_MAXIMUM_SECONDS = 30;

/** A prompt ready to send. */
export interface VoicePrompt {
  /** The file it was read from. */
  path: string;
  /** Mono samples at {@link VOICE_PROMPT_SAMPLE_RATE}, on the 16-bit grid, at most 30 s. */
  samples: Float32Array;
  /** {@link samples} as a canonical 16-bit PCM WAV file (the multipart upload). */
  wavBytes: Uint8Array;
  /** samples.length / 16000, seconds. */
  durationSeconds: number;
  /** The file's own sample rate, Hz, and duration, seconds. */
  originalSampleRate: number;
  originalDurationSeconds: number;
  /** True when the file was longer than 30 s and was cut (its transcript then no longer matches). */
  cut: boolean;
  /** First speech start to last speech end in {@link samples}, seconds (a level detector relative to the loudest frames, for recorded prompts). */
  speechSeconds: number;
}

/**
 * Reads a prompt file and prepares it: downmix to mono, resample to 16 kHz (libsamplerate, best
 * quality), cut to the first 30 s, round to the 16-bit grid, encode as WAV.
 *
 * @param engine engine id for errors.
 * @param path WAV file (any PCM/float encoding {@link decodeWav} reads).
 * @throws SpeechSynthesisError `invalid-voice` when the file cannot be read or decoded, or its sample
 *   rate is below 16 kHz (upsampling would hand the service a band-limited voice).
 */
export async function loadVoicePrompt(engine: string, path: string): Promise<VoicePrompt> {
  let bytes: Uint8Array;
  try {
    bytes = await readFile(path);
  } catch (error) {
    throw new SpeechSynthesisError(
      engine,
      '',
      'invalid-voice',
      `cannot read the voice prompt ${path}: ${(error as Error).message}`,
      { cause: error },
    );
  }
  let audio;
  try {
    audio = decodeWav(bytes, path);
  } catch (error) {
    if (error instanceof WavDecodeError)
      throw new SpeechSynthesisError(
        engine,
        '',
        'invalid-voice',
        `the voice prompt is not usable audio: ${error.message}`,
        { cause: error },
      );
    throw error;
  }
  if (audio.sampleRate < VOICE_PROMPT_SAMPLE_RATE) {
    throw new SpeechSynthesisError(
      engine,
      '',
      'invalid-voice',
      `the voice prompt ${path} is sampled at ${audio.sampleRate} Hz; the service needs at least ${VOICE_PROMPT_SAMPLE_RATE} Hz`,
    );
  }
  const mono = { channels: [downmixToMono(audio)], sampleRate: audio.sampleRate };
  const originalDurationSeconds = (mono.channels[0] as Float32Array).length / audio.sampleRate;
  const resampled = (await resample(mono, VOICE_PROMPT_SAMPLE_RATE, 'best')).channels[0] as Float32Array;
  const maximumSamples = VOICE_PROMPT_MAXIMUM_SECONDS * VOICE_PROMPT_SAMPLE_RATE;
  const cut = resampled.length > maximumSamples;
  const samples = quantizeToPcm16(cut ? resampled.subarray(0, maximumSamples) : resampled);
  if (samples.length === 0)
    throw new SpeechSynthesisError(engine, '', 'invalid-voice', `the voice prompt ${path} holds no samples`);
  return {
    path,
    samples,
    wavBytes: encodeWavPcm16({ channels: [samples], sampleRate: VOICE_PROMPT_SAMPLE_RATE }),
    durationSeconds: samples.length / VOICE_PROMPT_SAMPLE_RATE,
    originalSampleRate: audio.sampleRate,
    originalDurationSeconds,
    cut,
    speechSeconds: await promptSpeechSeconds(samples),
  };
}

/**
 * Speech extent of a recorded prompt: frames within 35 dB of the loudest frames (95th percentile
 * level) and above -50 dBFS count as speech, so a recording's noise floor does not stretch it.
 */
async function promptSpeechSeconds(samples: Float32Array): Promise<number> {
  const frameLength = VOICE_PROMPT_SAMPLE_RATE / 100;
  const levels: number[] = [];
  for (let start = 0; start < samples.length; start += frameLength) {
    let energy = 0;
    const end = Math.min(samples.length, start + frameLength);
    for (let index = start; index < end; index++) energy += (samples[index] as number) ** 2;
    levels.push(10 * Math.log10(energy / frameLength));
  }
  const sorted = levels.filter((level) => Number.isFinite(level)).sort((a, b) => a - b);
  const peak = sorted.length > 0 ? (sorted[Math.floor(sorted.length * 0.95)] as number) : -Infinity;
  const spans = await energySpeechDetector({ silenceThresholdDbfs: Math.max(-50, peak - 35) })(
    samples,
    VOICE_PROMPT_SAMPLE_RATE,
  );
  const first = spans[0];
  const last = spans[spans.length - 1];
  return first && last ? last.endSeconds - first.startSeconds : 0;
}

/**
 * The prompt speaker's tempo: spoken units of the transcript per second of prompt speech, over the
 * language's typical rate (1 = ordinary tempo). The output of a voice-cloning model follows it.
 *
 * @param prompt the prepared prompt.
 * @param transcript its transcript.
 * @param language the transcript's language.
 * @returns the tempo, or null when the prompt has no measurable speech or the transcript no words.
 * @throws WordTokenizerError when the Japanese dictionary cannot be loaded.
 */
export async function voicePromptTempo(
  prompt: VoicePrompt,
  transcript: string,
  language: Language,
): Promise<number | null> {
  if (prompt.speechSeconds <= 0) return null;
  const length = await spokenLength(transcript, language);
  if (length.units === 0) return null;
  return length.units / prompt.speechSeconds / speechRateBoundsOf(language).typicalUnitsPerSecond;
}

/**
 * Guesses the language of a prompt transcript (for its tempo; `promptLanguage` overrides it): Japanese
 * when it holds kana, Mandarin Chinese when it holds Chinese characters without kana, Korean when it
 * holds Hangul, else English.
 */
export function guessTranscriptLanguage(transcript: string): Language {
  if (/[\p{Script=Hiragana}\p{Script=Katakana}]/u.test(transcript)) return 'ja';
  if (/\p{Script=Han}/u.test(transcript)) return 'zh';
  if (/\p{Script=Hangul}/u.test(transcript)) return 'ko';
  return 'en';
}

/**
 * Prepared prompts by path, least recently used dropped first. A file changed on disk (size or
 * modification time, looked at most once per `recheckMilliseconds`) is read again.
 */
export class VoicePromptCache {
  private readonly entries = new Map<string, { signature: string; checkedAt: number; prompt: Promise<VoicePrompt> }>();

  /**
   * @param engine engine id for errors.
   * @param capacity prompts kept (each 10 s prompt takes about 1 MB). Default 64.
   * @param recheckMilliseconds how long a prompt is used without looking at its file again. Default 5000.
   */
  constructor(
    private readonly engine: string,
    private readonly capacity: number = 64,
    private readonly recheckMilliseconds: number = 5_000,
  ) {}

  /**
   * The prepared prompt of `path`, read on first use.
   *
   * @throws SpeechSynthesisError `invalid-voice` (see {@link loadVoicePrompt}); a failed read is not cached.
   */
  async get(path: string): Promise<VoicePrompt> {
    const now = performance.now();
    const cached = this.entries.get(path);
    if (cached && now - cached.checkedAt < this.recheckMilliseconds) return this.touch(path, cached).prompt;
    let signature: string;
    try {
      const info = await stat(path);
      signature = `${info.size}:${info.mtimeMs}`;
    } catch (error) {
      throw new SpeechSynthesisError(
        this.engine,
        '',
        'invalid-voice',
        `cannot read the voice prompt ${path}: ${(error as Error).message}`,
        { cause: error },
      );
    }
    if (cached && cached.signature === signature) {
      cached.checkedAt = now;
      return this.touch(path, cached).prompt;
    }
    const prompt = loadVoicePrompt(this.engine, path);
    this.entries.set(path, { signature, checkedAt: now, prompt });
    prompt.catch(() => {
      if (this.entries.get(path)?.prompt === prompt) this.entries.delete(path);
    });
    while (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value as string);
    return prompt;
  }

  /** Moves an entry to the most recently used end. */
  private touch<Entry>(
    path: string,
    entry: Entry & { signature: string; checkedAt: number; prompt: Promise<VoicePrompt> },
  ): Entry & { prompt: Promise<VoicePrompt> } {
    this.entries.delete(path);
    this.entries.set(path, entry);
    return entry;
  }
}

/** Settings of {@link voicePromptRoster}. */
export interface VoicePromptRosterOptions {
  /** Voice settings shape: `cosyvoice2` (FastAPI, with `mode`) or `cosyvoice2-triton`. Default `cosyvoice2`. */
  engine: 'cosyvoice2' | 'cosyvoice2-triton';
  /** FastAPI mode. Default `zero-shot` (uses the transcript); `cross-lingual` for prompts in another language than the dialogue. */
  mode: 'zero-shot' | 'cross-lingual';
}

/**
 * Speaker identities for a voice-cloning engine from a speaker prompt pool: one per (corpus, speaker),
 * with the speaker's longest clip within 30 s (ties: the smaller clip id), sorted by speaker id
 * (`<corpus>:<speaker>`). Each voice holds the absolute `promptWav` (for this process to read; keys
 * and records name the clip by its sha256 and relative path instead: voice-files.ts), the transcript
 * as `promptText`, and `promptId`/`speaker` (so cache keys change when a clip changes). Give the roster to
 * `drawDialogueSpeakers` (offline-speaker-roster.ts) to draw one speaker group (two distinct speakers)
 * per dialogue; it needs an even number of identities.
 *
 * @param entries manifest lines (filter them first, e.g. by corpus for the dialogue language).
 * @param manifestDirectory folder the entries' relative paths are relative to.
 * @param options voice shape and mode.
 * @returns identities `{speakerId, voice}`.
 */
export function voicePromptRoster(
  entries: readonly SpeakerPromptLine[],
  manifestDirectory: string,
  options: Partial<VoicePromptRosterOptions> = {},
): SpeakerIdentity[] {
  const { engine, mode } = { engine: 'cosyvoice2', mode: 'zero-shot', ...options } as VoicePromptRosterOptions;
  const best = new Map<string, SpeakerPromptLine>();
  for (const entry of entries) {
    if (entry.durationSeconds > VOICE_PROMPT_MAXIMUM_SECONDS) continue;
    const speakerId = `${entry.corpus}:${entry.speaker}`;
    const current = best.get(speakerId);
    if (
      !current ||
      entry.durationSeconds > current.durationSeconds ||
      (entry.durationSeconds === current.durationSeconds && entry.id < current.id)
    )
      best.set(speakerId, entry);
  }
  return [...best.entries()]
    .sort(([first], [second]) => (first < second ? -1 : first > second ? 1 : 0))
    .map(([speakerId, entry]) => {
      const prompt = {
        promptWav: resolvePath(manifestDirectory, entry.path),
        promptText: entry.text,
        promptId: entry.id,
        speaker: speakerId,
      };
      const voice: VoiceSettings = engine === 'cosyvoice2' ? { mode, ...prompt } : prompt;
      return { speakerId, voice };
    });
}
