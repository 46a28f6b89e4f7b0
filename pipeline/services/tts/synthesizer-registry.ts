/**
 * Which engine speaks which language, with which default voices, and how to create an engine by name.
 */
import type { Language, SpeakerRole } from '../../model/types.ts';
import {
  COSYVOICE2_ENGINE_ID,
  cosyVoice2FastApiSettingsSchema,
  createCosyVoice2Synthesizer,
} from './cosyvoice2-fastapi.ts';
import {
  COSYVOICE2_TRITON_ENGINE_ID,
  cosyVoice2TritonSettingsSchema,
  createCosyVoice2TritonSynthesizer,
} from './cosyvoice2-triton.ts';
import { createEspeakNgSynthesizer, ESPEAK_NG_DEFAULT_VOICES, ESPEAK_NG_ENGINE_ID } from './espeak-ng.ts';
import { createOpenAiSpeechSynthesizer, OPENAI_SPEECH_ENGINE_ID, openAiSpeechSettingsSchema } from './openai-speech.ts';
import { createOpenJtalkSynthesizer, OPEN_JTALK_DEFAULT_VOICES, OPEN_JTALK_ENGINE_ID } from './open-jtalk.ts';
import type { RemoteSynthesisStatistics } from './remote-synthesizer.ts';
import type { SpeechSynthesizer, VoiceSettings } from './speech-synthesizer.ts';
import type { SpeechActivityDetector } from './synthesis-checks.ts';
import type { SpeechRecognitionCheckOptions } from './synthesis-recognition.ts';
import type { SpeechLengthCheckOptions } from './synthesis-speech-length.ts';

/** Engines that run on this machine (programs installed by `npm run setup`). */
export type LocalSpeechEngineId = typeof ESPEAK_NG_ENGINE_ID | typeof OPEN_JTALK_ENGINE_ID;

/** Engines behind a network service; they need service settings (URLs, sample rate, ...). */
export type RemoteSpeechEngineId =
  typeof COSYVOICE2_ENGINE_ID | typeof COSYVOICE2_TRITON_ENGINE_ID | typeof OPENAI_SPEECH_ENGINE_ID;

/** Engines this project can create by name. */
export type SpeechEngineId = LocalSpeechEngineId | RemoteSpeechEngineId;

/** Runtime hooks of remote engines (not part of the YAML settings). */
export interface RemoteEngineRuntime {
  /** Speech finder of the output checks, e.g. `speechActivityDetectorFrom(silero)`; default the energy detector. */
  detector?: SpeechActivityDetector;
  /** Called with the engine's counters after each utterance (progress display). */
  onProgress?: (statistics: RemoteSynthesisStatistics) => void;
  /** Transcribe every synthesized clip and resynthesize the misspoken ones (synthesis-recognition.ts); unset = no recognition. */
  speechRecognition?: SpeechRecognitionCheckOptions;
  /** Resynthesize, once, clips whose speech runs well beyond their text (synthesis-speech-length.ts; voices with a prompt transcript); unset = no check. */
  speechLength?: SpeechLengthCheckOptions;
}

/**
 * Engine factories by name. Local engines probe their program and read its version and ignore
 * `settings`; remote engines validate `settings` (their zod schema in
 * {@link REMOTE_SPEECH_ENGINE_SETTINGS_SCHEMAS}) and, unless `probe: false`, check their servers.
 */
export const SPEECH_ENGINE_FACTORIES: Readonly<
  Record<SpeechEngineId, (settings?: unknown, runtime?: RemoteEngineRuntime) => Promise<SpeechSynthesizer>>
> = Object.freeze({
  [ESPEAK_NG_ENGINE_ID]: () => createEspeakNgSynthesizer(),
  [OPEN_JTALK_ENGINE_ID]: () => createOpenJtalkSynthesizer(),
  [COSYVOICE2_ENGINE_ID]: (settings?: unknown, runtime: RemoteEngineRuntime = {}) =>
    createCosyVoice2Synthesizer(settings, runtime),
  [COSYVOICE2_TRITON_ENGINE_ID]: (settings?: unknown, runtime: RemoteEngineRuntime = {}) =>
    createCosyVoice2TritonSynthesizer(settings, runtime),
  [OPENAI_SPEECH_ENGINE_ID]: (settings?: unknown, runtime: RemoteEngineRuntime = {}) =>
    createOpenAiSpeechSynthesizer(settings, runtime),
});

/** The settings schema of each remote engine, for the build configuration (YAML `tts.<language>.service`). */
export const REMOTE_SPEECH_ENGINE_SETTINGS_SCHEMAS = Object.freeze({
  [COSYVOICE2_ENGINE_ID]: cosyVoice2FastApiSettingsSchema,
  [COSYVOICE2_TRITON_ENGINE_ID]: cosyVoice2TritonSettingsSchema,
  [OPENAI_SPEECH_ENGINE_ID]: openAiSpeechSettingsSchema,
});

/** True for engines that need service settings. */
export function isRemoteSpeechEngine(engine: SpeechEngineId): engine is RemoteSpeechEngineId {
  return engine in REMOTE_SPEECH_ENGINE_SETTINGS_SCHEMAS;
}

/** The engine and the two speaker identities (user, system) used for one language. */
export interface LanguageVoices {
  engine: SpeechEngineId;
  voices: Readonly<Record<SpeakerRole, VoiceSettings>>;
}

/**
 * Default engine and voices per language: English with espeak-ng (user en-us+m3 pitch 40 165 wpm,
 * system en-us+f3 pitch 60 160 wpm), Japanese with Open JTalk (user: no shift, all-pass 0.55, rate 1.0;
 * system: +4 semitones, all-pass 0.50, rate 1.1). The two roles always differ audibly.
 */
export const DEFAULT_VOICES: Readonly<Record<Language, LanguageVoices>> = Object.freeze({
  en: Object.freeze({ engine: ESPEAK_NG_ENGINE_ID, voices: ESPEAK_NG_DEFAULT_VOICES }),
  ja: Object.freeze({ engine: OPEN_JTALK_ENGINE_ID, voices: OPEN_JTALK_DEFAULT_VOICES }),
});

/**
 * Creates an engine by name.
 *
 * @param engine the engine id.
 * @param settings remote engines only: their service settings (see {@link REMOTE_SPEECH_ENGINE_SETTINGS_SCHEMAS}).
 * @param runtime remote engines only: speech finder for the checks, a progress callback, the speech recognition check.
 * @throws SpeechSynthesisError `missing-binary` (with the `npm run setup` hint) when a local engine is
 *   not installed; RemoteServiceSettingsError when a remote engine's settings are missing or invalid;
 *   SpeechSynthesisError `service-unreachable` / `service-error` when its servers cannot be used.
 */
export function createSpeechSynthesizer(
  engine: SpeechEngineId,
  settings?: unknown,
  runtime?: RemoteEngineRuntime,
): Promise<SpeechSynthesizer> {
  return SPEECH_ENGINE_FACTORIES[engine](settings, runtime);
}
