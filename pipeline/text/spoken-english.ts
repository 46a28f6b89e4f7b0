/**
 * An offline English spoken-style normaliser: turns written text into what a speaker says, so a TTS
 * engine reads it right. Rule based, no model; each rule is a pass over the text, in this order:
 *
 * 1. typography: curly quotes, dashes, non-breaking spaces;
 * 2. parentheses / brackets / braces removed with their contents; markup (HTML tags, `*`, `_`, `` ` ``, `#` headers);
 * 3. abbreviations: e.g., i.e., etc., vs., Dr., Mr., Mrs., Ms., Prof., Jr., Sr., Mt., St. (Saint before a
 *    name, else Street), No. 5, approx., U.S., U.K., U.N., E.U., a.m./p.m., other dotted acronyms;
 * 4. dates: `2017-12-12` and `December 12, 2017` → "December twelfth, twenty seventeen";
 *    `12 December 2017` → "the twelfth of December, twenty seventeen"; day ranges; dates without year;
 * 5. money: `$5.2 million` → "five point two million dollars", `$5.25` → "five dollars and twenty-five
 *    cents", € £ ¥ and USD/EUR/GBP/JPY codes;
 * 6. percentages: `45%`, `4.5 percent`;
 * 7. numeric ranges: `5–6`, `1887-1889` → "5 to 6";
 * 8. units after a number: km, m, cm, mm, mi, ft, yd, in., kg, g, mg, lb, oz, L, ml, ha, km², m², mph,
 *    km/h, m/s, °C, °F, °, kW, MW, kWh, Hz, GB, …, singular for exactly one;
 * 9. ordinals `3rd` → "third"; decades `1990s` → "nineteen nineties", `'90s` → "nineties";
 * 10. clock times `5:30` → "five thirty"; fractions `3/4` → "three quarters", `24/7`;
 * 11. years: a four-digit number 1000–2099 without comma is read as a year ("nineteen eighty-seven",
 *     "two thousand five") when it stands alone, follows a cue word (in, since, until, by, from, of,
 *     the, between, and, to, during, before, after, around, year, a month, a season, …) or starts a
 *     range of years; otherwise as a cardinal ("two thousand people");
 * 12. decimals `3.14` → "three point one four", negatives, cardinals `3,776`;
 * 13. symbols: & + @ = % ° # × and `/` between words ("and/or" → "and or", "a/b" → "a or b");
 * 14. double quotes dropped, any digit left spelled out, whitespace and punctuation spacing fixed.
 *
 * Number words come from the `to-words` package (see ./number-words.ts).
 *
 * Rules 4 to 12 (the numbers): spoken-english-numbers.ts.
 */
import {
  expandDates,
  expandMoneyAndPercentages,
  expandNumericRanges,
  expandOrdinalsAndDecades,
  expandTimesAndFractions,
  expandUnits,
  expandYearsAndNumbers,
} from './spoken-english-numbers.ts';

/** Gives `replacement` a capital first letter when `original` has one. */
function matchCase(original: string, replacement: string): string {
  const first = original.charAt(0);
  if (first !== first.toLowerCase()) return replacement.charAt(0).toUpperCase() + replacement.slice(1);
  return replacement.charAt(0).toLowerCase() + replacement.slice(1);
}

function replaceUntilStable(text: string, pattern: RegExp, replacement: string): string {
  let previous: string;
  let current = text;
  do {
    previous = current;
    current = current.replace(pattern, replacement);
  } while (current !== previous);
  return current;
}

// ---------------------------------------------------------------- 1–2: typography and markup

function normaliseTypography(text: string): string {
  return text
    .replace(/[\u00A0\u2007\u202F\u2009]/g, ' ')
    .replace(/[‘’‛′]/g, "'")
    .replace(/[“”„‟″]/g, '"')
    .replace(/[–—―]/g, '–')
    .replace(/−/g, '-')
    .replace(/…/g, '...');
}

