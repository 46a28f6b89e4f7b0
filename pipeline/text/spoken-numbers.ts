/**
 * Numbers, years and units written as words in any language pack's language, offline, by the number
 * library the pack names (`numbers: {library, locale, years, units}`, pipeline/model/number-library.ts).
 * The offline rewrite of a corpus that is not in English uses it (pipeline/services/llm/rules-backend.ts);
 * English keeps its own rules (./spoken-english.ts).
 *
 * A number is a run of ASCII or full-width digits, with the locale's digit-group separator between
 * groups of three and its decimal separator before a fraction (`Intl.NumberFormat(code)`: `1.887,5` in
 * Spanish, `1,887.5` in Thai). A bare four-digit whole number from 1000 to 2099 is a year and is read by
 * the pack's `years` rule. A unit symbol of the pack's `units` right after a number (a space between
 * allowed) is spoken by its word or template. The decimal separator is read by the pack's `decimalWord`
 * when it gives one (`coma` in Spanish), else by the library's word.
 *
 * A pack with `dates` reads a day 1-31 written with a period before one of its month names as the
 * library's ordinal (`3. Oktober` → `dritte Oktober`), with the ending `dates.endings` gives the word
 * right before it (German `am`, `vom`, `zum`, `dem`, `den`, `des`: `am dritten Oktober`, the dative or
 * accusative); after any other word, or none, the library's own ordinal stays (`der dritte Oktober`).
 * The year after the month is then read as any year.
 */
import type { LanguagePack } from '../model/language-pack.ts';
import { cardinalSpeller, ordinalSpeller, withDecimalWord, type CardinalSpeller } from '../model/number-library.ts';

/** A pack's `numbers` when it names a library. */
export type LibraryNumbers = Exclude<LanguagePack['numbers'], string>;

/** The first and last year {@link spellNumbers} reads by the pack's `years` rule. */
const FIRST_YEAR = 1000;
const LAST_YEAR = 2099;

function escapeForPattern(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The locale's digit-group and decimal separators as patterns (spaces of any width for a space). */
function separators(code: string): { group: string; decimal: string } {
  const parts = new Intl.NumberFormat(code).formatToParts(12345.6);
  const group = parts.find((part) => part.type === 'group')?.value ?? ',';
  const decimal = parts.find((part) => part.type === 'decimal')?.value ?? '.';
  return {
    group: /\s/.test(group) ? '[\\s\\u00a0\\u202f]' : escapeForPattern(group),
    decimal: escapeForPattern(decimal),
  };
}

function numberPattern(pack: LanguagePack, numbers: LibraryNumbers): RegExp {
  const { group, decimal } = separators(pack.code);
  const digit = '[0-9\\uff10-\\uff19]';
  const value = `${digit}{1,3}(?:${group}${digit}{3})+(?:${decimal}${digit}+)?|${digit}+(?:${decimal}${digit}+)?`;
  const symbols = Object.keys(numbers.units)
    .sort((first, second) => second.length - first.length)
    .map(escapeForPattern);
  // a unit symbol ends where no alphabetic letter follows it ("5 km," and "330mの" but not "5 kmh")
  const unit =
    symbols.length > 0
      ? `(?:[ \\u00a0\\u202f]?(${symbols.join('|')})(?![\\p{Script=Latin}\\p{Script=Cyrillic}\\p{Script=Greek}]))?`
      : '()';
  return new RegExp(`(${value})${unit}`, 'gu');
}

/** The ordinal dates of {@link spellNumbers} (file comment) spelled out; other numbers left as they are. */
function spellOrdinalDates(text: string, pack: LanguagePack, numbers: LibraryNumbers): string {
  const dates = numbers.dates;
  const ordinal = ordinalSpeller(numbers.library, numbers.locale);
  if (dates === undefined || ordinal === null) return text;
  const endings = new Map(
    Object.entries(dates.endings).map(([word, ending]) => [word.toLocaleLowerCase(pack.code), ending]),
  );
  const months = dates.months.map(escapeForPattern).join('|');
  // a day of one or two digits not inside a longer number, the word before it kept for its ending
  const pattern = new RegExp(
    `(?<![\\p{L}\\p{N}.])(?:(\\p{L}+)([ \\u00a0]+))?([0-9\\uff10-\\uff19]{1,2})\\.[ \\u00a0]*(${months})(?!\\p{L})`,
    'gu',
  );
  return text.replace(
    pattern,
    (match, before: string | undefined, space: string | undefined, day: string, month: string) => {
      const value = Number(day.normalize('NFKC'));
      if (value < 1 || value > 31) return match;
      const ending = before === undefined ? '' : (endings.get(before.toLocaleLowerCase(pack.code)) ?? '');
      return `${before ?? ''}${space ?? ''}${ordinal(String(value))}${ending} ${month}`;
    },
  );
}

function yearWords(year: number, numbers: LibraryNumbers, speak: CardinalSpeller): string {
  if (numbers.years === 'cardinal') return speak(String(year));
  if (numbers.years === 'digits') return [...String(year)].map((digit) => speak(digit)).join('');
  if (year < 1100 || year > 1999 || year % 1000 < 100) return speak(String(year));
  const rest = year % 100;
  return numbers.years
    .replace('{century}', speak(String(Math.floor(year / 100))))
    .replace('{rest}', rest === 0 ? '' : speak(String(rest)))
    .trim();
}

/**
 * Writes every number of a line as words of the pack's language, by its number library.
 *
 * @param text one question or answer.
 * @param pack the language's pack; its `numbers` must name a library.
 * @returns the text with its digits spelled out (`"En 1887, 5 km"` → `"En mil ochocientos ochenta y
 *   siete, cinco kilómetros"`); text without digits comes back unchanged.
 * @throws RangeError when the pack's `numbers` names no library (english-rules, language-model), or
 *   its locale is not one of the library's (the schema checks this when the pack is read).
 */
export function spellNumbers(text: string, pack: LanguagePack): string {
  const numbers = pack.numbers;
  if (typeof numbers === 'string') throw new RangeError(`${pack.name}: numbers: ${numbers} names no number library`);
  const librarySpeller = cardinalSpeller(numbers.library, numbers.locale);
  if (librarySpeller === null) throw new RangeError(`${numbers.library} has no locale "${numbers.locale}"`);
  const speak = withDecimalWord(librarySpeller, numbers.decimalWord);
  if (!/[0-9\uff10-\uff19]/.test(text)) return text;
  const { group, decimal } = separators(pack.code);
  const groupPattern = new RegExp(group, 'gu');
  const decimalPattern = new RegExp(decimal, 'u');
  return spellOrdinalDates(text, pack, numbers).replace(
    numberPattern(pack, numbers),
    (_match, written: string, symbol: string | undefined) => {
      const digits = written.normalize('NFKC').replace(groupPattern, '').replace(decimalPattern, '.');
      const whole = /^\d+$/.test(digits) ? Number(digits) : Number.NaN;
      const isYear = !symbol && written.length === 4 && whole >= FIRST_YEAR && whole <= LAST_YEAR;
      const words = isYear ? yearWords(whole, numbers, speak) : speak(digits);
      if (!symbol) return words;
      const unit = numbers.units[symbol] ?? symbol;
      return unit.includes('{number}') ? unit.replace('{number}', words) : `${words} ${unit}`;
    },
  );
}
