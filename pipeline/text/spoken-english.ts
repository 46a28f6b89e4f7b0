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
 */
import { cardinalWords, decadeWords, decimalWords, digitWords, ordinalWords, yearWords } from './number-words.ts';

const MONTHS = [
  'January', 'February', 'March', 'April', 'May', 'June',
  'July', 'August', 'September', 'October', 'November', 'December',
] as const;
const MONTH_ABBREVIATIONS: Record<string, string> = {
  Jan: 'January', Feb: 'February', Mar: 'March', Apr: 'April', Jun: 'June', Jul: 'July', Aug: 'August',
  Sep: 'September', Sept: 'September', Oct: 'October', Nov: 'November', Dec: 'December',
};
/** Full month names (any case, but "May" only capitalised: "may" is a verb) or capitalised abbreviations with a dot. */
const MONTH_PATTERN =
  '(?:(?:[Jj]anuary|[Ff]ebruary|[Mm]arch|[Aa]pril|May|[Jj]une|[Jj]uly|[Aa]ugust|[Ss]eptember|[Oo]ctober|[Nn]ovember|[Dd]ecember)' +
  '|(?:Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sept|Sep|Oct|Nov|Dec)\\.?)';

/** A number as written: digits, optional thousands commas, optional decimals (a trailing comma is punctuation). */
const NUMBER = '\\d+(?:,\\d{3})*(?:\\.\\d+)?';

function monthName(text: string): string {
  const bare = text.replace(/\.$/, '');
  const abbreviation = MONTH_ABBREVIATIONS[bare];
  if (abbreviation !== undefined) return abbreviation;
  const full = MONTHS.find((month) => month.toLowerCase() === bare.toLowerCase());
  return full ?? bare;
}

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
  dr: 'doctor', mr: 'mister', mrs: 'missus', ms: 'miz', prof: 'professor', mt: 'mount', ft: 'fort',
};
const SUFFIXES: Record<string, string> = { jr: 'junior', sr: 'senior', inc: 'incorporated', ltd: 'limited', co: 'company', ave: 'avenue' };

