/**
 * Which languages a CosyVoice model speaks, and the text it is given, by the language packs
 * (pipeline/model/language-pack.ts `cosyVoice`): CosyVoice2 speaks zh, en, ja, ko, yue; CosyVoice3 adds
 * de, es, fr, it, ru (FunAudioLLM/CosyVoice README and the CosyVoice 2 and 3 papers). The model is told
 * apart by the label the config gives it (`tts.{lang}.service.model`, default `CosyVoice2-0.5B`;
 * `Fun-CosyVoice3-0.5B-2512` for the third generation): the same FastAPI and Triton protocols serve both.
 *
 * Language tags: CosyVoice 1 (CosyVoice-300M) marks cross-lingual text with whisper-tokenizer special
 * tokens `<|zh|>`, `<|en|>`, `<|jp|>`, `<|yue|>`, `<|ko|>` (upstream example.py, cosyvoice/tokenizer/
 * tokenizer.py `LANGUAGES`); CosyVoice2 and 3 use a Qwen tokenizer whose added special tokens are
 * `<|endofprompt|>` and paralinguistic marks only, and their examples send text untagged, so a tag is
 * read as text (leading garbage, docs/services.md "Speech backends"). A pack's `cosyVoice.tag` is sent before
 * the text when set; every built-in pack leaves it null.
 */
import { findLanguagePack, knownLanguageCodes, languagePackOf, languagePackSource } from '../../model/language-pack.ts';
import type { Language } from '../../model/types.ts';

/** The CosyVoice generation a language pack's `cosyVoice` field names. */
export type CosyVoiceGeneration = 'cosyvoice2' | 'cosyvoice3';

/** Display names of the generations, for messages. */
const GENERATION_NAMES: Readonly<Record<CosyVoiceGeneration, string>> = {
  cosyvoice2: 'CosyVoice2',
  cosyvoice3: 'CosyVoice3',
};

/**
 * The generation of a served model from its label: `cosyvoice3` when the label names CosyVoice 3
 * (`Fun-CosyVoice3-0.5B-2512`, `CosyVoice3 TensorRT-LLM`, `cosyvoice-3`), else `cosyvoice2`.
 */
export function cosyVoiceGeneration(modelLabel: string): CosyVoiceGeneration {
  return /cosy\s*voice[\s_-]*3/i.test(modelLabel) ? 'cosyvoice3' : 'cosyvoice2';
}

/** The known languages (built-in and registered packs) a generation speaks, sorted. */
export function cosyVoiceLanguages(generation: CosyVoiceGeneration): Language[] {
  return knownLanguageCodes().filter((code) => findLanguagePack(code)?.cosyVoice[generation] === true);
}

/**
 * Why a CosyVoice model cannot speak a language, or null when it can.
 * @param field the config field to name (`tts.de.service.model`)
 * @returns one line naming the field, the model and the pack file, e.g. `tts.de.service.model:
 *   CosyVoice2-0.5B (CosyVoice2) does not speak German (…/de.yaml cosyVoice.cosyvoice2: false; …)`
 * @throws LanguagePackError for a language without a pack
 */
export function cosyVoiceLanguageProblem(language: Language, modelLabel: string, field: string): string | null {
  const generation = cosyVoiceGeneration(modelLabel);
  const pack = languagePackOf(language);
  if (pack.cosyVoice[generation]) return null;
  const other: CosyVoiceGeneration = generation === 'cosyvoice2' ? 'cosyvoice3' : 'cosyvoice2';
  const instead = pack.cosyVoice[other] ? `; ${GENERATION_NAMES[other]} does` : '';
  return (
    `${field}: ${modelLabel} (${GENERATION_NAMES[generation]}) does not speak ${pack.name} ` +
    `(${languagePackSource(pack)} cosyVoice.${generation}: false; ${GENERATION_NAMES[generation]} speaks ${cosyVoiceLanguages(generation).join(', ')}${instead})`
  );
}

/** The text sent to CosyVoice for `text` in `language`: the pack's `cosyVoice.tag` before it when set. */
export function cosyVoiceText(text: string, language: Language): string {
  const tag = findLanguagePack(language)?.cosyVoice.tag ?? null;
  return tag === null ? text : `${tag}${text}`;
}
