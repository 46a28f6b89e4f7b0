/**
 * English number words for speech, built on the `to-words` package (en-US: no "and" after hundred),
 * lower-cased and with hyphenated compounds ("twenty-one"). Decimals are read digit by digit after
 * "point" ("three point one four"), as people say them.
 */
import { toOrdinal, toWords } from 'to-words/en-US';

const TENS = 'twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety';
const UNITS = 'one|two|three|four|five|six|seven|eight|nine';
const ORDINAL_UNITS = 'first|second|third|fourth|fifth|sixth|seventh|eighth|ninth';
const COMPOUND = new RegExp(`\\b(${TENS}) (${UNITS}|${ORDINAL_UNITS})\\b`, 'g');

function tidyWords(words: string): string {
  return words.toLowerCase().replace(COMPOUND, '$1-$2');
}

function parseInteger(digits: string): number | bigint {
  const clean = digits.replace(/,/g, '');
  if (!/^\d+$/.test(clean)) throw new RangeError(`not a whole number: "${digits}"`);
  const value = Number(clean);
  return Number.isSafeInteger(value) ? value : BigInt(clean);
}

/**
 * Cardinal words for a whole number: `3776` or `"3,776"` → "three thousand seven hundred seventy-six".
 *
 * @param value a non-negative integer, or its digits (commas allowed).
 * @returns lower-case words.
 * @throws RangeError when the value is not a non-negative whole number.
 */
export function cardinalWords(value: number | string): string {
  const integer = typeof value === 'number' ? value : parseInteger(value);
  if (typeof integer === 'number' && (!Number.isSafeInteger(integer) || integer < 0)) {
    throw new RangeError(`not a non-negative whole number: ${integer}`);
  }
  return tidyWords(toWords(integer));
}

/**
 * Words for each digit: `"05"` → "zero five".
 *
 * @param digits a string of digits.
 * @returns the digit words joined by spaces.
 * @throws RangeError when `digits` holds a non-digit.
 */
export function digitWords(digits: string): string {
  if (!/^\d+$/.test(digits)) throw new RangeError(`not digits: "${digits}"`);
  return [...digits].map((digit) => cardinalWords(Number(digit))).join(' ');
}

/**
 * Words for a decimal number: `"3.14"` → "three point one four", `"1,083.5"` → "one thousand
 * eighty-three point five", `"12"` → "twelve".
 *
 * @param text digits with optional commas and one optional decimal point.
 * @returns lower-case words.
 * @throws RangeError when `text` is not such a number.
 */
export function decimalWords(text: string): string {
  const match = /^(\d[\d,]*)?(?:\.(\d+))?$/.exec(text);
  if (match === null || (match[1] === undefined && match[2] === undefined))
    throw new RangeError(`not a decimal number: "${text}"`);
  const whole = match[1] !== undefined ? cardinalWords(match[1]) : 'zero';
  return match[2] !== undefined ? `${whole} point ${digitWords(match[2])}` : whole;
}

/**
 * Ordinal words: `3` → "third", `21` → "twenty-first".
 *
 * @param value a positive integer or its digits.
 * @returns lower-case words.
 * @throws RangeError when the value is not a positive whole number.
 */
export function ordinalWords(value: number | string): string {
  const integer = typeof value === 'number' ? value : parseInteger(value);
  if (typeof integer === 'bigint' || !Number.isSafeInteger(integer) || integer < 1) {
    throw new RangeError(`not a positive whole number for an ordinal: ${String(integer)}`);
  }
  return tidyWords(toOrdinal(integer));
}

/**
 * A year as people say it: 1987 → "nineteen eighty-seven", 1900 → "nineteen hundred", 1905 →
 * "nineteen oh five", 2000 → "two thousand", 2005 → "two thousand five", 2017 → "twenty seventeen",
 * 1000 → "one thousand"; years below 1000 as cardinals (476 → "four hundred seventy-six").
 *
 * @param year a non-negative integer.
 * @returns lower-case words.
 * @throws RangeError when `year` is not a non-negative integer.
 */
export function yearWords(year: number): string {
  if (!Number.isSafeInteger(year) || year < 0) throw new RangeError(`not a year: ${year}`);
  if (year < 1000 || year >= 10000 || year % 1000 === 0) return cardinalWords(year);
  if (year >= 2000 && year < 2010) return `two thousand ${cardinalWords(year - 2000)}`;
  const century = Math.floor(year / 100);
  const rest = year % 100;
  if (rest === 0) return `${cardinalWords(century)} hundred`;
  if (rest < 10) return `${cardinalWords(century)} oh ${cardinalWords(rest)}`;
  return `${cardinalWords(century)} ${cardinalWords(rest)}`;
}

/**
 * The plural of a year's words for decades and centuries: 1990 → "nineteen nineties", 1900 →
 * "nineteen hundreds", 2000 → "two thousands".
 *
 * @param year the first year of the decade or century.
 * @returns lower-case words.
 * @throws RangeError when `year` is not a non-negative integer.
 */
export function decadeWords(year: number): string {
  const words = yearWords(year);
  return words.endsWith('y') ? `${words.slice(0, -1)}ies` : `${words}s`;
}
