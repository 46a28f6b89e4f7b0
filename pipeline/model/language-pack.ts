/**
 * A language pack: everything the pipeline needs to know about one language, as data keyed by its
 * BCP-47 code. Built-in packs are YAML files in `pipeline/model/language-packs/` (en, ja, zh, de, es,
 * fr, ko); a user adds a language with a YAML file of the same shape (`languagePacks:` in the build
 * config, or `duplexsynth build --language-pack FILE`), with no code change. `duplexsynth schema`
 * writes its JSON Schema beside the config's (`pipeline/language-pack.schema.json`).
 *
 * What each field drives:
 * - `script.scripts`: the Unicode scripts its letters are written in; the corpus check (> 50 % of the
 *   letters outside them: the text is not in this language) and the reply check (no letters in it;
 *   `missingLetters`, `latinAdvice`, `foreignLetters` word its messages).
 * - `script.segmentation`: how text becomes the words of `txt_align`: `spaces` (white space, punctuation
 *   stripped), `intl-segmenter` (ICU word boundaries, `Intl.Segmenter` word granularity, dictionary-based
 *   for Chinese, Japanese, Thai, Khmer, Lao, Burmese), `japanese-morphemes` (kuromoji IPADIC morphemes).
 * - `numbers`: `english-rules` (the offline rules of pipeline/text/spoken-english.ts), a number library
 *   (`{library: n2words, locale: es-ES, years, units}`: the offline rewrite of a corpus in the language
 *   spells numbers, years and units with it, pipeline/text/spoken-numbers.ts), or `language-model` (no
 *   library covers the language: only an LLM rewrite or translation writes numbers as words). Every
 *   reply is checked to hold no digits.
 * - `offlineVoice`: the offline engine (`espeak-ng` voice name from `espeak-ng --voices`, or
 *   `open-jtalk` for Japanese) and its speaker roster (voice variants × pitches).
 * - `cosyVoice`: which CosyVoice generation speaks the language (a build with a model that does not
 *   stops before any request), the language tag sent before the text (none for CosyVoice2/3), and
 *   what the text needs (pipeline/services/tts/cosyvoice-languages.ts).
 * - `phrases`: the user's backchannels, and the lead-ins that pad a too-short question or answer.
 * - `speechRate`: the plausible speaking rate of synthesized speech (spoken units per second), the unit
 *   and counter of the quality speech rate (syllables; morae for Japanese), and the repair of speech an
 *   offline engine spoke implausibly slowly (Japanese phrase breaks).
 * - `timing`: the shipped timing statistics (`pipeline/timeline/defaults/{name}.timing.json`), or null:
 *   the cross-language prior (pipeline/timeline/defaults/prior.timing.json) with a warning.
 * - `cometKiwi`: whether COMETKiwi (XLM-R based) covers the language; scoring (English source →
 *   this target) records "not computed" for a language it does not cover.
 * - `pausePoints`: where a question may be split for a user TURN_HOLD (the word lists, or Japanese
 *   particles).
 * The word separator of a transcript follows `script.segmentation` (spaces, or none).
 */
import { readdirSync } from 'node:fs';
import { readInputTextSync } from '../storage/read-input-file.ts';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { languagePackSchema, type LanguagePack } from './language-pack-schema.ts';
import { describeIssues } from './validation.ts';
import { packageFile } from '../storage/package-files.ts';
import { yamlErrorLine } from '../storage/yaml-error.ts';

export { languagePackSchema, type LanguagePack } from './language-pack-schema.ts';

/** A language pack that cannot be used: the message names the file and the field. */
export class LanguagePackError extends Error {
  override name = 'LanguagePackError';
}

/** Folder of the built-in packs. */
export const BUILT_IN_LANGUAGE_PACK_DIRECTORY = packageFile('pipeline', 'model', 'language-packs');

/**
 * Validates a parsed language pack.
 * @param value the parsed YAML
 * @param source the file (or `config.yaml: languagePacks.0`) for messages
 * @throws LanguagePackError naming `source` and each bad field
 */
export function parseLanguagePack(value: unknown, source: string): LanguagePack {
  const result = languagePackSchema.safeParse(value);
  if (!result.success)
    throw new LanguagePackError(`${source}: invalid language pack: ${describeIssues(result.error.issues)}`);
  sources.set(result.data, source);
  return result.data;
}

const sources = new WeakMap<LanguagePack, string>();