function removeBracketsAndMarkup(text: string): string {
  let result = text.replace(/<[^<>]*>/g, ' ');
  result = replaceUntilStable(result, /\s*\([^()]*\)/g, '');
  result = replaceUntilStable(result, /\s*（[^（）]*）/g, '');
  result = replaceUntilStable(result, /\s*\[[^[\]]*\]/g, '');
  result = replaceUntilStable(result, /\s*\{[^{}]*\}/g, '');
  result = result.replace(/[()[\]{}（）]/g, ' ');
  result = result.replace(/^\s*#+\s+/gm, '');
  result = result.replace(/[*`]+/g, '').replace(/(^|\s)_+|_+(?=\s|$|[.,;:!?])/g, '$1');
  return result;
}

// ---------------------------------------------------------------- 3: abbreviations

const ABBREVIATIONS: ReadonlyArray<[RegExp, string]> = [
  [/\bU\.S\.A\.?(?![A-Za-z])/g, 'United States of America'],
  [/\bU\.S\.(?![A-Za-z])/g, 'United States'],
  [/\bU\.K\.(?![A-Za-z])/g, 'United Kingdom'],
  [/\bU\.N\.(?![A-Za-z])/g, 'United Nations'],
  [/\bE\.U\.(?![A-Za-z])/g, 'European Union'],
  [/\b[Ee]\.\s?g\.(?=[\s,:;]|$)/g, 'for example'],
  [/\b[Ii]\.\s?e\.(?=[\s,:;]|$)/g, 'that is'],
  [/\b([Vv])s\.?(?=\s)/g, '$1ersus'],
  [/\b([Aa])pprox\.(?=\s)/g, '$1pproximately'],
  [/\b([Aa])\.m\.(?=[\s,;:!?]|$)/g, 'AM'],
  [/\b([Pp])\.m\.(?=[\s,;:!?]|$)/g, 'PM'],
];

const TITLES: Record<string, string> = {
  dr: 'doctor',
  mr: 'mister',
  mrs: 'missus',
  ms: 'miz',
  prof: 'professor',
  mt: 'mount',
  ft: 'fort',
};
const SUFFIXES: Record<string, string> = {
  jr: 'junior',
  sr: 'senior',
  inc: 'incorporated',
  ltd: 'limited',
  co: 'company',
  ave: 'avenue',
};

function expandAbbreviations(text: string): string {
  let result = text;
  for (const [pattern, replacement] of ABBREVIATIONS) result = result.replace(pattern, replacement);
  // "etc." ends a sentence when a capital follows; keep that full stop.
  result = result.replace(
    /,?\s*\b([Ee])tc\.(\s+[A-Z])/g,
    (_match, letter: string, next: string) => ` ${letter === 'E' ? 'And' : 'and'} so on.${next}`,
  );
  result = result.replace(/\b([Ee])tc\b\.?/g, (_match, letter: string) => (letter === 'E' ? 'And so on' : 'and so on'));
  // Titles before a name (also lower-case, as in TopiOCQA questions: "mt. fuji").
  result = result.replace(
    /(?<!\d\s?)\b(Dr|Mr|Mrs|Ms|Prof|Mt|Ft|dr|mr|mrs|ms|prof|mt|ft)\.(?=\s+[A-Za-z])/g,
    (match, title: string) => matchCase(match, TITLES[title.toLowerCase()] ?? title),
  );
  // St. before a capitalised name is Saint, otherwise (after a name) Street.
  result = result.replace(/\bSt\.(?=\s+[A-Z])/g, 'Saint');
  result = result.replace(/\b([Ss])t\.(?![A-Za-z])/g, (_match, letter: string) =>
    letter === 'S' ? 'Street' : 'street',
  );
  result = result.replace(/\b(Jr|Sr|Inc|Ltd|Co|Ave)\.(?=[\s,;:!?]|$)/g, (match, suffix: string) =>
    matchCase(match, SUFFIXES[suffix.toLowerCase()] ?? suffix),
  );
  result = result.replace(/(^|[^\w&])#\s?(?=\d)/g, '$1number ');
  result = result.replace(/\b([Nn])o\.\s?(?=\d)/g, (_match, letter: string) =>
    letter === 'N' ? 'Number ' : 'number ',
  );
  result = result.replace(/\b([Cc])a?\.\s?(?=\d{3,4}\b)/g, (_match, letter: string) =>
    letter === 'C' ? 'Around ' : 'around ',
  );
  // Other dotted acronyms (N.A.S.A. → NASA).
  result = result.replace(/\b((?:[A-Z]\.){2,})(?![A-Za-z])/g, (match: string) => match.replace(/\./g, ''));
  return result;
}

// ---------------------------------------------------------------- 13–14: symbols and spacing

function expandSymbols(text: string): string {
  return text
    .replace(/\s*&\s*/g, ' and ')
    .replace(/\s*\+\s*/g, ' plus ')
    .replace(/\s*@\s*/g, ' at ')
    .replace(/\s*=\s*/g, ' equals ')
    .replace(/\s*[×]\s*/g, ' times ')
    .replace(/\s*%/g, ' percent')
    .replace(/\s*\$/g, ' dollars')
    .replace(/\s*€/g, ' euros')
    .replace(/\s*£/g, ' pounds')
    .replace(/\s*¥/g, ' yen')
    .replace(/\s*°/g, ' degrees')
    .replace(/\band\/or\b/gi, 'and or')
    .replace(/([A-Za-z])\s?\/\s?([A-Za-z])/g, '$1 or $2')
    .replace(/\//g, ' ')
    .replace(/[#~^|\\]/g, ' ')
    .replace(/"/g, '')
    .replace(/\s-\s/g, ', ')
    .replace(/–/g, ', ');
}

function fixSpacing(text: string): string {
  return text
    .replace(/\s+/g, ' ')
    .replace(/\s+([,.;:!?])/g, '$1')
    .replace(/([,;:])(?=[^\s\d])/g, '$1 ')
    .replace(/,(\s*,)+/g, ',')
    .replace(/,\s*([.!?])/g, '$1')
    .replace(/([.!?])\s*\./g, '$1')
    .replace(/^[\s,.;:]+/, '')
    .trim();
}

/**
 * Normalises written English into spoken style (the passes listed in the file header): numbers,
 * years, dates, ordinals, decimals, percentages, money, units, symbols and abbreviations become words;
 * bracketed text and markup go; whitespace is fixed. No digit is left in the result.
 *
 * @param text written English (a question or an answer).
 * @returns the spoken-style text.
 */
export function normaliseSpokenEnglish(text: string): string {
  let result = normaliseTypography(text);
  result = removeBracketsAndMarkup(result);
  result = expandAbbreviations(result);
  result = expandDates(result);
  result = expandMoneyAndPercentages(result);
  result = expandNumericRanges(result);
  result = expandUnits(result);
  result = expandOrdinalsAndDecades(result);
  result = expandTimesAndFractions(result);
  result = expandYearsAndNumbers(result);
  result = expandSymbols(result);
  return fixSpacing(result);
}
