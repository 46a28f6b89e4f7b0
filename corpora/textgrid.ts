/**
 * Praat TextGrid word timings as `ReferenceRecording`s: one interval tier per speaker, as Montreal
 * Forced Aligner (MFA) writes them, for a stereo WAV or a pair of files.
 *
 * The file format (Praat manual, "TextGrid file formats"): after the header strings `"ooTextFile"`
 * and `"TextGrid"`, a TextGrid text file is a flat sequence of three kinds of token: numbers, texts in
 * double quotes (a `"` inside a text is written `""`; texts may span lines) and flags (`<exists>`).
 * Everything else is a comment: the labels of the long form (`xmin =`, `item [1]:`,
 * `intervals: size =`), and text after `!` to the end of the line. So one reader handles the long
 * ("text file") and the short ("short text file") form:
 *
 *     xmin xmax <exists> tierCount
 *     per tier:  "IntervalTier" name xmin xmax intervalCount  (xmin xmax "text") × intervalCount
 *                "TextTier"     name xmin xmax pointCount     (time "mark") × pointCount
 *
 * Encodings: UTF-8 (MFA, praatio), UTF-16 with a byte-order mark (Praat writes UTF-16 when a text is
 * not ASCII). Binary TextGrids (`ooBinaryFile`) are not read. No npm TextGrid parser is kept well
 * enough (the `textgrid` package strips every `"` from texts and reads only the long form), so this
 * reader is our own; every error names the file and line.
 *
 * Speaker tiers (in this order of preference, unless `speakerTiers` names them):
 * 1. interval tiers named `<speaker> - words` (MFA for files with several speakers; the
 *    `<speaker> - phones` tiers are ignored): speaker id `<speaker>`;
 * 2. an interval tier named `words` (MFA for a single-speaker file);
 * 3. every interval tier except `phones` / `<speaker> - phones`: speaker id = tier name.
 * Point tiers are ignored (noted). Times are rounded once, half up on the written decimal, to integer
 * centiseconds. Empty intervals are MFA's silences; noise and silence labels are not speech
 * (word-timings.ts, `nonSpeechTokens`). MFA's `<unk>` (a word missing from the dictionary) is speech.
 *
 * Recordings (paths are `.TextGrid` files or folders of them):
 * - `<id>.TextGrid` with two speaker tiers: channel 0 = first tier, channel 1 = second;
 * - `<id>_0.TextGrid` + `<id>_1.TextGrid` with one speaker tier each (one file per speaker);
 *   a tier named just `words` then gets the speaker id `<id>:<channel>`.
 * Audio (`corpora/word-timings.ts` `findRecordingAudio`): `<id>.wav` (stereo, or a mono mix) or
 * `<id>_0.wav` + `<id>_1.wav`, beside the TextGrid or in `audioDirectory`.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Centiseconds, Channel, ReferenceRecording } from '../pipeline/model/types.ts';
import { isDirectory, isFile, listFiles, parseSecondsToCentiseconds, REFERENCE_CHANNELS, ReferenceCorpusError } from './reference-recording.ts';
import { findRecordingAudio, recordingFromTimedTokens, speechTokenPredicate, type NonSpeechTokenOptions, type TimedToken } from './word-timings.ts';

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
}

type Token = { kind: 'number'; value: number; text: string; line: number } | { kind: 'text'; value: string; line: number } | { kind: 'flag'; value: string; line: number };

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
  const length = text.length;
  while (index < length) {
    const character = text[index] as string;
    if (character === '\n') {
      line += 1;
      index += 1;
    } else if (character === ' ' || character === '\t' || character === '\r' || character === '\f' || character === '\v') {
      index += 1;
    } else if (character === '!') {
      while (index < length && text[index] !== '\n') index += 1;
    } else if (character === '"') {
      const startLine = line;
      let value = '';
      index += 1;
      for (;;) {
        if (index >= length) throw new ReferenceCorpusError(file, { line: startLine }, 'a text in double quotes is never closed');
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
      if (number !== null) tokens.push({ kind: 'number', value: Number(number[0]), text: number[0], line });
      else if (tokens.length >= 2) sawLabels = true;
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
  if ((first === 0xfe && second === 0xff) || first === 0) return new TextDecoder('utf-16be').decode(bytes).replace(/^\uFEFF/, '');
  if ((first === 0xff && second === 0xfe) || (second === 0 && bytes.length > 1)) return new TextDecoder('utf-16le').decode(bytes).replace(/^\uFEFF/, '');
  return new TextDecoder('utf-8').decode(bytes).replace(/^\uFEFF/, '');
}

/**
 * Parses the text of a TextGrid file (long or short text form).
 *
 * @param text the decoded file content.
 * @param file path for messages.
 * @returns the tiers with times in integer centiseconds (rounded half up on the written decimal).
 * @throws ReferenceCorpusError naming the file and line when the header is not `"ooTextFile"` +
 *   `"TextGrid"` (a binary TextGrid is named as such), a value has the wrong kind (a text where a
 *   number belongs, ...), a time is negative, an interval ends before it starts, a tier class is
 *   unknown, or the file ends before the counts say it should.
 */