/** Where a pack was read from (its file, or `config.yaml: languagePacks.0`), for messages. */
export function languagePackSource(pack: LanguagePack): string {
  return sources.get(pack) ?? `language pack ${pack.code}`;
}

/** Largest language pack file read (bytes): the built-in packs are a few kilobytes. */
const LANGUAGE_PACK_MAXIMUM_BYTES = 1024 * 1024;

/**
 * Reads and validates a language pack YAML file.
 * @throws LanguagePackError when the file cannot be read, is not YAML or fails the schema (naming the file and field)
 */
export function readLanguagePackFile(file: string): LanguagePack {
  let text: string;
  try {
    // a regular file of at most 1 MB, read without blocking on a FIFO (../storage/read-input-file.ts)
    text = readInputTextSync(file, { maximumBytes: LANGUAGE_PACK_MAXIMUM_BYTES });
  } catch (error) {
    throw new LanguagePackError(`${file}: cannot read language pack: ${(error as Error).message}`);
  }
  let value: unknown;
  try {
    value = parseYaml(text);
  } catch (error) {
    throw new LanguagePackError(`${file}: not valid YAML: ${yamlErrorLine(error as Error)}`);
  }
  return parseLanguagePack(value, file);
}

let builtIn: Map<string, LanguagePack> | undefined;
const added = new Map<string, LanguagePack>();

/** The built-in packs by code (read once per process). @throws LanguagePackError for a broken built-in file */
export function builtInLanguagePacks(): ReadonlyMap<string, LanguagePack> {
  if (!builtIn) {
    const packs = new Map<string, LanguagePack>();
    for (const name of readdirSync(BUILT_IN_LANGUAGE_PACK_DIRECTORY)
      .filter((file) => file.endsWith('.yaml'))
      .sort()) {
      const file = path.join(BUILT_IN_LANGUAGE_PACK_DIRECTORY, name);
      const pack = readLanguagePackFile(file);
      if (`${pack.code}.yaml` !== name)
        throw new LanguagePackError(`${file}: code: ${pack.code} does not match the file name`);
      packs.set(pack.code, pack);
    }
    builtIn = packs;
  }
  return builtIn;
}

/**
 * Makes user packs known to this process (a build registers its config's packs before any work).
 * A user pack replaces the built-in pack of the same code.
 */
export function registerLanguagePacks(packs: readonly LanguagePack[]): void {
  for (const pack of packs) added.set(pack.code, pack);
}

/**
 * Forgets every pack {@link registerLanguagePacks} made known (the built-in packs stay): for test files
 * that share one process (the unit tests' setup file, pipeline/testing/between-files.ts), so a pack one
 * file's build registered does not change the languages of the next.
 */
export function forgetRegisteredLanguagePacks(): void {
  added.clear();
}

/** The pack of a language, or undefined when there is none. */
export function findLanguagePack(code: string): LanguagePack | undefined {
  return added.get(code) ?? builtInLanguagePacks().get(code);
}

/** Codes of every known pack, sorted. */
export function knownLanguageCodes(): string[] {
  return [...new Set([...builtInLanguagePacks().keys(), ...added.keys()])].sort();
}

/**
 * The pack of a language.
 * @throws LanguagePackError `no language pack for {code}` with the known codes and how to add one
 */
export function languagePackOf(code: string): LanguagePack {
  const pack = findLanguagePack(code);
  if (!pack) {
    throw new LanguagePackError(
      `no language pack for ${code} (built in or added: ${knownLanguageCodes().join(', ')}); add one with --language-pack FILE or languagePacks: in the build config (docs/languages.md)`,
    );
  }
  return pack;
}

/** The JSON Schema of a language pack file (for editors). */
export function languagePackJsonSchema(): unknown {
  return z.toJSONSchema(languagePackSchema, { io: 'input' });
}

/**
 * Share of the letters of `text` that are outside the pack's scripts (letters: `\p{L}`; 0 when there
 * are none). Latin-script acronyms in a CJK text count as outside.
 */
export function lettersOutsideScript(text: string, pack: LanguagePack): number {
  const inScript = new RegExp(pack.script.scripts.map((name) => `\\p{Script=${name}}`).join('|'), 'u');
  let letters = 0;
  let outside = 0;
  for (const character of text) {
    if (!/\p{L}/u.test(character)) continue;
    letters += 1;
    if (!inScript.test(character)) outside += 1;
  }
  return letters === 0 ? 0 : outside / letters;
}
