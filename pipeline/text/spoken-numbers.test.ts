import { describe, expect, it } from 'vitest';
import { languagePackOf, parseLanguagePack } from '../model/language-pack.ts';
import { spellNumbers } from './spoken-numbers.ts';

describe('spellNumbers', () => {
  it('reads numbers, years and units in each built-in language by its number library', () => {
    expect(spellNumbers('Entre 1887 y 1889 midió 330 m; 12.345 personas, 3,5 km y 45 %.', languagePackOf('es'))).toBe(
      'Entre mil ochocientos ochenta y siete y mil ochocientos ochenta y nueve midió trescientos treinta metros; doce mil trescientos cuarenta y cinco personas, tres coma cinco kilómetros y cuarenta y cinco por ciento.',
    );
    // German years in hundreds, counts as cardinals
    expect(spellNumbers('1887 und 2024: 1900 Meter? Nein, 45 %.', languagePackOf('de'))).toBe(
      'achtzehnhundertsiebenundachtzig und zweitausendvierundzwanzig: neunzehnhundert Meter? Nein, fünfundvierzig Prozent.',
    );
    expect(spellNumbers('En 1887, 12 345 visiteurs, 3,5 km', languagePackOf('fr'))).toBe(
      'En mille huit cent quatre-vingt-sept, douze mille trois cent quarante-cinq visiteurs, trois virgule cinq kilomètres',
    );
    // the decimal separator as a German noun, as the units are written
    expect(spellNumbers('3,05 km', languagePackOf('de'))).toBe('drei Komma null fünf Kilometer');
    expect(spellNumbers('１８８７年に330mの塔', languagePackOf('ja'))).toBe('千八百八十七年に三百三十メートルの塔');
    expect(spellNumbers('1887년에 330 m', languagePackOf('ko'))).toBe('천팔백팔십칠년에 삼백삼십 미터');
    // Chinese years digit by digit, everyday numerals, percent before the number
    expect(spellNumbers('1887年建成，高330米，45%', languagePackOf('zh'))).toBe(
      '一八八七年建成，高三百三十米，百分之四十五',
    );
  });

  it("reads the decimal separator by the pack's decimalWord, else by the library's word", () => {
    const spanish = languagePackOf('es');
    const numbers = spanish.numbers as Exclude<typeof spanish.numbers, string>;
    expect(spellNumbers('3,25', spanish)).toBe('tres coma veinticinco');
    const library = { ...spanish, numbers: { ...numbers, decimalWord: undefined } };
    expect(spellNumbers('3,25', library)).toBe('tres punto veinticinco');
    const thai = parseLanguagePack(
      { ...library, code: 'th', numbers: { library: 'n2words', locale: 'th-TH', decimalWord: 'ทศนิยม' } },
      'th.yaml',
    );
    expect(spellNumbers('3.5', thai)).toBe('สามทศนิยมห้า');
    const toWords = { ...spanish, numbers: { ...numbers, library: 'to-words' as const } };
    expect(spellNumbers('12,25', toWords)).toBe('doce coma veinticinco');
  });

  it('reads a German date with an ordinal day, in the dative after am, vom and zum', () => {
    const german = languagePackOf('de');
    expect(spellNumbers('am 3. Oktober 1990', german)).toBe('am dritten Oktober neunzehnhundertneunzig');
    expect(spellNumbers('Vom 1. Mai bis zum 31. Dezember', german)).toBe(
      'Vom ersten Mai bis zum einunddreißigsten Dezember',
    );
    // the library's ordinal after any other word: the nominative after der
    expect(spellNumbers('Der 3. Oktober 1990 war ein Mittwoch.', german)).toBe(
      'Der dritte Oktober neunzehnhundertneunzig war ein Mittwoch.',
    );
    // no month after the period, no day of a month, or a longer word: a number
    expect(spellNumbers('Kapitel 3. Danach am 32. Mai, am 3. Oktoberfest', german)).toBe(
      'Kapitel drei. Danach am zweiunddreißig. Mai, am drei. Oktoberfest',
    );
  });

  it('refuses dates for a library without ordinals', () => {
    const german = languagePackOf('de');
    const numbers = german.numbers as Exclude<typeof german.numbers, string>;
    const pack = { ...german, numbers: { ...numbers, library: 'to-words', locale: 'en-US' } };
    expect(() => parseLanguagePack(pack, 'de.yaml')).toThrow(/numbers\.dates.*to-words has no ordinals for "en-US"/);
  });

  it('leaves a unit symbol that is the start of a longer word', () => {
    expect(spellNumbers('5 kmh', languagePackOf('es'))).toBe('cinco kmh');
  });

  it('refuses a pack whose numbers name no library; the schema refuses an unknown locale', () => {
    expect(() => spellNumbers('1', languagePackOf('en'))).toThrow(/names no number library/);
    const pack = { ...languagePackOf('es'), numbers: { library: 'n2words', locale: 'xx-XX' } };
    expect(() => parseLanguagePack(pack, 'xx.yaml')).toThrow(/numbers\.locale.*n2words has no locale "xx-XX"/);
  });
});
