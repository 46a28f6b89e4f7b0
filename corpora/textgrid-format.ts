/**
 * Reading Praat TextGrid text files (./textgrid.ts turns them into reference recordings): after the
 * header strings `"ooTextFile"` and `"TextGrid"`, a flat sequence of numbers, texts in double quotes
 * (`""` inside a text; texts may span lines) and flags (`<exists>`); everything else is a comment
 * (the labels of the long form, text after `!`), so one reader handles the long and the short form
 * (Praat manual, "TextGrid file formats"). UTF-8 or UTF-16 with a byte-order mark; every error names
 * the file and line.
 *
 * A value that is not a number where one belongs is kept as a number token without a value (NaN),
 * so it is named rather than read as a prefix or passed over: a word that starts like a number but
 * goes on (`1.2.3`, `0.7s`), and in the long form any word right after `=` (`xmin = abc`). At an
 * interval's or point's time, a text in double quotes (`xmin = "abc"`) is such a value too.
 */
import { InputFileError, readInputFile } from '../pipeline/storage/read-input-file.ts';
import type { Centiseconds } from '../pipeline/model/types.ts';
import { parseSecondsToCentiseconds, ReferenceCorpusError } from './reference-recording.ts';
import { skippedRecordOf, type SkippedRecord } from './skipped-records.ts';

/** One interval (or point: start = end) of a tier. */
export interface TextGridInterval {
  start: Centiseconds;
  end: Centiseconds;
  /** The text with `""` unescaped; not trimmed. */
  text: string;
  /** 1-based line of the interval's first number. */
  line: number;
}

/** One tier. */
export interface TextGridTier {
  kind: 'IntervalTier' | 'TextTier';
  name: string;
  start: Centiseconds;
  end: Centiseconds;
  /** Intervals (IntervalTier) or points (TextTier, start = end = the point's time), in file order. */
  intervals: TextGridInterval[];
  /** 1-based line of the tier's class text. */
  line: number;
}

/** A parsed TextGrid. */
export interface TextGrid {
  file: string;
  /** `long` when labels (`xmin =`, `item [1]:`) accompany the values, `short` when they do not. */
  form: 'long' | 'short';
  start: Centiseconds;
  end: Centiseconds;
  tiers: TextGridTier[];
  /** Intervals and points skipped for a bad time (`strict: false`), in file order. */
  skippedRecords?: SkippedRecord[];
}

/** Options of {@link parseTextGrid} and {@link readTextGrid}. */
export interface TextGridParseOptions {
  /**
   * Stop at the first interval or point with a bad time (not a number, negative, unusable, or an
   * interval ending before it starts). Default true; false skips it into `skippedRecords`.
   */
  strict?: boolean;
}

/** `value` is NaN for a value written where a number belongs that is not one (module comment). */
type Token =
  | { kind: 'number'; value: number; text: string; line: number }
  | { kind: 'text'; value: string; line: number }
  | { kind: 'flag'; value: string; line: number };

const NUMBER_PREFIX = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?/;

/**
 * Splits TextGrid text into numbers, texts and flags (module comment); comments are dropped.
 * @returns the tokens and whether any comment word (long-form label) was seen after the header.
 * @throws ReferenceCorpusError naming the file and the line where a text starts that is never closed.
 */
function tokenize(text: string, file: string): { tokens: Token[]; sawLabels: boolean } {
  const tokens: Token[] = [];
  let sawLabels = false;
  let line = 1;
  let index = 0;
  // a long-form label ends with `=` and its value follows on the same line
  let afterEquals = false;
  const length = text.length;
  while (index < length) {
    const character = text[index] as string;
    if (character !== ' ' && character !== '\t' && character !== '\r' && character !== '\f' && character !== '\v')
      afterEquals = afterEquals && character !== '\n' && character !== '"' && character !== '<' && character !== '!';
    if (character === '\n') {
      line += 1;
      index += 1;
    } else if (
      character === ' ' ||
      character === '\t' ||
      character === '\r' ||
      character === '\f' ||
      character === '\v'
    ) {
      index += 1;
    } else if (character === '!') {
      while (index < length && text[index] !== '\n') index += 1;
    } else if (character === '"') {
      const startLine = line;
      let value = '';
      index += 1;
      for (;;) {
        if (index >= length)
          throw new ReferenceCorpusError(file, { line: startLine }, 'a text in double quotes is never closed');
        const next = text[index] as string;
        if (next === '"') {
          if (text[index + 1] === '"') {
            value += '"';
            index += 2;
            continue;
          }
          index += 1;
          break;
        }
        if (next === '\n') line += 1;
        value += next;
        index += 1;
      }
      tokens.push({ kind: 'text', value, line: startLine });
    } else if (character === '<') {
      const close = text.indexOf('>', index);
      const newline = text.indexOf('\n', index);
      if (close === -1 || (newline !== -1 && newline < close)) {
        sawLabels = true;
        index += 1;
        continue;
      }
      tokens.push({ kind: 'flag', value: text.slice(index + 1, close), line });
      index = close + 1;
    } else {
      let end = index;
      while (end < length && !/\s/.test(text[end] as string) && text[end] !== '"' && text[end] !== '!') end += 1;
      const word = text.slice(index, end);
      const number = NUMBER_PREFIX.exec(word);
      if (number !== null)
        tokens.push({ kind: 'number', value: number[0] === word ? Number(word) : Number.NaN, text: word, line });
      else if (afterEquals) tokens.push({ kind: 'number', value: Number.NaN, text: word, line });
      else if (tokens.length >= 2) sawLabels = true;
      afterEquals = word === '=';
      index = end;
    }
  }
  return { tokens, sawLabels };
}

