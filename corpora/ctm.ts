/**
 * NIST CTM (time-marked conversation) word timings as `ReferenceRecording`s: what sclite scores and
 * what ASR toolkits (Kaldi `nbest-to-ctm`, NeMo, whisper-based aligners) write. sclite's input
 * formats page (`infmts`):
 *
 *     CTM :== <F> <C> <BT> <DUR> word [ <CONF> ]
 *
 * `<F>` the waveform name (no path or extension), `<C>` the channel (`A`/`B`, or any text without
 * white space), `<BT>` the begin time and `<DUR>` the duration in seconds, `<CONF>` an optional
 * confidence. Fields are separated by white space; lines starting with `;;` are comments; blank lines
 * are skipped. Alternations are written as
 *
 *     7654 A * * <ALT_BEGIN>
 *     7654 A 12.00 0.34 UM
 *     7654 A * * <ALT>
 *     7654 A 12.00 0.34 UH
 *     7654 A * * <ALT_END>
 *
 * of which the first alternative is kept (the others are counted in the notes).
 *
 * Times: begin and begin + duration summed exactly on the written decimals (microseconds), then
 * rounded once, half up, to integer centiseconds. Noise and silence words (`[noise]`, `<sil>`,
 * `{LG}`, ...) are not speech (word-timings.ts, `nonSpeechTokens`).
 *
 * Recordings, across every file given (folders: their `*.ctm` files):
 * - a waveform with two channels is one recording (id = `<F>`): the channel labels in code-unit
 *   order go on channels 0 and 1 (`A` -> 0, `B` -> 1; `1` -> 0, `2` -> 1);
 * - two one-channel waveforms `<id>_0` and `<id>_1` (one per speaker, the stereo-wav naming) make one
 *   recording `<id>`.
 * Speakers are `<F>:<C>` (CTM names no speakers) unless `channelSpeakers` gives them. Audio:
 * `<id>.wav` or `<id>_0.wav` + `<id>_1.wav` beside the first CTM file or in `audioDirectory`.
 */
import path from 'node:path';
import type { Centiseconds, Channel, ReferenceRecording } from '../pipeline/model/types.ts';
import { isDirectory, isFile, listFiles, readTextFile, ReferenceCorpusError } from './reference-recording.ts';
import { microsecondsToCentiseconds, parseMicroseconds } from './rttm.ts';
import { describeSkippedRecord, skippedRecordOf, type SkippedRecord } from './skipped-records.ts';
import {
  findRecordingAudio,
  recordingFromTimedTokens,
  speechTokenPredicate,
  type NonSpeechTokenOptions,
  type TimedToken,
} from './word-timings.ts';

/** One word line of a CTM file. */
export interface CtmWord {
  waveform: string;
  channel: string;
  start: Centiseconds;
  end: Centiseconds;
  word: string;
  /** The confidence, when the line has one. */
  confidence?: number;
  file: string;
  /** 1-based line number. */
  line: number;
}

/** The words of one CTM file. */
export interface CtmFile {
  file: string;
  words: CtmWord[];
  /** Words of alternatives after the first (left out). */
  droppedAlternativeWords: number;
  /** Malformed word lines skipped (`strict: false`), in file order; empty when strict. */
  skippedRecords: SkippedRecord[];
  /** The waveform field of each skipped line, by line (which recording the record belongs to). */
  skippedWaveforms: Map<number, string>;
}

/** Options of {@link parseCtm}. */
export interface CtmParseOptions {
  /** Stop at the first malformed word line (default true); false skips it into `skippedRecords`. */
  strict?: boolean;
}

/**
 * Parses the text of one CTM file.
 * @param text file content.
 * @param file path for messages.
 * @param options `strict: false` skips malformed word lines instead of throwing.
 * @returns the words in file order (alternations resolved to their first alternative).
 * @throws ReferenceCorpusError naming the file and line for a line with fewer than 5 or more than 6
 *   fields, a begin time or duration that is not a non-negative decimal (or `*` outside an
 *   alternation marker), a confidence that is not a number (these only when strict), or an
 *   alternation marker out of place.
 */
