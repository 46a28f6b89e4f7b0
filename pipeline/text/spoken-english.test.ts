import { describe, expect, it } from 'vitest';
import { cardinalWords, decadeWords, decimalWords, ordinalWords, yearWords } from './number-words.ts';
import { normaliseSpokenEnglish as normalise } from './spoken-english.ts';

describe('number words', () => {
  it('spells cardinals, ordinals, decimals and years', () => {
    expect(cardinalWords(3776)).toBe('three thousand seven hundred seventy-six');
    expect(cardinalWords('1,000,000')).toBe('one million');
    expect(ordinalWords(21)).toBe('twenty-first');
    expect(decimalWords('3.14')).toBe('three point one four');
    expect(yearWords(1987)).toBe('nineteen eighty-seven');
    expect(yearWords(2005)).toBe('two thousand five');
    expect(yearWords(2017)).toBe('twenty seventeen');
    expect(yearWords(1900)).toBe('nineteen hundred');
    expect(yearWords(1905)).toBe('nineteen oh five');
    expect(yearWords(2000)).toBe('two thousand');
    expect(decadeWords(1990)).toBe('nineteen nineties');
    expect(() => cardinalWords(-1)).toThrow(RangeError);
  });
});

describe('normaliseSpokenEnglish', () => {
  const cases: Record<string, Array<[string, string]>> = {
    numbers: [
      ['Up to 2,000 eggs', 'Up to two thousand eggs'],
      ['It has 21 stages', 'It has twenty-one stages'],
      ['More than 2000 people', 'More than two thousand people'],
      ['a temperature of -5', 'a temperature of minus five'],
      ['agent 007', 'agent zero zero seven'],
    ],
    years: [
      ['1987', 'nineteen eighty-seven'],
      ['In 2005', 'In two thousand five'],
      ['Between 1887 and 1889', 'Between eighteen eighty-seven and eighteen eighty-nine'],
      ['Built 1887–1889', 'Built eighteen eighty-seven to eighteen eighty-nine'],
      ['He shared the 1973 Nobel Prize', 'He shared the nineteen seventy-three Nobel Prize'],
      ['the 1990s', 'the nineteen nineties'],
      ["the '90s", 'the nineties'],
      ['c. 1500', 'around fifteen hundred'],
    ],
    dates: [
      ['12 December 2017', 'the twelfth of December, twenty seventeen'],
      ['December 12, 2017', 'December twelfth, twenty seventeen'],
      ['2017-12-12', 'December twelfth, twenty seventeen'],
      ['July 1–19, 1903', 'July first to nineteenth, nineteen oh three'],
      ['on July 4', 'on July fourth'],
      ['Sep. 2017', 'September twenty seventeen'],
    ],
    ordinals: [
      ['the 3rd stage', 'the third stage'],
      ['in the 20th century', 'in the twentieth century'],
      ['21st', 'twenty-first'],
    ],
    decimals: [
      ['3.14', 'three point one four'],
      ['3,776.24 m', 'three thousand seven hundred seventy-six point two four meters'],
    ],
    percentages: [
      ['45%', 'forty-five percent'],
      ['4.5 percent', 'four point five percent'],
    ],
    currency: [
      ['$5.2 million', 'five point two million dollars'],
      ['$5.25', 'five dollars and twenty-five cents'],
      ['$1', 'one dollar'],
      ['$3bn', 'three billion dollars'],
      ['€500,000, out of €2.3 million', 'five hundred thousand euros, out of two point three million euros'],
      ['£3.50', 'three pounds and fifty pence'],
      ['5 USD', 'five US dollars'],
    ],
    units: [
      ['5 km', 'five kilometers'],
      ['1 km', 'one kilometer'],
      ['70 kg', 'seventy kilograms'],
      ['330 m', 'three hundred thirty meters'],
      ['6 ft', 'six feet'],
      ['5 ft. tall', 'five feet tall'],
      ['60 mph', 'sixty miles per hour'],
      ['25°C', 'twenty-five degrees Celsius'],
      ['-5 °C', 'minus five degrees Celsius'],
      ['6.57 km²', 'six point five seven square kilometers'],
      ['120 km/h', 'one hundred twenty kilometers per hour'],
      ['5 million people', 'five million people'],
    ],
    symbols: [
      ['Shoji & Motosu', 'Shoji and Motosu'],
      ['A + B', 'A plus B'],
      ['me@home', 'me at home'],
      ['and/or', 'and or'],
      ['rock/pop', 'rock or pop'],
      ['3/4 of it', 'three quarters of it'],
      ['open 24/7', 'open twenty-four seven'],
      ['#1 hit', 'number one hit'],
    ],
    abbreviations: [
      ['e.g. apples', 'for example apples'],
      ['i.e. pears', 'that is pears'],
      ['Thames, Mersey, Tyne etc', 'Thames, Mersey, Tyne and so on'],
      ['Rivers etc. The end', 'Rivers and so on. The end'],
      ['Dr. Smith', 'Doctor Smith'],
      ['St. Paul', 'Saint Paul'],
      ['Baker St.', 'Baker Street'],
      ['U.S. Army', 'United States Army'],
      ['Lakers vs. Celtics', 'Lakers versus Celtics'],
      ['how high is mt. fuji', 'how high is mount fuji'],
      ['N.A.S.A. rockets', 'NASA rockets'],
      ['at 5:30 p.m.', 'at five thirty PM'],
      ['No. 5', 'Number five'],
    ],
    'brackets, markup and whitespace': [
      ['330 m (1,083 ft)', 'three hundred thirty meters'],
      ['The yellow jersey (maillot jaune)', 'The yellow jersey'],
      ['a [citation needed] claim', 'a claim'],
      ['nested (a (b) c) gone', 'nested gone'],
      ['*bold* and `code`', 'bold and code'],
      ['It  transformed\u00a0 its society ,  quickly', 'It transformed its society, quickly'],
      ['“quoted” words', 'quoted words'],
    ],
  };

  for (const [category, examples] of Object.entries(cases)) {
    it(`handles ${category}`, () => {
      for (const [written, spoken] of examples) expect(normalise(written), written).toBe(spoken);
    });
  }

  it('never leaves a digit', () => {
    const messy = 'Call 555-0199 at 10:05, room 4B/12, ratio 16:9, v2.0.1, 1e10, 12345678901234567890';
    expect(normalise(messy)).not.toMatch(/\d/);
  });
});