function expandAbbreviations(text: string): string {
  let result = text;
  for (const [pattern, replacement] of ABBREVIATIONS) result = result.replace(pattern, replacement);
  // "etc." ends a sentence when a capital follows; keep that full stop.
  result = result.replace(/,?\s*\b([Ee])tc\.(\s+[A-Z])/g, (_match, letter: string, next: string) => ` ${letter === 'E' ? 'And' : 'and'} so on.${next}`);
  result = result.replace(/\b([Ee])tc\b\.?/g, (_match, letter: string) => (letter === 'E' ? 'And so on' : 'and so on'));
  // Titles before a name (also lower-case, as in TopiOCQA questions: "mt. fuji").
  result = result.replace(/(?<!\d\s?)\b(Dr|Mr|Mrs|Ms|Prof|Mt|Ft|dr|mr|mrs|ms|prof|mt|ft)\.(?=\s+[A-Za-z])/g, (match, title: string) =>
    matchCase(match, TITLES[title.toLowerCase()] ?? title),
  );
  // St. before a capitalised name is Saint, otherwise (after a name) Street.
  result = result.replace(/\bSt\.(?=\s+[A-Z])/g, 'Saint');
  result = result.replace(/\b([Ss])t\.(?![A-Za-z])/g, (_match, letter: string) => (letter === 'S' ? 'Street' : 'street'));
  result = result.replace(/\b(Jr|Sr|Inc|Ltd|Co|Ave)\.(?=[\s,;:!?]|$)/g, (match, suffix: string) =>
    matchCase(match, SUFFIXES[suffix.toLowerCase()] ?? suffix),
  );
  result = result.replace(/(^|[^\w&])#\s?(?=\d)/g, '$1number ');
  result = result.replace(/\b([Nn])o\.\s?(?=\d)/g, (_match, letter: string) => (letter === 'N' ? 'Number ' : 'number '));
  result = result.replace(/\b([Cc])a?\.\s?(?=\d{3,4}\b)/g, (_match, letter: string) => (letter === 'C' ? 'Around ' : 'around '));
  // Other dotted acronyms (N.A.S.A. → NASA).
  result = result.replace(/\b((?:[A-Z]\.){2,})(?![A-Za-z])/g, (match: string) => match.replace(/\./g, ''));
  return result;
}

// ---------------------------------------------------------------- 4: dates

function dayOrdinal(day: string): string | undefined {
  const value = Number(day);
  return value >= 1 && value <= 31 ? ordinalWords(value) : undefined;
}

function expandDates(text: string): string {
  let result = text.replace(/\b(\d{4})-(\d{2})-(\d{2})\b/g, (match, year: string, month: string, day: string) => {
    const name = MONTHS[Number(month) - 1];
    const ordinal = dayOrdinal(day);
    return name === undefined || ordinal === undefined ? match : `${name} ${ordinal}, ${yearWords(Number(year))}`;
  });
  // Month D–D, YYYY
  result = result.replace(
    new RegExp(`\\b(${MONTH_PATTERN}) (\\d{1,2})(?:st|nd|rd|th)?\\s?[–-]\\s?(\\d{1,2})(?:st|nd|rd|th)?,? (\\d{4})\\b`, 'g'),
    (match, month: string, first: string, last: string, year: string) => {
      const from = dayOrdinal(first);
      const to = dayOrdinal(last);
      return from === undefined || to === undefined ? match : `${monthName(month)} ${from} to ${to}, ${yearWords(Number(year))}`;
    },
  );
  // D Month YYYY / D of Month, YYYY
  result = result.replace(
    new RegExp(`\\b(\\d{1,2})(?:st|nd|rd|th)? (?:of )?(${MONTH_PATTERN}),? (\\d{4})\\b`, 'g'),
    (match, day: string, month: string, year: string) => {
      const ordinal = dayOrdinal(day);
      return ordinal === undefined ? match : `the ${ordinal} of ${monthName(month)}, ${yearWords(Number(year))}`;
    },
  );
  // Month D, YYYY / Month D YYYY
  result = result.replace(
    new RegExp(`\\b(${MONTH_PATTERN}) (\\d{1,2})(?:st|nd|rd|th)?,? (\\d{4})\\b`, 'g'),
    (match, month: string, day: string, year: string) => {
      const ordinal = dayOrdinal(day);
      return ordinal === undefined ? match : `${monthName(month)} ${ordinal}, ${yearWords(Number(year))}`;
    },
  );
  // D Month (no year)
  result = result.replace(new RegExp(`\\b(\\d{1,2})(?:st|nd|rd|th)? (?:of )?(${MONTH_PATTERN})(?![A-Za-z])`, 'g'), (match, day: string, month: string) => {
    const ordinal = dayOrdinal(day);
    return ordinal === undefined ? match : `the ${ordinal} of ${monthName(month)}`;
  });
  // Month D (no year)
  result = result.replace(new RegExp(`\\b(${MONTH_PATTERN}) (\\d{1,2})(?:st|nd|rd|th)?\\b(?![\\d,.]\\d|:)`, 'g'), (match, month: string, day: string) => {
    const ordinal = dayOrdinal(day);
    return ordinal === undefined ? match : `${monthName(month)} ${ordinal}`;
  });
  // Month name abbreviations left before a year (Dec. 2017) and capitalise lower-case month names before numbers.
  result = result.replace(new RegExp(`\\b(${MONTH_PATTERN})(?= \\d{4}\\b)`, 'g'), (month: string) => monthName(month));
  return result;
}

// ---------------------------------------------------------------- 5–6: money and percentages

interface Currency {
  singular: string;
  plural: string;
  minorSingular?: string;
  minorPlural?: string;
}
const CURRENCIES: Record<string, Currency> = {
  $: { singular: 'dollar', plural: 'dollars', minorSingular: 'cent', minorPlural: 'cents' },
  USD: { singular: 'US dollar', plural: 'US dollars', minorSingular: 'cent', minorPlural: 'cents' },
  '€': { singular: 'euro', plural: 'euros', minorSingular: 'cent', minorPlural: 'cents' },
  EUR: { singular: 'euro', plural: 'euros', minorSingular: 'cent', minorPlural: 'cents' },
  '£': { singular: 'pound', plural: 'pounds', minorSingular: 'penny', minorPlural: 'pence' },
  GBP: { singular: 'pound', plural: 'pounds', minorSingular: 'penny', minorPlural: 'pence' },
  '¥': { singular: 'yen', plural: 'yen' },
  JPY: { singular: 'yen', plural: 'yen' },
};
const SCALES: Record<string, string> = {
  thousand: 'thousand', k: 'thousand', million: 'million', m: 'million', mn: 'million',
  billion: 'billion', bn: 'billion', b: 'billion', trillion: 'trillion', tn: 'trillion',
};

function moneyWords(amount: string, currency: Currency, scale: string | undefined): string {
  const clean = amount.replace(/,/g, '');
  if (scale !== undefined) return `${decimalWords(clean)} ${scale} ${currency.plural}`;
  const [whole = '0', fraction] = clean.split('.');
  const wholeValue = Number(whole);
  const unit = wholeValue === 1 && (fraction === undefined || /^0*$/.test(fraction)) ? currency.singular : currency.plural;
  if (fraction !== undefined && fraction.length === 2 && currency.minorPlural !== undefined) {
    const minor = Number(fraction);
    if (minor === 0) return `${cardinalWords(whole)} ${unit}`;
    const minorUnit = minor === 1 ? currency.minorSingular : currency.minorPlural;
    if (wholeValue === 0) return `${cardinalWords(minor)} ${minorUnit}`;
    return `${cardinalWords(whole)} ${unit} and ${cardinalWords(minor)} ${minorUnit}`;
  }
  return `${decimalWords(clean)} ${unit}`;
}

function expandMoneyAndPercentages(text: string): string {
  const scaleWord = '(?:\\s?(thousand|million|billion|trillion)\\b|(k|m|mn|bn|b|tn)\\b)';
  let result = text.replace(
    new RegExp(`(?:US)?([$€£¥])\\s?(${NUMBER})${scaleWord}?`, 'gi'),
    (_match, symbol: string, amount: string, longScale?: string, shortScale?: string) => {
      const scale = longScale ?? shortScale;
      return moneyWords(amount, CURRENCIES[symbol] ?? CURRENCIES.$!, scale === undefined ? undefined : SCALES[scale.toLowerCase()]);
    },
  );
  result = result.replace(
    new RegExp(`(${NUMBER})${scaleWord}?\\s?(USD|EUR|GBP|JPY)\\b`, 'g'),
    (_match, amount: string, longScale: string | undefined, shortScale: string | undefined, code: string) => {
      const scale = longScale ?? shortScale;
      return moneyWords(amount, CURRENCIES[code] ?? CURRENCIES.USD!, scale === undefined ? undefined : SCALES[scale.toLowerCase()]);
    },
  );
  result = result.replace(new RegExp(`(${NUMBER})\\s?(?:%|percent\\b|per cent\\b)`, 'g'), (_match, amount: string) => `${decimalWords(amount)} percent`);
  return result;
}

// ---------------------------------------------------------------- 7–8: ranges and units

function expandNumericRanges(text: string): string {
  return text.replace(new RegExp(`(${NUMBER})\\s?[–-]\\s?(?=\\d)`, 'g'), '$1 to ');
}

interface Unit {
  pattern: string;
  singular: string;
  plural: string;
}
const UNITS: readonly Unit[] = [
  { pattern: 'km²|km2|sq\\.? ?km', singular: 'square kilometer', plural: 'square kilometers' },
  { pattern: 'm²|sq\\.? ?m', singular: 'square meter', plural: 'square meters' },
  { pattern: 'mi²|sq\\.? ?mi', singular: 'square mile', plural: 'square miles' },
  { pattern: 'ft²|sq\\.? ?ft', singular: 'square foot', plural: 'square feet' },
  { pattern: 'km/h|kph|km/hr', singular: 'kilometer per hour', plural: 'kilometers per hour' },
  { pattern: 'mph', singular: 'mile per hour', plural: 'miles per hour' },
  { pattern: 'm/s', singular: 'meter per second', plural: 'meters per second' },
  { pattern: '°\\s?C|ºC|℃', singular: 'degree Celsius', plural: 'degrees Celsius' },
  { pattern: '°\\s?F|ºF|℉', singular: 'degree Fahrenheit', plural: 'degrees Fahrenheit' },
  { pattern: 'km', singular: 'kilometer', plural: 'kilometers' },
  { pattern: 'cm', singular: 'centimeter', plural: 'centimeters' },
  { pattern: 'mm', singular: 'millimeter', plural: 'millimeters' },
  { pattern: 'm', singular: 'meter', plural: 'meters' },
  { pattern: 'mi', singular: 'mile', plural: 'miles' },
  { pattern: 'ft', singular: 'foot', plural: 'feet' },
  { pattern: 'yd', singular: 'yard', plural: 'yards' },
  { pattern: 'in\\.', singular: 'inch', plural: 'inches' },
  { pattern: 'kg', singular: 'kilogram', plural: 'kilograms' },
  { pattern: 'mg', singular: 'milligram', plural: 'milligrams' },
  { pattern: 'g', singular: 'gram', plural: 'grams' },
  { pattern: 'lbs?', singular: 'pound', plural: 'pounds' },
  { pattern: 'oz', singular: 'ounce', plural: 'ounces' },
  { pattern: 'ml|mL', singular: 'milliliter', plural: 'milliliters' },
  { pattern: 'L', singular: 'liter', plural: 'liters' },
  { pattern: 'ha', singular: 'hectare', plural: 'hectares' },
  { pattern: 'kWh', singular: 'kilowatt hour', plural: 'kilowatt hours' },
  { pattern: 'kW', singular: 'kilowatt', plural: 'kilowatts' },
  { pattern: 'MW', singular: 'megawatt', plural: 'megawatts' },
  { pattern: 'GW', singular: 'gigawatt', plural: 'gigawatts' },
  { pattern: 'kHz', singular: 'kilohertz', plural: 'kilohertz' },
  { pattern: 'MHz', singular: 'megahertz', plural: 'megahertz' },
  { pattern: 'GHz', singular: 'gigahertz', plural: 'gigahertz' },
  { pattern: 'Hz', singular: 'hertz', plural: 'hertz' },
  { pattern: 'KB|kB', singular: 'kilobyte', plural: 'kilobytes' },
  { pattern: 'MB', singular: 'megabyte', plural: 'megabytes' },
  { pattern: 'GB', singular: 'gigabyte', plural: 'gigabytes' },
  { pattern: 'TB', singular: 'terabyte', plural: 'terabytes' },
  { pattern: 'hrs?', singular: 'hour', plural: 'hours' },
  { pattern: 'mins?', singular: 'minute', plural: 'minutes' },
  { pattern: 'secs?', singular: 'second', plural: 'seconds' },
  { pattern: 'yrs?', singular: 'year', plural: 'years' },
  { pattern: '°', singular: 'degree', plural: 'degrees' },
];
const UNIT_EXPRESSION = new RegExp(
  `(-?${NUMBER})\\s?(${UNITS.map((unit) => `(?:${unit.pattern})`).join('|')})(?![A-Za-z0-9²/])(?:\\.(?=\\s+[a-z]))?`,
  'g',
);
const UNIT_MATCHERS = UNITS.map((unit) => ({ unit, whole: new RegExp(`^(?:${unit.pattern})$`) }));

function expandUnits(text: string): string {
  return text.replace(UNIT_EXPRESSION, (match, amount: string, symbol: string) => {
    const found = UNIT_MATCHERS.find((candidate) => candidate.whole.test(symbol));
    if (found === undefined) return match;
    const unitWord = amount === '1' ? found.unit.singular : found.unit.plural;
    return `${amount} ${unitWord}`;
  });
}

// ---------------------------------------------------------------- 9–10: ordinals, decades, times, fractions

function expandOrdinalsAndDecades(text: string): string {
  let result = text.replace(/\b(\d+)(?:st|nd|rd|th)\b/gi, (match, digits: string) => (Number(digits) >= 1 ? ordinalWords(digits) : match));
  result = result.replace(/\b(\d{3}0)'?s\b/g, (_match, digits: string) => decadeWords(Number(digits)));
  result = result.replace(/(^|[\s(])'?([1-9])0s\b/g, (_match, before: string, tens: string) => `${before}${decadeWords(Number(tens) * 10)}`);
  return result;
}

function expandTimesAndFractions(text: string): string {
  let result = text.replace(/\b(\d{1,2}):(\d{2})\b(\s?(?:AM|PM))?/g, (match, hour: string, minute: string, suffix?: string) => {
    const hourValue = Number(hour);
    const minuteValue = Number(minute);
    if (hourValue > 24 || minuteValue > 59) return match;
    const hourText = cardinalWords(hourValue);
    const tail = suffix !== undefined ? ` ${suffix.trim()}` : '';
    if (minuteValue === 0) return suffix !== undefined ? `${hourText}${tail}` : `${hourText} o'clock`;
    const minuteText = minuteValue < 10 ? `oh ${cardinalWords(minuteValue)}` : cardinalWords(minuteValue);
    return `${hourText} ${minuteText}${tail}`;
  });
  result = result.replace(/\b24\/7\b/g, 'twenty-four seven');
  result = result.replace(/\b(\d{1,3})\/(\d{1,3})\b(?!\/)/g, (_match, numeratorText: string, denominatorText: string) => {
    const numerator = Number(numeratorText);
    const denominator = Number(denominatorText);
    if (denominator === 0) return `${cardinalWords(numerator)} over zero`;
    if (denominator > 10 || denominator === 1) return `${cardinalWords(numerator)} out of ${cardinalWords(denominator)}`;
    const plural = numerator !== 1;
    const name = denominator === 2 ? (plural ? 'halves' : 'half') : denominator === 4 ? (plural ? 'quarters' : 'quarter') : `${ordinalWords(denominator)}${plural ? 's' : ''}`;
    return `${cardinalWords(numerator)} ${name}`;
  });
  return result;
}

// ---------------------------------------------------------------- 11–12: years and numbers

const YEAR_CUE = new RegExp(
  '(?:^|[^A-Za-z])(?:in|since|until|till|by|from|of|the|between|and|to|or|through|during|before|after|around|about|circa|' +
    'year|early|late|mid|born|died|spring|summer|autumn|fall|winter|' +
    MONTHS.join('|') +
    ')[\\s-]+$',
  'i',
);

function isYearContext(text: string, offset: number, digits: string): boolean {
  const before = text.slice(0, offset);
  const after = text.slice(offset + digits.length);
  if (/^\s*$/.test(before.replace(/[^\sA-Za-z0-9]/g, ' ')) && /^\s*[.!?,;:]*\s*$/.test(after)) return true;
  if (YEAR_CUE.test(before)) return true;
  return /^\s(?:to|and|or)\s\d{4}\b/.test(after);
}

function expandYearsAndNumbers(text: string): string {
  let result = text.replace(/(?<![\d,.])\b(\d{4})\b(?![\d]|[,.]\d)/g, (match, digits: string, offset: number, whole: string) => {
    const value = Number(digits);
    return value >= 1000 && value <= 2099 && isYearContext(whole, offset, digits) ? yearWords(value) : match;
  });
  result = result.replace(/(\d)(?=[A-Za-z])|([A-Za-z])(?=\d)/g, '$1$2 ');
  result = result.replace(/(^|[\s"'])-(?=\d)/g, '$1minus ');
  result = result.replace(/\b\d+(?:,\d{3})*\.\d+\b/g, (match) => decimalWords(match));
  result = result.replace(/\b\d{1,3}(?:,\d{3})+\b/g, (match) => cardinalWords(match));
  result = result.replace(/\.(\d+)\b/g, (_match, digits: string) => ` point ${digitWords(digits)}`);
  result = result.replace(/\d+/g, (match) => (match.length > 1 && match.startsWith('0') ? digitWords(match) : cardinalWords(match)));
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