export function parseCtm(text: string, file: string, options: CtmParseOptions = {}): CtmFile {
  const strict = options.strict ?? true;
  const words: CtmWord[] = [];
  const skippedRecords: SkippedRecord[] = [];
  const skippedWaveforms = new Map<number, string>();
  let droppedAlternativeWords = 0;
  let alternation: { line: number; alternative: number } | undefined;
  const lines = text.split(/\r?\n/);
  lines.forEach((raw, index) => {
    try {
      readLine(raw, index + 1);
    } catch (error) {
      if (strict || !(error instanceof ReferenceCorpusError) || error.reason.includes('<ALT')) throw error; // a misplaced alternation marker is the file's structure, not one record
      skippedRecords.push(skippedRecordOf(error));
      const waveform = raw.trim().split(/\s+/)[0];
      if (waveform !== undefined && waveform !== '') skippedWaveforms.set(index + 1, waveform);
    }
  });
  if (alternation !== undefined)
    throw new ReferenceCorpusError(file, { line: alternation.line }, '<ALT_BEGIN> is never closed by <ALT_END>');
  return { file, words, droppedAlternativeWords, skippedRecords, skippedWaveforms };

  /** Reads one line into `words`; throws ReferenceCorpusError for a malformed one. */
  function readLine(raw: string, line: number): void {
    const trimmed = raw.trim();
    if (trimmed === '' || trimmed.startsWith(';;')) return;
    const fields = trimmed.split(/\s+/);
    if (fields.length < 5 || fields.length > 6) {
      throw new ReferenceCorpusError(
        file,
        { line },
        `expected 5 or 6 fields (file channel begin duration word [confidence]), found ${fields.length}`,
      );
    }
    const [waveform, channel, beginText, durationText, word, confidenceText] = fields as [
      string,
      string,
      string,
      string,
      string,
      string | undefined,
    ];
    if (word === '<ALT_BEGIN>' || word === '<ALT>' || word === '<ALT_END>') {
      if (word === '<ALT_BEGIN>') {
        if (alternation !== undefined)
          throw new ReferenceCorpusError(
            file,
            { line },
            `<ALT_BEGIN> inside the alternation opened on line ${alternation.line}`,
          );
        alternation = { line, alternative: 1 };
      } else if (alternation === undefined) {
        throw new ReferenceCorpusError(file, { line }, `${word} without <ALT_BEGIN>`);
      } else if (word === '<ALT>') {
        alternation.alternative += 1;
      } else {
        alternation = undefined;
      }
      return;
    }
    const begin = parseMicroseconds(beginText);
    if (begin === null)
      throw new ReferenceCorpusError(
        file,
        { line, column: 'begin time' },
        `${JSON.stringify(beginText)} is not a non-negative decimal number of seconds`,
      );
    const duration = parseMicroseconds(durationText);
    if (duration === null)
      throw new ReferenceCorpusError(
        file,
        { line, column: 'duration' },
        `${JSON.stringify(durationText)} is not a non-negative decimal number of seconds`,
      );
    let confidence: number | undefined;
    if (confidenceText !== undefined) {
      confidence = Number(confidenceText);
      if (!Number.isFinite(confidence) || confidenceText.trim() === '') {
        throw new ReferenceCorpusError(
          file,
          { line, column: 'confidence' },
          `${JSON.stringify(confidenceText)} is not a number`,
        );
      }
    }
    if (alternation !== undefined && alternation.alternative > 1) {
      droppedAlternativeWords += 1;
      return;
    }
    words.push({
      waveform,
      channel,
      start: microsecondsToCentiseconds(begin),
      end: microsecondsToCentiseconds(begin + duration),
      word,
      ...(confidence === undefined ? {} : { confidence }),
      file,
      line,
    });
  }
}

/** Options of {@link prepareCtm}. */
export interface CtmOptions extends NonSpeechTokenOptions {
  /** Speaker ids per recording id, overriding `<F>:<C>`. */
  channelSpeakers?: Readonly<Record<string, Readonly<Record<Channel, string>>>>;
  /** Look for the audio here instead of beside the CTM file. */
  audioDirectory?: string;
  /**
   * Stop at the first malformed record (ReferenceCorpusError naming file and line). Default true;
   * false skips malformed word lines ({@link parseCtm}) and the words of a waveform's third and
   * further channel labels (the two with most words are kept): each is listed in its recording's
   * `skippedRecords` and counted in a note.
   */
  strict?: boolean;
}