/**
 * Decodes TextGrid bytes: UTF-16 (big or little endian) when the file starts with its byte-order mark
 * or has a zero byte among its first two (UTF-16 without mark), else UTF-8; a UTF-8 byte-order mark
 * is removed.
 */
export function decodeTextGrid(bytes: Uint8Array): string {
  const first = bytes[0];
  const second = bytes[1];
  if ((first === 0xfe && second === 0xff) || first === 0)
    return new TextDecoder('utf-16be').decode(bytes).replace(/^\uFEFF/, '');
  if ((first === 0xff && second === 0xfe) || (second === 0 && bytes.length > 1))
    return new TextDecoder('utf-16le').decode(bytes).replace(/^\uFEFF/, '');
  return new TextDecoder('utf-8').decode(bytes).replace(/^\uFEFF/, '');
}

/**
 * Parses the text of a TextGrid file (long or short text form).
 *
 * @param text the decoded file content.
 * @param file path for messages.
 * @param options `strict: false` skips an interval or point with a bad time instead of throwing.
 * @returns the tiers with times in integer centiseconds (rounded half up on the written decimal).
 * @throws ReferenceCorpusError naming the file and line when the header is not `"ooTextFile"` +
 *   `"TextGrid"` (a binary TextGrid is named as such), a value has the wrong kind (a text where a
 *   number belongs, ...), a time is not a number or is negative, an interval ends before it starts,
 *   a tier class is unknown, or the file ends before the counts say it should; a bad time of an
 *   interval or point only when strict.
 */
