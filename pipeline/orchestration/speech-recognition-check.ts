/**
 * The build's speech recognition check (`quality.speechRecognition`, pipeline/config-schema-quality.ts)
 * as the options a remote TTS engine takes (pipeline/services/tts/synthesis-recognition.ts): an
 * OpenAI-compatible transcriber (pipeline/services/asr/openai-transcription.ts) and the highest
 * accepted error rate. Local engines are not checked.
 */
import type { BuildConfig } from '../config.ts';
import type { Language } from '../model/types.ts';
import { ttsOf } from '../config.ts';
import { OpenAITranscriber } from '../services/asr/openai-transcription.ts';
import { readApiKey } from '../services/llm/backend-settings.ts';
import { isRemoteSpeechEngine } from '../services/tts/synthesizer-registry.ts';
import { errorRateUnitOf } from '../services/asr/recognition-error-rate.ts';
import { languagePackOf } from '../model/language-pack.ts';
import type { DatasetSummary } from '../model/dataset-summary.ts';
import type { SpeechRecognitionCheckOptions } from '../services/tts/synthesis-recognition.ts';
import type { RecognitionCounts } from '../services/tts/recognition-tally.ts';

/**
 * The check's options for `language`'s engine, or undefined when the check is off or the engine is local.
 * @param environment where `apiKeyVariable` is looked up (default `process.env`).
 * @throws MissingApiKeyError when `apiKeyVariable` names a variable that is not set.
 */
export function speechRecognitionCheckOf(
  config: BuildConfig,
  language: Language,
  environment: Readonly<Record<string, string | undefined>> = process.env,
): SpeechRecognitionCheckOptions | undefined {
  const settings = config.quality.speechRecognition;
  if (settings === null || !speechRecognitionIsChecked(config, language)) return undefined;
  const apiKey =
    settings.apiKeyVariable === undefined
      ? undefined
      : readApiKey([settings.apiKeyVariable], { environmentVariables: environment }, 'speech recognition');
  return {
    transcriber: new OpenAITranscriber({
      baseUrl: settings.baseUrl.replace(/\/+$/, ''),
      model: settings.model,
      timeoutMilliseconds: settings.timeoutSeconds * 1000,
      ...(apiKey === undefined ? {} : { apiKey }),
    }),
    maximumErrorRate: settings.maximumErrorRate,
  };
}

/** Whether the check runs on `language`'s clips: configured, and the language's engine is remote. */
export function speechRecognitionIsChecked(config: BuildConfig, language: Language): boolean {
  return config.quality.speechRecognition !== null && isRemoteSpeechEngine(ttsOf(config, language).backend);
}

/**
 * The base dataset summary's speech recognition entry (`speechRecognition`): `counts` (utterances
 * counted, their edits and reference tokens: words, or characters for languages written without
 * spaces, summed over the clips the committed dialogues are spoken with, as their synthesis cache
 * entries hold them) and edits / reference tokens (null when there are none); undefined when the
 * check does not run on `language` ({@link speechRecognitionIsChecked}).
 */
export function speechRecognitionSummaryOf(
  config: BuildConfig,
  language: Language,
  counts: RecognitionCounts,
): DatasetSummary['speechRecognition'] {
  if (!speechRecognitionIsChecked(config, language)) return undefined;
  return {
    unit: errorRateUnitOf(languagePackOf(language)),
    ...counts,
    errorRate: counts.referenceTokens === 0 ? null : counts.edits / counts.referenceTokens,
  };
}

/** The sum of two counts of the check. */
export function addRecognitionCounts(first: RecognitionCounts, second: RecognitionCounts): RecognitionCounts {
  return {
    utterances: first.utterances + second.utterances,
    edits: first.edits + second.edits,
    referenceTokens: first.referenceTokens + second.referenceTokens,
  };
}