const PAIR_NAME = /^(.+)_([01])$/;

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Loads CTM recordings (module comment).
 *
 * @param paths `.ctm` files or folders of them.
 * @returns one recording per id, sorted by id; `format: 'ctm'`, supervisions with word timings, audio
 *   when found.
 * @throws ReferenceCorpusError naming the file (and line) when a path is missing, a file is malformed,
 *   a waveform has more than two channels, a one-channel waveform has no `_0`/`_1` partner, or a
 *   recording's words come from two folders.
 */
export async function prepareCtm(paths: readonly string[], options: CtmOptions = {}): Promise<ReferenceRecording[]> {
  const files: string[] = [];
  for (const given of paths) {
    if (await isDirectory(given)) {
      const found = await listFiles(given, ['.ctm']);
      if (found.length === 0) throw new ReferenceCorpusError(given, {}, 'no *.ctm files in the folder');
      files.push(...found);
    } else if (await isFile(given)) files.push(given);
    else throw new ReferenceCorpusError(given, {}, 'no such file or folder');
  }
  const parsed: CtmFile[] = [];
  const strict = options.strict ?? true;
  for (const file of [...new Set(files)]) parsed.push(parseCtm(await readTextFile(file, 'CTM'), file, { strict }));
  const byWaveform = new Map<string, CtmWord[]>();
  for (const ctm of parsed) {
    for (const word of ctm.words) {
      const list = byWaveform.get(word.waveform) ?? [];
      list.push(word);
      byWaveform.set(word.waveform, list);
    }
  }
  const skipped = strict ? [] : skipExtraChannels(byWaveform);
  for (const ctm of parsed)
    for (const record of ctm.skippedRecords)
      skipped.push({ waveform: ctm.skippedWaveforms.get(record.line ?? 0) ?? '', record });
  const placed = new Set<SkippedRecord>();
  const isSpeech = speechTokenPredicate(options.nonSpeechTokens);
  type Planned = { id: string; channels: { waveform: string; label: string; words: CtmWord[] }[] };
  const planned = new Map<string, Planned>();
  const add = (recording: Planned, first: CtmWord) => {
    if (planned.has(recording.id))
      throw new ReferenceCorpusError(
        first.file,
        { line: first.line },
        `recording ${recording.id} is given twice (as a two-channel waveform and as a _0/_1 pair)`,
      );
    planned.set(recording.id, recording);
  };
  for (const waveform of [...byWaveform.keys()].sort(compareText)) {
    const words = byWaveform.get(waveform) as CtmWord[];
    const labels = [...new Set(words.map((word) => word.channel))].sort(compareText);
    const first = words[0] as CtmWord;
    if (labels.length > 2) {
      throw new ReferenceCorpusError(
        first.file,
        { line: first.line },
        `waveform ${waveform} has ${labels.length} channels (${labels.join(', ')}), expected 2 (one speaker each) or 1 (one file per speaker)`,
      );
    }
    if (labels.length === 2) {
      add(
        {
          id: waveform,
          channels: labels.map((label) => ({ waveform, label, words: words.filter((word) => word.channel === label) })),
        },
        first,
      );
      continue;
    }
    const pair = PAIR_NAME.exec(waveform);
    if (pair === null) {
      throw new ReferenceCorpusError(
        first.file,
        { line: first.line },
        `waveform ${waveform} has one channel (${labels[0]}): give the other speaker's channel, or name the two waveforms <id>_0 and <id>_1`,
      );
    }
    const id = pair[1] as string;
    if (pair[2] === '1') {
      if (byWaveform.has(`${id}_0`)) continue; // read with its _0 partner
      throw new ReferenceCorpusError(first.file, { line: first.line }, `waveform ${waveform} has no partner ${id}_0`);
    }
    const partner = byWaveform.get(`${id}_1`);
    if (partner === undefined)
      throw new ReferenceCorpusError(first.file, { line: first.line }, `waveform ${waveform} has no partner ${id}_1`);
    const partnerLabels = [...new Set(partner.map((word) => word.channel))];
    if (partnerLabels.length !== 1) {
      const partnerFirst = partner[0] as CtmWord;
      throw new ReferenceCorpusError(
        partnerFirst.file,
        { line: partnerFirst.line },
        `waveform ${id}_1 has ${partnerLabels.length} channels, expected 1 (it is one half of a pair)`,
      );
    }
    add(
      {
        id,
        channels: [
          { waveform, label: labels[0] as string, words },
          { waveform: `${id}_1`, label: partnerLabels[0] as string, words: partner },
        ],
      },
      first,
    );
  }
  const recordings: ReferenceRecording[] = [];
  for (const recording of [...planned.values()].sort((a, b) => compareText(a.id, b.id))) {
    const sources = [...new Set(recording.channels.flatMap((channel) => channel.words.map((word) => word.file)))].sort(
      compareText,
    );
    const speakers = options.channelSpeakers?.[recording.id] ?? {
      0: `${recording.channels[0]?.waveform}:${recording.channels[0]?.label}`,
      1: `${recording.channels[1]?.waveform}:${recording.channels[1]?.label}`,
    };
    const tokens: TimedToken[] = [];
    const notes: string[] = [];
    recording.channels.forEach((entry, index) => {
      const channel = index as Channel;
      notes.push(`channel ${channel} = ${speakers[channel]} (waveform ${entry.waveform}, CTM channel ${entry.label})`);
      for (const word of entry.words)
        tokens.push({ channel, start: word.start, end: word.end, text: word.word, speech: isSpeech(word.word) });
    });
    const dropped = parsed
      .filter((ctm) => sources.includes(ctm.file))
      .reduce((sum, ctm) => sum + ctm.droppedAlternativeWords, 0);
    if (dropped > 0)
      notes.push(
        `${dropped} words of later alternatives (<ALT>) left out in ${sources.map((file) => path.basename(file)).join(', ')}`,
      );
    const audio = await findRecordingAudio(options.audioDirectory ?? path.dirname(sources[0] as string), recording.id);
    if (audio !== undefined) notes.push(audio.note);
    const waveforms = new Set(recording.channels.map((channel) => channel.waveform));
    const own = skipped.filter((entry) => waveforms.has(entry.waveform)).map((entry) => entry.record);
    for (const record of own) placed.add(record);
    if (own.length > 0) notes.push(`skipped ${own.length} malformed CTM records (not strict)`);
    recordings.push(
      recordingFromTimedTokens({
        id: recording.id,
        format: 'ctm',
        sources,
        tokens,
        channelSpeakers: speakers,
        ...(audio === undefined
          ? {}
          : { durationCs: Math.max(audio.durationCs, ...tokens.map((token) => token.end)), audio: audio.audio }),
        notes,
      }),
    );
    if (own.length > 0) (recordings.at(-1) as ReferenceRecording).skippedRecords = own.map(describeSkippedRecord);
  }
  const unplaced = skipped.map((entry) => entry.record).filter((record) => !placed.has(record));
  const first = recordings[0];
  if (unplaced.length > 0 && first !== undefined) {
    // a line whose waveform field names no recording (or is missing): counted once, with the first recording
    first.skippedRecords = [...(first.skippedRecords ?? []), ...unplaced.map(describeSkippedRecord)];
    first.notes.push(`skipped ${unplaced.length} malformed CTM records of no recording (not strict)`);
  }
  return recordings;
}

/**
 * Leaves out the words of a waveform's channel labels beyond the two with the most words (ties: label
 * order), removing them from `byWaveform` in place.
 * @returns one skipped record per word left out, with its waveform.
 */
function skipExtraChannels(byWaveform: Map<string, CtmWord[]>): { waveform: string; record: SkippedRecord }[] {
  const skipped: { waveform: string; record: SkippedRecord }[] = [];
  for (const [waveform, words] of byWaveform) {
    const counts = new Map<string, number>();
    for (const word of words) counts.set(word.channel, (counts.get(word.channel) ?? 0) + 1);
    if (counts.size <= 2) continue;
    const labels = [...counts.keys()].sort(compareText);
    const kept = [...labels].sort((a, b) => (counts.get(b) as number) - (counts.get(a) as number)).slice(0, 2);
    for (const word of words.filter((entry) => !kept.includes(entry.channel)))
      skipped.push({
        waveform,
        record: {
          source: word.file,
          line: word.line,
          reason: `channel ${word.channel} of waveform ${waveform} is a third channel (the waveform has ${labels.join(', ')}; two speakers expected)`,
        },
      });
    byWaveform.set(
      waveform,
      words.filter((entry) => kept.includes(entry.channel)),
    );
  }
  return skipped;
}
