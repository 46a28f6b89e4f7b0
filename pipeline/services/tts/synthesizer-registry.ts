/**
 * Which engine speaks which language, with which default voices, and how to create an engine by name.
 */
import type { Language, SpeakerRole } from '../../model/types.ts';
import { createEspeakNgSynthesizer, ESPEAK_NG_DEFAULT_VOICES, ESPEAK_NG_ENGINE_ID } from './espeak-ng.ts';
import { createOpenJtalkSynthesizer, OPEN_JTALK_DEFAULT_VOICES, OPEN_JTALK_ENGINE_ID } from './open-jtalk.ts';
import type { SpeechSynthesizer, VoiceSettings } from './speech-synthesizer.ts';

/** Engines this project can create by name. */
export type SpeechEngineId = typeof ESPEAK_NG_ENGINE_ID | typeof OPEN_JTALK_ENGINE_ID;

/** Engine factories by name (each probes its program and reads its version). */
export const SPEECH_ENGINE_FACTORIES: Readonly<Record<SpeechEngineId, () => Promise<SpeechSynthesizer>>> = Object.freeze({
  [ESPEAK_NG_ENGINE_ID]: () => createEspeakNgSynthesizer(),
  [OPEN_JTALK_ENGINE_ID]: () => createOpenJtalkSynthesizer(),
});

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
 * @throws SpeechSynthesisError `missing-binary` (with the `npm run setup` hint) when it is not installed.
 */
export function createSpeechSynthesizer(engine: SpeechEngineId): Promise<SpeechSynthesizer> {
  return SPEECH_ENGINE_FACTORIES[engine]();
}
