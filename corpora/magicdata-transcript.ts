/**
 * The text files of a MagicData-style corpus (./magicdata.ts): one session's `TXT/<session>.txt`
 * (`[start,end]<TAB>SPEAKER<TAB>gender,dialect<TAB>text` per line, times rounded to integer
 * centiseconds; noise lines `[*]` skipped, bracketed markers removed from the text) and the speaker
 * ids of `SPKINFO.txt`.
 */
import type { Centiseconds } from '../pipeline/model/types.ts';
import { parseSecondsToCentiseconds, ReferenceCorpusError } from './reference-recording.ts';
import { skippedRecordOf, type SkippedRecord } from './skipped-records.ts';

/** One parsed transcript line. */
export interface MagicDataLine {
  /** 1-based line number. */
  line: number;
  start: Centiseconds;
  end: Centiseconds;
  speaker: string;
  /** The `gender,dialect` field as written. */
  speakerInfo: string;
  /** Text as written (markers included). */
  rawText: string;
  /** Text with markers removed and whitespace collapsed; may be empty. */
  text: string;
}

/** A parsed transcript: kept lines and what was skipped. */
export interface MagicDataTranscript {
  lines: MagicDataLine[];
  /** Lines whose text starts with `[*]`. */
  noiseLineCount: number;
  /** Blank lines skipped. */
  blankLineCount: number;
  /** Malformed lines skipped (`strict: false`), in file order; empty when strict. */
  skippedRecords: SkippedRecord[];
}

const LINE_PATTERN = /^\[([^,\]]*),([^\]]*)\]\t([^\t]*)\t([^\t]*)\t(.*)$/;
const MARKER = /\[[^[\]]*\]/g;
/** Whether a text holds a bracketed marker (`[+]`, `[LAUGHTER]`, ...). */
export const HAS_MARKER = /\[[^[\]]*\]/;

/**
 * Removes bracketed markers (`[+]`, `[LAUGHTER]`, ...) and collapses whitespace runs to one space.
 * `"最近は[LAUGHTER]ゴルフを"` -> `"最近はゴルフを"`; `"[LAUGHTER]"` -> `""`.
 */
export function cleanMagicDataText(text: string): string {
  return text.replace(MARKER, '').replace(/\s+/gu, ' ').trim();
}

/**
 * Parses one `TXT/<session>.txt` file.
 *
 * @param text file content.
 * @param file path, for error messages.
 * @param options `strict` (default true): stop at the first malformed line; false skips it into
 *   `skippedRecords` (file, line and reason) and reads the others.
 * @returns kept lines in file order (times in integer centiseconds), counts of skipped lines and the
 *   malformed lines skipped.
 * @throws ReferenceCorpusError, only when strict, naming the file and line (and field) when a line
 *   does not match `[start,end]<TAB>SPEAKER<TAB>gender,dialect<TAB>text`, a time is not a
 *   non-negative decimal number of seconds, the end is before the start, or the speaker is empty.
 */
export function parseMagicDataTranscript(
  text: string,
  file: string,
  options: { strict?: boolean } = {},
): MagicDataTranscript {
  const strict = options.strict ?? true;
  const skippedRecords: SkippedRecord[] = [];
  const lines: MagicDataLine[] = [];
  let noiseLineCount = 0;
  let blankLineCount = 0;
  const rawLines = text.replace(/^\uFEFF/, '').split('\n');
  if (rawLines.at(-1) === '') rawLines.pop();
  rawLines.forEach((rawLine, index) => {
    try {
      readLine(rawLine, index + 1);
    } catch (error) {
      if (strict || !(error instanceof ReferenceCorpusError)) throw error;
      skippedRecords.push(skippedRecordOf(error));
    }
  });
  return { lines, noiseLineCount, blankLineCount, skippedRecords };

  /** Reads one line into `lines` or the counts. @throws ReferenceCorpusError for a malformed line */
  function readLine(rawLine: string, lineNumber: number): void {
    const content = rawLine.replace(/\r$/, '');
    if (content.trim() === '') {
      blankLineCount += 1;
      return;
    }
    const fail = (reason: string, column?: string): never => {
      throw new ReferenceCorpusError(
        file,
        column === undefined ? { line: lineNumber } : { line: lineNumber, column },
        reason,
      );
    };
    const match = LINE_PATTERN.exec(content);
    if (match === null) fail('expected [start,end]<TAB>SPEAKER<TAB>gender,dialect<TAB>text');
    const [, startText, endText, speakerText, speakerInfo, rawText] = match as unknown as [
      string,
      string,
      string,
      string,
      string,
      string,
    ];
    const start =
      parseSecondsToCentiseconds(startText) ??
      fail(`${JSON.stringify(startText)} is not a non-negative decimal number of seconds`, 'start');
    const end =
      parseSecondsToCentiseconds(endText) ??
      fail(`${JSON.stringify(endText)} is not a non-negative decimal number of seconds`, 'end');
    if (end < start) fail(`end ${endText} is before start ${startText}`, 'end');
    if (rawText.trim().startsWith('[*]')) {
      noiseLineCount += 1;
      return;
    }
    const speaker = speakerText.trim();
    if (speaker === '') fail('empty speaker id', 'speaker');
    lines.push({
      line: lineNumber,
      start,
      end,
      speaker,
      speakerInfo: speakerInfo.trim(),
      rawText,
      text: cleanMagicDataText(rawText),
    });
  }
}

/**
 * Parses `SPKINFO.txt` into the set of speaker ids it lists (first field of each line; a header line
 * starting with `SPKID`, `SPEAKER` or `ID` skipped).
 */
export function parseMagicDataSpeakerInfo(text: string): Set<string> {
  const speakers = new Set<string>();
  for (const line of text.replace(/^\uFEFF/, '').split(/\r?\n/)) {
    const first = line.trim().split(/\s+/)[0] ?? '';
    if (first === '' || /^(SPKID|SPEAKER(_?ID)?|ID)$/i.test(first)) continue;
    speakers.add(first);
  }
  return speakers;
}