export function parseTextGrid(text: string, file: string): TextGrid {
  if (text.startsWith('ooBinaryFile')) throw new ReferenceCorpusError(file, { line: 1 }, 'binary TextGrid (ooBinaryFile) is not read: save it from Praat as a text file');
  const { tokens, sawLabels } = tokenize(text, file);
  let position = 0;
  const lastLine = text.split('\n').length;
  const next = (what: string): Token => {
    const token = tokens[position];
    if (token === undefined) throw new ReferenceCorpusError(file, { line: lastLine }, `the file ends where ${what} should follow`);
    position += 1;
    return token;
  };
  const describe = (token: Token) => (token.kind === 'number' ? `the number ${token.text}` : token.kind === 'text' ? `the text ${JSON.stringify(token.value)}` : `the flag <${token.value}>`);
  const expectText = (what: string): { value: string; line: number } => {
    const token = next(what);
    if (token.kind !== 'text') throw new ReferenceCorpusError(file, { line: token.line }, `expected ${what} (a text in double quotes), found ${describe(token)}`);
    return token;
  };
  const expectNumber = (what: string): Extract<Token, { kind: 'number' }> => {
    const token = next(what);
    if (token.kind !== 'number') throw new ReferenceCorpusError(file, { line: token.line }, `expected ${what} (a number), found ${describe(token)}`);
    return token;
  };
  const expectTime = (what: string): { value: Centiseconds; line: number } => {
    const token = expectNumber(what);
    if (token.value < 0) throw new ReferenceCorpusError(file, { line: token.line }, `${what} ${token.text} is negative`);
    const exact = parseSecondsToCentiseconds(token.text.replace(/^\+/, ''));
    const value = exact ?? Math.round(token.value * 100);
    if (!Number.isSafeInteger(value)) throw new ReferenceCorpusError(file, { line: token.line }, `${what} ${token.text} is not a usable time`);
    return { value, line: token.line };
  };
  const expectCount = (what: string): number => {
    const token = expectNumber(what);
    if (!Number.isSafeInteger(token.value) || token.value < 0) throw new ReferenceCorpusError(file, { line: token.line }, `${what} ${token.text} is not a whole number`);
    return token.value;
  };
  const fileType = tokens[0];
  if (fileType === undefined || fileType.kind !== 'text' || !fileType.value.startsWith('ooTextFile')) {
    throw new ReferenceCorpusError(file, { line: fileType?.line ?? 1 }, 'not a Praat text file: it must start with File type = "ooTextFile"');
  }
  position = 1;
  const objectClass = expectText('the object class');
  if (objectClass.value !== 'TextGrid') throw new ReferenceCorpusError(file, { line: objectClass.line }, `object class is ${JSON.stringify(objectClass.value)}, not "TextGrid"`);
  const start = expectTime('the TextGrid xmin').value;
  const end = expectTime('the TextGrid xmax').value;
  const tiers: TextGridTier[] = [];
  const exists = next('<exists> or <absent>');
  if (exists.kind !== 'flag' || (exists.value !== 'exists' && exists.value !== 'absent')) {
    throw new ReferenceCorpusError(file, { line: exists.line }, `expected the flag <exists> or <absent> after xmax, found ${describe(exists)}`);
  }
  if (exists.value === 'exists') {
    const tierCount = expectCount('the number of tiers');
    for (let tierIndex = 1; tierIndex <= tierCount; tierIndex += 1) {
      const kind = expectText(`the class of tier ${tierIndex}`);
      if (kind.value !== 'IntervalTier' && kind.value !== 'TextTier') {
        throw new ReferenceCorpusError(file, { line: kind.line }, `tier ${tierIndex} has class ${JSON.stringify(kind.value)}, expected "IntervalTier" or "TextTier"`);
      }
      const name = expectText(`the name of tier ${tierIndex}`).value;
      const label = `tier ${tierIndex} (${JSON.stringify(name)})`;
      const tierStart = expectTime(`the xmin of ${label}`).value;
      const tierEnd = expectTime(`the xmax of ${label}`).value;
      const count = expectCount(`the number of ${kind.value === 'IntervalTier' ? 'intervals' : 'points'} of ${label}`);
      const intervals: TextGridInterval[] = [];
      for (let item = 1; item <= count; item += 1) {
        if (kind.value === 'IntervalTier') {
          const from = expectTime(`the xmin of interval ${item} of ${label}`);
          const to = expectTime(`the xmax of interval ${item} of ${label}`);
          if (to.value < from.value) throw new ReferenceCorpusError(file, { line: to.line }, `interval ${item} of ${label} ends before it starts`);
          intervals.push({ start: from.value, end: to.value, text: expectText(`the text of interval ${item} of ${label}`).value, line: from.line });
        } else {
          const time = expectTime(`the time of point ${item} of ${label}`);
          intervals.push({ start: time.value, end: time.value, text: expectText(`the mark of point ${item} of ${label}`).value, line: time.line });
        }
      }
      tiers.push({ kind: kind.value, name, start: tierStart, end: tierEnd, intervals, line: kind.line });
    }
  }
  const extra = tokens[position];
  if (extra !== undefined) throw new ReferenceCorpusError(file, { line: extra.line }, `unexpected ${describe(extra)} after the last tier (do the counts match the intervals?)`);
  return { file, form: sawLabels ? 'long' : 'short', start, end, tiers };
}

