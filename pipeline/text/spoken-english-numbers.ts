/**
 * The number passes of the English spoken-style normaliser (rules 4 to 12 of ./spoken-english.ts):
 * dates, money and percentages, numeric ranges, units, ordinals and decades, clock times and
 * fractions, years and numbers, each a pass over the text, in that order.
 */
import { cardinalWords, decadeWords, decimalWords, digitWords, ordinalWords, yearWords } from './number-words.ts';

const MONTHS = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
] as const;
const MONTH_ABBREVIATIONS: Record<string, string> = {
  Jan: 'January',
  Feb: 'February',
  Mar: 'March',
  Apr: 'April',
  Jun: 'June',
  Jul: 'July',
  Aug: 'August',
  Sep: 'September',
  Sept: 'September',
  Oct: 'October',
  Nov: 'November',
  Dec: 'December',
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

// ---------------------------------------------------------------- 4: dates

function dayOrdinal(day: string): string | undefined {
  const value = Number(day);
  return value >= 1 && value <= 31 ? ordinalWords(value) : undefined;
}

export function expandDates(text: string): string {
  let result = text.replace(/\b(\d{4})-(\d{2})-(\d{2})\b/g, (match, year: string, month: string, day: string) => {
    const name = MONTHS[Number(month) - 1];
    const ordinal = dayOrdinal(day);
    return name === undefined || ordinal === undefined ? match : `${name} ${ordinal}, ${yearWords(Number(year))}`;
  });
  // Month D–D, YYYY
  result = result.replace(
    new RegExp(
      `\\b(${MONTH_PATTERN}) (\\d{1,2})(?:st|nd|rd|th)?\\s?[–-]\\s?(\\d{1,2})(?:st|nd|rd|th)?,? (\\d{4})\\b`,
      'g',
    ),
    (match, month: string, first: string, last: string, year: string) => {
      const from = dayOrdinal(first);
      const to = dayOrdinal(last);
      return from === undefined || to === undefined
        ? match
        : `${monthName(month)} ${from} to ${to}, ${yearWords(Number(year))}`;
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
  result = result.replace(
    new RegExp(`\\b(\\d{1,2})(?:st|nd|rd|th)? (?:of )?(${MONTH_PATTERN})(?![A-Za-z])`, 'g'),
    (match, day: string, month: string) => {
      const ordinal = dayOrdinal(day);
      return ordinal === undefined ? match : `the ${ordinal} of ${monthName(month)}`;
    },
  );
  // Month D (no year)
  result = result.replace(
    new RegExp(`\\b(${MONTH_PATTERN}) (\\d{1,2})(?:st|nd|rd|th)?\\b(?![\\d,.]\\d|:)`, 'g'),
    (match, month: string, day: string) => {
      const ordinal = dayOrdinal(day);
      return ordinal === undefined ? match : `${monthName(month)} ${ordinal}`;
    },
  );
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
  thousand: 'thousand',
  k: 'thousand',
  million: 'million',
  m: 'million',
  mn: 'million',
  billion: 'billion',
  bn: 'billion',
  b: 'billion',
  trillion: 'trillion',
  tn: 'trillion',
};

function moneyWords(amount: string, currency: Currency, scale: string | undefined): string {
  const clean = amount.replace(/,/g, '');
  if (scale !== undefined) return `${decimalWords(clean)} ${scale} ${currency.plural}`;
  const [whole = '0', fraction] = clean.split('.');
  const wholeValue = Number(whole);
  const unit =
    wholeValue === 1 && (fraction === undefined || /^0*$/.test(fraction)) ? currency.singular : currency.plural;
  if (fraction !== undefined && fraction.length === 2 && currency.minorPlural !== undefined) {
    const minor = Number(fraction);
    if (minor === 0) return `${cardinalWords(whole)} ${unit}`;
    const minorUnit = minor === 1 ? currency.minorSingular : currency.minorPlural;
    if (wholeValue === 0) return `${cardinalWords(minor)} ${minorUnit}`;
    return `${cardinalWords(whole)} ${unit} and ${cardinalWords(minor)} ${minorUnit}`;
  }
  return `${decimalWords(clean)} ${unit}`;
}

export function expandMoneyAndPercentages(text: string): string {
  const scaleWord = '(?:\\s?(thousand|million|billion|trillion)\\b|(k|m|mn|bn|b|tn)\\b)';
  let result = text.replace(
    new RegExp(`(?:US)?([$€£¥])\\s?(${NUMBER})${scaleWord}?`, 'gi'),
    (_match, symbol: string, amount: string, longScale?: string, shortScale?: string) => {
      const scale = longScale ?? shortScale;
      return moneyWords(
        amount,
        CURRENCIES[symbol] ?? CURRENCIES.$!,
        scale === undefined ? undefined : SCALES[scale.toLowerCase()],
      );
    },
  );
  result = result.replace(
    new RegExp(`(${NUMBER})${scaleWord}?\\s?(USD|EUR|GBP|JPY)\\b`, 'g'),
    (_match, amount: string, longScale: string | undefined, shortScale: string | undefined, code: string) => {
      const scale = longScale ?? shortScale;
      return moneyWords(
        amount,
        CURRENCIES[code] ?? CURRENCIES.USD!,
        scale === undefined ? undefined : SCALES[scale.toLowerCase()],
      );
    },
  );
  result = result.replace(
    new RegExp(`(${NUMBER})\\s?(?:%|percent\\b|per cent\\b)`, 'g'),
    (_match, amount: string) => `${decimalWords(amount)} percent`,
  );
  return result;
}

// ---------------------------------------------------------------- 7–8: ranges and units

export function expandNumericRanges(text: string): string {
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

export function expandUnits(text: string): string {
  return text.replace(UNIT_EXPRESSION, (match, amount: string, symbol: string) => {
    const found = UNIT_MATCHERS.find((candidate) => candidate.whole.test(symbol));
    if (found === undefined) return match;
    const unitWord = amount === '1' ? found.unit.singular : found.unit.plural;
    return `${amount} ${unitWord}`;
  });
}

// ---------------------------------------------------------------- 9–10: ordinals, decades, times, fractions

export function expandOrdinalsAndDecades(text: string): string {
  let result = text.replace(/\b(\d+)(?:st|nd|rd|th)\b/gi, (match, digits: string) =>
    Number(digits) >= 1 ? ordinalWords(digits) : match,
  );
  result = result.replace(/\b(\d{3}0)'?s\b/g, (_match, digits: string) => decadeWords(Number(digits)));
  result = result.replace(
    /(^|[\s(])'?([1-9])0s\b/g,
    (_match, before: string, tens: string) => `${before}${decadeWords(Number(tens) * 10)}`,
  );
  return result;
}

export function expandTimesAndFractions(text: string): string {
  let result = text.replace(
    /\b(\d{1,2}):(\d{2})\b(\s?(?:AM|PM))?/g,
    (match, hour: string, minute: string, suffix?: string) => {
      const hourValue = Number(hour);
      const minuteValue = Number(minute);
      if (hourValue > 24 || minuteValue > 59) return match;
      const hourText = cardinalWords(hourValue);
      const tail = suffix !== undefined ? ` ${suffix.trim()}` : '';
      if (minuteValue === 0) return suffix !== undefined ? `${hourText}${tail}` : `${hourText} o'clock`;
      const minuteText = minuteValue < 10 ? `oh ${cardinalWords(minuteValue)}` : cardinalWords(minuteValue);
      return `${hourText} ${minuteText}${tail}`;
    },
  );
  result = result.replace(/\b24\/7\b/g, 'twenty-four seven');
  result = result.replace(
    /\b(\d{1,3})\/(\d{1,3})\b(?!\/)/g,
    (_match, numeratorText: string, denominatorText: string) => {
      const numerator = Number(numeratorText);
      const denominator = Number(denominatorText);
      if (denominator === 0) return `${cardinalWords(numerator)} over zero`;
      if (denominator > 10 || denominator === 1)
        return `${cardinalWords(numerator)} out of ${cardinalWords(denominator)}`;
      const plural = numerator !== 1;
      const name =
        denominator === 2
          ? plural
            ? 'halves'
            : 'half'
          : denominator === 4
            ? plural
              ? 'quarters'
              : 'quarter'
            : `${ordinalWords(denominator)}${plural ? 's' : ''}`;
      return `${cardinalWords(numerator)} ${name}`;
    },
  );
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

export function expandYearsAndNumbers(text: string): string {
  let result = text.replace(
    /(?<![\d,.])\b(\d{4})\b(?![\d]|[,.]\d)/g,
    (match, digits: string, offset: number, whole: string) => {
      const value = Number(digits);
      return value >= 1000 && value <= 2099 && isYearContext(whole, offset, digits) ? yearWords(value) : match;
    },
  );
  result = result.replace(/(\d)(?=[A-Za-z])|([A-Za-z])(?=\d)/g, '$1$2 ');
  result = result.replace(/(^|[\s"'])-(?=\d)/g, '$1minus ');
  result = result.replace(/\b\d+(?:,\d{3})*\.\d+\b/g, (match) => decimalWords(match));
  result = result.replace(/\b\d{1,3}(?:,\d{3})+\b/g, (match) => cardinalWords(match));
  result = result.replace(/\.(\d+)\b/g, (_match, digits: string) => ` point ${digitWords(digits)}`);
  result = result.replace(/\d+/g, (match) =>
    match.length > 1 && match.startsWith('0') ? digitWords(match) : cardinalWords(match),
  );
  return result;
}
