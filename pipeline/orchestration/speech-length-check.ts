/**
 * The build's speech-length check (`quality.speechLength`, pipeline/config-schema-quality.ts) as the
 * options a remote TTS engine takes (pipeline/services/tts/synthesis-speech-length.ts). It runs only
 * without a recognizer (`quality.speechRecognition` null), which hears the words themselves; local
 * engines are not checked.
 */
import type { BuildConfig } from '../config.ts';
import type { Language } from '../model/types.ts';
import { ttsOf } from '../config.ts';
import { isRemoteSpeechEngine } from '../services/tts/synthesizer-registry.ts';
import type { SpeechLengthCheckOptions } from '../services/tts/synthesis-speech-length.ts';

/** The check's margins for `language`'s engine, or undefined when it is off, a recognizer is configured or the engine is local. */
export function speechLengthCheckOf(config: BuildConfig, language: Language): SpeechLengthCheckOptions | undefined {
  const settings = config.quality.speechLength;
  if (settings === null || config.quality.speechRecognition !== null) return undefined;
  if (!isRemoteSpeechEngine(ttsOf(config, language).backend)) return undefined;
  return { ...settings };
}