/**
 * Reads and parses a TextGrid file ({@link decodeTextGrid}, {@link parseTextGrid}).
 * @throws ReferenceCorpusError naming the file when it is missing, and as parseTextGrid.
 */
export async function readTextGrid(file: string): Promise<TextGrid> {
  let bytes: Uint8Array;
  try {
    bytes = await readFile(file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new ReferenceCorpusError(file, {}, code === 'ENOENT' ? 'TextGrid file not found' : `cannot read TextGrid file (${code ?? (error as Error).message})`, { cause: error });
  }
  return parseTextGrid(decodeTextGrid(bytes), file);
}

/** Options of {@link prepareTextGrid}. */
export interface TextGridOptions extends NonSpeechTokenOptions {
  /** Names of the speaker tiers, in channel order (two for a file with both speakers, one per file of a pair); default: found as in the module comment. */
  speakerTiers?: readonly string[];
  /** Look for the audio here instead of beside each TextGrid. */
  audioDirectory?: string;
}

/** A speaker tier chosen from a TextGrid, with the speaker id it gives (undefined for a bare `words` tier). */
export interface SpeakerTier {
  tier: TextGridTier;
  speaker: string | undefined;
}

const WORDS_SUFFIX = / - words$/i;
const PHONES_TIER = /^(?:phones|.+ - phones)$/i;

/**
 * Chooses the speaker tiers of a TextGrid (module comment).
 * @param names explicit tier names (channel order), or undefined to find them.
 * @throws ReferenceCorpusError naming the file when a named tier is missing or is not an interval tier.
 */
export function speakerTiersOf(grid: TextGrid, names?: readonly string[]): SpeakerTier[] {
  const intervalTiers = grid.tiers.filter((tier) => tier.kind === 'IntervalTier');
  if (names !== undefined) {
    return names.map((name) => {
      const tier = grid.tiers.find((candidate) => candidate.name === name);
      if (tier === undefined) throw new ReferenceCorpusError(grid.file, {}, `no tier named ${JSON.stringify(name)} (tiers: ${grid.tiers.map((candidate) => JSON.stringify(candidate.name)).join(', ')})`);
      if (tier.kind !== 'IntervalTier') throw new ReferenceCorpusError(grid.file, { line: tier.line }, `tier ${JSON.stringify(name)} is a point tier, not an interval tier`);
      return { tier, speaker: name.replace(WORDS_SUFFIX, '') };
    });
  }
  const mfaSpeakers = intervalTiers.filter((tier) => WORDS_SUFFIX.test(tier.name));
  if (mfaSpeakers.length > 0) return mfaSpeakers.map((tier) => ({ tier, speaker: tier.name.replace(WORDS_SUFFIX, '') }));
  const words = intervalTiers.find((tier) => tier.name.toLowerCase() === 'words');
  if (words !== undefined) return [{ tier: words, speaker: undefined }];
  return intervalTiers.filter((tier) => !PHONES_TIER.test(tier.name)).map((tier) => ({ tier, speaker: tier.name }));
}

const PAIR_NAME = /^(.+)_([01])$/;

/** One recording to build: one TextGrid with both speakers, or a pair. */
type PlannedRecording = { id: string; files: string[] };

/**
 * Builds the recording from its TextGrid(s).
 * @param id recording id.
 * @param grids one TextGrid with two speaker tiers, or two with one each (channel order).
 * @throws ReferenceCorpusError naming the file when the speaker tiers are not two (one per file of a pair).
 */
export function textGridToReferenceRecording(
  id: string,
  grids: readonly TextGrid[],
  options: TextGridOptions = {},
  audio?: { audio: { path: string; channel: Channel }[]; durationCs: Centiseconds; note: string },
): ReferenceRecording {
  const isSpeech = speechTokenPredicate(options.nonSpeechTokens);
  const chosen: { tier: TextGridTier; speaker: string; grid: TextGrid }[] = [];
  if (grids.length === 1) {
    const grid = grids[0] as TextGrid;
    const tiers = speakerTiersOf(grid, options.speakerTiers);
    if (tiers.length !== 2) {
      throw new ReferenceCorpusError(
        grid.file,
        {},
        `found ${tiers.length} speaker tiers (${tiers.map((entry) => JSON.stringify(entry.tier.name)).join(', ') || 'none'}), expected 2: name them with speakerTiers (--tiers), or give one file per speaker as ${id}_0.TextGrid and ${id}_1.TextGrid`,
      );
    }
    tiers.forEach((entry, channel) => chosen.push({ tier: entry.tier, speaker: entry.speaker ?? `${id}:${channel}`, grid }));
  } else {
    grids.forEach((grid, channel) => {
      const tiers = speakerTiersOf(grid, options.speakerTiers === undefined ? undefined : [options.speakerTiers[channel] ?? options.speakerTiers[0] as string]);
      if (tiers.length !== 1) {
        throw new ReferenceCorpusError(grid.file, {}, `found ${tiers.length} speaker tiers (${tiers.map((entry) => JSON.stringify(entry.tier.name)).join(', ') || 'none'}) in one file of a pair, expected 1`);
      }
      const entry = tiers[0] as SpeakerTier;
      chosen.push({ tier: entry.tier, speaker: entry.speaker ?? `${id}:${channel}`, grid });
    });
  }
  if (chosen[0]?.speaker === chosen[1]?.speaker) {
    throw new ReferenceCorpusError(grids[0]?.file ?? id, {}, `both channels have the speaker ${JSON.stringify(chosen[0]?.speaker)}`);
  }
  const tokens: TimedToken[] = [];
  const notes: string[] = [];
  chosen.forEach(({ tier, speaker, grid }, channel) => {
    notes.push(`channel ${channel} = ${speaker} (tier ${JSON.stringify(tier.name)} of ${path.basename(grid.file)}, ${grid.form} text form)`);
    for (const interval of tier.intervals) {
      const text = interval.text.replace(/\s+/g, ' ').trim();
      tokens.push({ channel: channel as Channel, start: interval.start, end: interval.end, text, speech: isSpeech(text) });
    }
  });
  for (const grid of grids) {
    const points = grid.tiers.filter((tier) => tier.kind === 'TextTier');
    if (points.length > 0) notes.push(`${path.basename(grid.file)}: point tiers ignored (${points.map((tier) => JSON.stringify(tier.name)).join(', ')})`);
  }
  const gridEnd = Math.max(...grids.map((grid) => grid.end));
  if (audio !== undefined) {
    notes.push(audio.note);
    if (Math.abs(audio.durationCs - gridEnd) > 10) notes.push(`the audio lasts ${audio.durationCs / 100} s, the TextGrid ${gridEnd / 100} s`);
  }
  return recordingFromTimedTokens({
    id,
    format: 'textgrid',
    sources: grids.map((grid) => grid.file),
    tokens,
    channelSpeakers: { 0: chosen[0]?.speaker as string, 1: chosen[1]?.speaker as string },
    durationCs: audio?.durationCs ?? gridEnd,
    ...(audio === undefined ? {} : { audio: audio.audio }),
    notes,
  });
}

/**
 * Loads TextGrid recordings (module comment).
 *
 * @param paths `.TextGrid` files or folders of them (a pair half given alone brings its partner from
 *   the same folder).
 * @returns one recording per id, sorted by id; `format: 'textgrid'`, supervisions with word timings,
 *   audio when found.
 * @throws ReferenceCorpusError naming the file (and line) when a path is missing, a pair half has no
 *   partner, a recording id appears twice, a file is malformed, or the speaker tiers do not fit.
 */
export async function prepareTextGrid(paths: readonly string[], options: TextGridOptions = {}): Promise<ReferenceRecording[]> {
  const files = new Set<string>();
  for (const given of paths) {
    if (await isDirectory(given)) {
      const found = await listFiles(given, ['.textgrid']);
      if (found.length === 0) throw new ReferenceCorpusError(given, {}, 'no *.TextGrid files in the folder');
      for (const file of found) files.add(file);
    } else if (await isFile(given)) files.add(given);
    else throw new ReferenceCorpusError(given, {}, 'no such file or folder');
  }
  const planned = new Map<string, PlannedRecording>();
  for (const file of [...files].sort()) {
    const stem = path.basename(file).replace(/\.textgrid$/i, '');
    const pair = PAIR_NAME.exec(stem);
    let id = stem;
    let recordingFiles = [file];
    if (pair !== null) {
      id = pair[1] as string;
      const extension = path.extname(file);
      recordingFiles = REFERENCE_CHANNELS.map((channel) => path.join(path.dirname(file), `${id}_${channel}${extension}`));
      const partner = recordingFiles.find((candidate) => candidate !== file) as string;
      if (!(await isFile(partner))) {
        // A lone `<x>_0.TextGrid` may be a whole recording named with an underscore: read it alone.
        id = stem;
        recordingFiles = [file];
      }
    }
    const earlier = planned.get(id);
    if (earlier !== undefined) {
      if (earlier.files.join('\n') === recordingFiles.join('\n')) continue;
      throw new ReferenceCorpusError(file, {}, `recording ${id} is also read from ${earlier.files.join(' + ')}`);
    }
    planned.set(id, { id, files: recordingFiles });
  }
  const recordings: ReferenceRecording[] = [];
  for (const recording of [...planned.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))) {
    const grids = [];
    for (const file of recording.files) grids.push(await readTextGrid(file));
    const audio = await findRecordingAudio(options.audioDirectory ?? path.dirname(recording.files[0] as string), recording.id);
    recordings.push(textGridToReferenceRecording(recording.id, grids, options, audio));
  }
  return recordings;
}
