/**
 * Checks run before any work of a build: the configuration can build the languages it asks for
 * (language packs, translation backend, TTS engines that can speak the language) and the offline
 * espeak-ng voices exist.
 */
import type { BuildConfig } from '../config.ts';
import { ConfigError, configSourceOf, ttsOf } from '../config.ts';
import {
  findLanguagePack,
  knownLanguageCodes,
  languagePackOf,
  languagePackSource,
  registerLanguagePacks,
} from '../model/language-pack.ts';
import { cosyVoiceLanguageProblem } from '../services/tts/cosyvoice-languages.ts';
import { espeakNgVoiceNames } from '../services/tts/espeak-ng.ts';
import { REMOTE_SPEECH_ENGINE_SETTINGS_SCHEMAS } from '../services/tts/synthesizer-registry.ts';

/**
 * Fail fast, before any work, on a configuration that cannot build the requested languages.
 * @throws ConfigError with what to configure
 */
export function checkBuildIsPossible(config: BuildConfig): void {
  registerLanguagePacks(config.languagePacks);
  const source = configSourceOf(config);
  if (config.corpus.path === '')
    throw new ConfigError(
      `${source ?? 'the build config'}: corpus.path: no corpus; name it there or give --corpus FILE`,
    );
  for (const [index, language] of config.languages.entries()) {
    if (!findLanguagePack(language)) {
      throw new ConfigError(
        `${source === undefined ? 'languages' : `${source}: languages.${index}`}: no language pack for ${language} (built in or added: ${knownLanguageCodes().join(', ')}); add one with --language-pack FILE or languagePacks: in the build config (docs/languages.md)`,
      );
    }
  }
  // a language other than the corpus's is translated from it
  const translated = config.languages.find((language) => language !== config.corpus.language);
  if (translated !== undefined && config.corpus.language !== 'en') {
    throw new ConfigError(
      `languages: ${translated} differs from corpus.language ${config.corpus.language}; translation is from English only (the prompt templates), so build ${config.corpus.language} alone`,
    );
  }
  if (translated !== undefined && config.llm.translate.backend === 'none') {
    const name = languagePackOf(translated).name;
    throw new ConfigError(
      `${name} needs a translation backend: the corpus is in ${languagePackOf(config.corpus.language).name} (corpus.language: ${config.corpus.language}). ` +
        `If the corpus is written in ${name}, say so: corpus.language: ${translated} in the build config, or --corpus-language ${translated}, and nothing is translated. ` +
        'Else set llm.translate in a build config (--config FILE) to an LLM, ' +
        '{backend: gemini, model: gemma-4-31b-it} with GEMINI_API_KEY set, or {backend: openai-compatible, baseUrl: ..., model: ...}, ' +
        'or to recorded responses {backend: replay, file: ..., model: ...}; see docs/services.md. The demo corpus has recordings (npm run demo).',
    );
  }
  for (const language of config.languages) {
    const tts = ttsOf(config, language);
    const pack = languagePackOf(language);
    if (tts.backend === 'espeak-ng' && pack.offlineVoice.engine === 'open-jtalk') {
      throw new ConfigError(
        `tts.${language}.backend: espeak-ng cannot read ${pack.name} (kanji); use open-jtalk, the offline engine of ${languagePackSource(pack)}`,
      );
    }
    if (tts.backend === 'open-jtalk' && pack.offlineVoice.engine !== 'open-jtalk')
      throw new ConfigError(`tts.${language}.backend: open-jtalk speaks Japanese only`);
    // a CosyVoice model speaks the languages its generation was trained on (language pack cosyVoice)
    if (tts.backend === 'cosyvoice2' || tts.backend === 'cosyvoice2-triton') {
      const label = REMOTE_SPEECH_ENGINE_SETTINGS_SCHEMAS[tts.backend].parse(tts.service ?? {}).model;
      const problem = cosyVoiceLanguageProblem(language, label, `tts.${language}.service.model`);
      if (problem !== null) throw new ConfigError(problem);
    }
  }
}

/**
 * Checks, before any work, that the espeak-ng voice of each language built with espeak-ng without
 * configured voices (its language pack's `offlineVoice.voice`) is one of espeak-ng's voice names,
 * aliases or voice files (`espeak-ng --voices`), in any case.
 * @throws ConfigError naming the pack's field and the voice
 */
export async function checkOfflineVoices(config: BuildConfig): Promise<void> {
  const needed = config.languages.filter(
    (language) =>
      ttsOf(config, language).backend === 'espeak-ng' && !ttsOf(config, language).voices && language !== 'en',
  );
  if (needed.length === 0) return;
  const voices = await espeakNgVoiceNames();
  for (const language of needed) {
    const pack = languagePackOf(language);
    if (!voices.has(pack.offlineVoice.voice.toLowerCase())) {
      throw new ConfigError(
        `${languagePackSource(pack)}: offlineVoice.voice: espeak-ng has no voice "${pack.offlineVoice.voice}" (see espeak-ng --voices)`,
      );
    }
  }
}
