/**
 * The number-spelling libraries a language pack may name (`numbers.library`): npm `n2words` (71
 * languages, one module per locale: `n2words/es-ES`) and npm `to-words` (`to-words/fr-FR`). Both are
 * dependencies of the package and work offline; a locale is a module of the library, so whether it
 * exists is known when the pack is read.
 */
import { createRequire } from 'node:module';

/** The libraries a pack may name. */
export const NUMBER_LIBRARIES = ['n2words', 'to-words'] as const;
/** One of {@link NUMBER_LIBRARIES}. */
export type NumberLibraryName = (typeof NUMBER_LIBRARIES)[number];

/** Cardinal words of a non-negative number given as digits with an optional `.` fraction (`"1887"`, `"3.5"`). */
export type CardinalSpeller = (digits: string) => string;

const require = createRequire(import.meta.url);

interface N2wordsModule {
  toCardinal(value: string, options?: { formal?: boolean }): string;
  toOrdinal?(value: string): string;
}
interface ToWordsModule {
  toWords(value: number): string;
}

const loaded = new Map<string, CardinalSpeller | null>();

/**
 * The cardinal speller of a library's locale, or null when the library has no such locale.
 * n2words is asked for everyday numerals (`formal: false`: 一千八百八十七, not the financial 壹仟捌佰捌拾柒);
 * to-words writes Title Case, lower-cased here in the locale.
 *
 * @param library `n2words` or `to-words`.
 * @param locale the library's module name (`es-ES`, `zh-Hans-CN`, `nl-NL`); see its `src/` or
 *   `dist/esm/locales/` folder.
 */
export function cardinalSpeller(library: NumberLibraryName, locale: string): CardinalSpeller | null {
  const key = `${library}/${locale}`;
  if (loaded.has(key)) return loaded.get(key) ?? null;
  let speller: CardinalSpeller | null = null;
  if (/^[A-Za-z]{2,3}(?:-[A-Za-z0-9]{2,8})*$/.test(locale)) {
    try {
      if (library === 'n2words') {
        const module = require(`n2words/${locale}`) as N2wordsModule;
        speller = (digits) => module.toCardinal(digits, { formal: false });
      } else {
        const module = require(`to-words/${locale}`) as ToWordsModule;
        speller = (digits) => module.toWords(Number(digits)).toLocaleLowerCase(locale);
      }
    } catch {
      speller = null;
    }
  }
  loaded.set(key, speller);
  return speller;
}

const loadedOrdinals = new Map<string, CardinalSpeller | null>();

/**
 * The ordinal speller of a library's locale (`"3"` → `dritte` in de-DE, n2words `toOrdinal`), or null
 * when the library has no ordinals for it (to-words has none; an n2words locale without `toOrdinal`).
 *
 * @param library `n2words` or `to-words`.
 * @param locale the library's module name, as for {@link cardinalSpeller}.
 */
export function ordinalSpeller(library: NumberLibraryName, locale: string): CardinalSpeller | null {
  const key = `${library}/${locale}`;
  if (loadedOrdinals.has(key)) return loadedOrdinals.get(key) ?? null;
  let speller: CardinalSpeller | null = null;
  if (library === 'n2words' && cardinalSpeller(library, locale) !== null) {
    const module = require(`n2words/${locale}`) as N2wordsModule;
    const toOrdinal = module.toOrdinal;
    if (typeof toOrdinal === 'function') speller = (digits) => toOrdinal(digits);
  }
  loadedOrdinals.set(key, speller);
  return speller;
}

/**
 * A speller that reads the decimal separator with `decimalWord` in place of the library's own word
 * (n2words reads `punto` for es-ES, where Spain says `coma`). The library's word is found by spelling
 * `0.5` (`cero punto cinco`) and taking what stands between the words of 0 and 5; the words of the whole part
 * and of the fraction stay the library's.
 *
 * @param speak a speller of {@link cardinalSpeller}.
 * @param decimalWord the word to read for the separator (`coma`), or undefined to keep the library's.
 * @returns `speak` itself when `decimalWord` is undefined or the library's word cannot be found.
 */
export function withDecimalWord(speak: CardinalSpeller, decimalWord: string | undefined): CardinalSpeller {
  if (decimalWord === undefined) return speak;
  const zero = speak('0');
  const five = speak('5');
  const zeroPointFive = speak('0.5');
  if (!zeroPointFive.startsWith(zero) || !zeroPointFive.endsWith(five)) return speak;
  const libraryWord = zeroPointFive.slice(zero.length, zeroPointFive.length - five.length).trim();
  if (libraryWord === '') return speak;
  return (digits) => {
    const words = speak(digits);
    const point = digits.indexOf('.');
    if (point < 0) return words;
    const whole = speak(digits.slice(0, point));
    const start = words.startsWith(whole) ? whole.length : 0;
    return words.slice(0, start) + words.slice(start).replace(libraryWord, decimalWord);
  };
}