export function parseTextGrid(text: string, file: string, options: TextGridParseOptions = {}): TextGrid {
  const strict = options.strict ?? true;
  const skippedRecords: SkippedRecord[] = [];
  if (text.startsWith('ooBinaryFile'))
    throw new ReferenceCorpusError(
      file,
      { line: 1 },
      'binary TextGrid (ooBinaryFile) is not read: save it from Praat as a text file',
    );
  const { tokens, sawLabels } = tokenize(text, file);
  let position = 0;
  const lastLine = text.split('\n').length;
  const next = (what: string): Token => {
    const token = tokens[position];
    if (token === undefined)
      throw new ReferenceCorpusError(file, { line: lastLine }, `the file ends where ${what} should follow`);
    position += 1;
    return token;
  };
  const describe = (token: Token) =>
    token.kind === 'number'
      ? `the number ${token.text}`
      : token.kind === 'text'
        ? `the text ${JSON.stringify(token.value)}`
        : `the flag <${token.value}>`;
  const expectText = (what: string): { value: string; line: number } => {
    const token = next(what);
    if (token.kind !== 'text')
      throw new ReferenceCorpusError(
        file,
        { line: token.line },
        `expected ${what} (a text in double quotes), found ${describe(token)}`,
      );
    return token;
  };
  const expectNumber = (what: string): Extract<Token, { kind: 'number' }> => {
    const token = next(what);
    if (token.kind !== 'number')
      throw new ReferenceCorpusError(
        file,
        { line: token.line },
        `expected ${what} (a number), found ${describe(token)}`,
      );
    return token;
  };
  // a text at a record's time is a bad value of that record (skippable), not a misplaced text
  const expectRecordTime = (what: string): Extract<Token, { kind: 'number' }> => {
    const token = tokens[position];
    if (token?.kind !== 'text') return expectNumber(what);
    position += 1;
    return { kind: 'number', value: Number.NaN, text: token.value, line: token.line };
  };
  const expectTime = (what: string): { value: Centiseconds; line: number } => timeOf(expectNumber(what), what);
  const timeOf = (token: Extract<Token, { kind: 'number' }>, what: string): { value: Centiseconds; line: number } => {
    if (Number.isNaN(token.value))
      throw new ReferenceCorpusError(
        file,
        { line: token.line },
        `${what} ${JSON.stringify(token.text)} is not a number`,
      );
    if (token.value < 0)
      throw new ReferenceCorpusError(file, { line: token.line }, `${what} ${token.text} is negative`);
    const exact = parseSecondsToCentiseconds(token.text.replace(/^\+/, ''));
    const value = exact ?? Math.round(token.value * 100);
    if (!Number.isSafeInteger(value))
      throw new ReferenceCorpusError(file, { line: token.line }, `${what} ${token.text} is not a usable time`);
    return { value, line: token.line };
  };
  const expectCount = (what: string): number => {
    const token = expectNumber(what);
    if (!Number.isSafeInteger(token.value) || token.value < 0)
      throw new ReferenceCorpusError(
        file,
        { line: token.line },
        `${what} ${Number.isNaN(token.value) ? JSON.stringify(token.text) : token.text} is not a whole number`,
      );
    return token.value;
  };
  const fileType = tokens[0];
  if (fileType === undefined || fileType.kind !== 'text' || !fileType.value.startsWith('ooTextFile')) {
    throw new ReferenceCorpusError(
      file,
      { line: fileType?.line ?? 1 },
      'not a Praat text file: it must start with File type = "ooTextFile"',
    );
  }
  position = 1;
  const objectClass = expectText('the object class');
  if (objectClass.value !== 'TextGrid')
    throw new ReferenceCorpusError(
      file,
      { line: objectClass.line },
      `object class is ${JSON.stringify(objectClass.value)}, not "TextGrid"`,
    );
  const start = expectTime('the TextGrid xmin').value;
  const end = expectTime('the TextGrid xmax').value;
  const tiers: TextGridTier[] = [];
  const exists = next('<exists> or <absent>');
  if (exists.kind !== 'flag' || (exists.value !== 'exists' && exists.value !== 'absent')) {
    throw new ReferenceCorpusError(
      file,
      { line: exists.line },
      `expected the flag <exists> or <absent> after xmax, found ${describe(exists)}`,
    );
  }
  if (exists.value === 'exists') {
    const tierCount = expectCount('the number of tiers');
    for (let tierIndex = 1; tierIndex <= tierCount; tierIndex += 1) {
      const kind = expectText(`the class of tier ${tierIndex}`);
      if (kind.value !== 'IntervalTier' && kind.value !== 'TextTier') {
        throw new ReferenceCorpusError(
          file,
          { line: kind.line },
          `tier ${tierIndex} has class ${JSON.stringify(kind.value)}, expected "IntervalTier" or "TextTier"`,
        );
      }
      const name = expectText(`the name of tier ${tierIndex}`).value;
      const label = `tier ${tierIndex} (${JSON.stringify(name)})`;
      const tierStart = expectTime(`the xmin of ${label}`).value;
      const tierEnd = expectTime(`the xmax of ${label}`).value;
      const count = expectCount(`the number of ${kind.value === 'IntervalTier' ? 'intervals' : 'points'} of ${label}`);
      const intervals: TextGridInterval[] = [];
      for (let item = 1; item <= count; item += 1) {
        // the tokens of one record are read first, so a bad time can be skipped without losing the place
        const isInterval = kind.value === 'IntervalTier';
        const record = isInterval ? `interval ${item} of ${label}` : `point ${item} of ${label}`;
        const fromToken = expectRecordTime(isInterval ? `the xmin of ${record}` : `the time of ${record}`);
        const toToken = isInterval ? expectRecordTime(`the xmax of ${record}`) : fromToken;
        const recordText = expectText(isInterval ? `the text of ${record}` : `the mark of ${record}`).value;
        try {
          const from = timeOf(fromToken, isInterval ? `the xmin of ${record}` : `the time of ${record}`);
          const to = isInterval ? timeOf(toToken, `the xmax of ${record}`) : from;
          if (to.value < from.value)
            throw new ReferenceCorpusError(file, { line: to.line }, `${record} ends before it starts`);
          intervals.push({ start: from.value, end: to.value, text: recordText, line: from.line });
        } catch (error) {
          if (strict || !(error instanceof ReferenceCorpusError)) throw error;
          skippedRecords.push(skippedRecordOf(error));
        }
      }
      tiers.push({ kind: kind.value, name, start: tierStart, end: tierEnd, intervals, line: kind.line });
    }
  }
  const extra = tokens[position];
  if (extra !== undefined)
    throw new ReferenceCorpusError(
      file,
      { line: extra.line },
      `unexpected ${describe(extra)} after the last tier (do the counts match the intervals?)`,
    );
  return { file, form: sawLabels ? 'long' : 'short', start, end, tiers, skippedRecords };
}

/**
 * Reads and parses a TextGrid file ({@link decodeTextGrid}, {@link parseTextGrid}).
 * @throws ReferenceCorpusError naming the file when it is missing or not a regular
 *   file, and as parseTextGrid.
 */
export async function readTextGrid(file: string, options: TextGridParseOptions = {}): Promise<TextGrid> {
  let bytes: Uint8Array;
  try {
    bytes = await readInputFile(file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new ReferenceCorpusError(
      file,
      {},
      code === 'ENOENT'
        ? 'TextGrid file not found'
        : error instanceof InputFileError
          ? `cannot read TextGrid file: it ${error.reason}`
          : `cannot read TextGrid file (${code ?? (error as Error).message})`,
      { cause: error },
    );
  }
  return parseTextGrid(decodeTextGrid(bytes), file, options);
}
