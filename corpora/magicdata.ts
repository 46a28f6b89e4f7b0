/**
 * MagicData-style conversational corpora (two speakers per session, e.g. MagicData-RAMC and the
 * Japanese conversational set used for M3-DuplexBench's Chat (Ja) track) as `ReferenceRecording`s.
 *
 * Layout read:
 *
 *     <corpus>/TXT/<session>.txt   one line per segment: [start,end]<TAB>SPEAKER<TAB>gender,dialect<TAB>text
 *     <corpus>/WAV/<session>.wav   the session audio (optional here; without it there is no audio)
 *     <corpus>/SPKINFO.txt         speaker list (optional here; used only to check speaker ids)
 *
 * Times are seconds (`[1.230,4.560]`), rounded once, exactly on the written decimal, to integer
 * centiseconds. Quirks handled here:
 * - a line whose text starts with `[*]` is noise or invalid speech: skipped, counted in the notes;
 * - markers in brackets (`[+]`, `[LAUGHTER]`, `[SONANT]`, ...) are removed from the supervision text,
 *   the segment is kept; a line with nothing but markers keeps its speech segment (laughter is
 *   vocal activity) but gets no supervision;
 * - a line whose start and end round to the same centisecond is dropped (counted);
 * - channels: the first speaker of the session (after skipping noise lines) goes on channel 0, the
 *   other on channel 1. When the WAV file is stereo, the order is checked against the audio
 *   (./magicdata-channel-order.ts): a speaker should be louder on their own channel while the other
 *   is silent (level difference of at least `CHANNEL_ORDER_MARGIN_DB` dB). When both speakers are
 *   clearly louder on the other side, the mapping is swapped to follow the audio; when the audio does
 *   not decide (crosstalk, too little solo speech), the first-speaker order is kept. Both cases are
 *   written to the notes. A mono WAV is a mix of both speakers: both channels point at it;
 * - more than two speakers in a session: the two with most talk time are kept, the others dropped
 *   (listed in the notes with their talk time); the recording then has no `audio` (a dropped
 *   speaker's voice is in it, so clips cut from it could hold a third voice).
 *
 * The TXT and SPKINFO.txt files are read by ./magicdata-transcript.ts.
 * SPKINFO.txt: its exact columns vary between releases; the loader reads the first tab- or
 * space-separated field of each line as a speaker id (a header line starting with `SPKID`,
 * `SPEAKER` or `ID` is skipped) and notes session speakers it does not list.
 */
import path from 'node:path';
import type {
  Centiseconds,
  Channel,
  ReferenceRecording,
  ReferenceSupervision,
  SpeechSegment,
} from '../pipeline/model/types.ts';
import {
  compareSupervisions,
  framesToCentiseconds,
  isDirectory,
  isFile,
  listFiles,
  readTextFile,
  readReferenceAudio,
  readWavHeader,
  REFERENCE_CHANNELS,
  ReferenceCorpusError,
  segmentsFromSpans,
  type AudioFileReader,
} from './reference-recording.ts';
import { mergeOverlappingSegments } from './rttm.ts';
import { checkChannelOrder } from './magicdata-channel-order.ts';
import { HAS_MARKER, parseMagicDataSpeakerInfo, parseMagicDataTranscript } from './magicdata-transcript.ts';
import { describeSkippedRecord } from './skipped-records.ts';

export {
  CHANNEL_ORDER_MARGIN_DB,
  CHANNEL_ORDER_MINIMUM_SOLO,
  checkChannelOrder,
  type ChannelOrderCheck,
} from './magicdata-channel-order.ts';
export {
  cleanMagicDataText,
  parseMagicDataSpeakerInfo,
  parseMagicDataTranscript,
  type MagicDataLine,
  type MagicDataTranscript,
} from './magicdata-transcript.ts';

/** Options of {@link prepareMagicData}. */
export interface MagicDataOptions {
  /** Only these sessions (TXT file names without `.txt`); default: every `TXT/*.txt`. */
  sessions?: readonly string[];
  /** Check the channel order against a stereo WAV (reads the whole file); default true. */
  verifyChannelOrder?: boolean;
  /** Reads an audio file; default {@link readReferenceAudio} (WAV in process, other formats through ffmpeg). */
  readAudio?: AudioFileReader;
  /**
   * Stop at the first malformed transcript line (default true); false skips it: the line is listed in
   * the recording's `skippedRecords` and counted in a note.
   */
  strict?: boolean;
}

/**
 * Loads one session.
 *
 * @param corpusFolder the folder holding `TXT/`, `WAV/`, `SPKINFO.txt`.
 * @param session the session name (`TXT/<session>.txt`).
 * @param speakerInfo speaker ids of SPKINFO.txt, or undefined when there is none.
 * @param options see {@link MagicDataOptions}.
 * @returns a `ReferenceRecording` (`format: 'magicdata'`): one supervision per kept line with text,
 *   segments = the kept lines' spans merged per channel; `durationCs` = the WAV length when there is
 *   a WAV (at least the last segment end), else the end of the last segment.
 * @throws ReferenceCorpusError (file and line) as {@link parseMagicDataTranscript} (a malformed line
 *   only when `strict`, else it is in `skippedRecords` and counted in a note); when the TXT file
 *   is missing or has fewer than two speakers; the reader's error when the WAV cannot be decoded.
 */
export async function readMagicDataSession(
  corpusFolder: string,
  session: string,
  speakerInfo: Set<string> | undefined,
  options: MagicDataOptions = {},
): Promise<ReferenceRecording> {
  const transcriptFile = path.join(corpusFolder, 'TXT', `${session}.txt`);
  const transcript = parseMagicDataTranscript(await readTextFile(transcriptFile, 'transcript'), transcriptFile, {
    strict: options.strict ?? true,
  });
  const notes: string[] = [];
  const sources = [transcriptFile];

  const order: string[] = [];
  const spansBySpeaker = new Map<string, SpeechSegment[]>();
  let emptyLines = 0;
  for (const line of transcript.lines) {
    if (line.end === line.start) {
      emptyLines += 1;
      continue;
    }
    if (!spansBySpeaker.has(line.speaker)) {
      order.push(line.speaker);
      spansBySpeaker.set(line.speaker, []);
    }
    spansBySpeaker.get(line.speaker)?.push({ start: line.start, end: line.end });
  }
  if (order.length < 2) {
    throw new ReferenceCorpusError(
      transcriptFile,
      {},
      `needs two speakers, found ${order.length} (${order.join(', ') || 'none'})`,
    );
  }
  let kept = order;
  if (order.length > 2) {
    const talk = (speaker: string): number =>
      mergeOverlappingSegments(spansBySpeaker.get(speaker) ?? []).segments.reduce(
        (sum, span) => sum + span.end - span.start,
        0,
      );
    const ranked = [...order].sort((a, b) => talk(b) - talk(a) || order.indexOf(a) - order.indexOf(b));
    const keep = new Set(ranked.slice(0, 2));
    kept = order.filter((speaker) => keep.has(speaker));
    for (const speaker of ranked.slice(2))
      notes.push(
        `dropped speaker ${speaker}: ${(talk(speaker) / 100).toFixed(2)} s of talk (only two speakers are kept)`,
      );
  }
  let speakers: [string, string] = [kept[0] as string, kept[1] as string];

  const wavFile = path.join(corpusFolder, 'WAV', `${session}.wav`);
  const hasWav = await isFile(wavFile);
  let durationCs = Math.max(0, ...transcript.lines.map((line) => line.end));
  let audio: ReferenceRecording['audio'];
  let orderNote = `channel 0 = ${speakers[0]} (first speaker), channel 1 = ${speakers[1]}`;
  if (hasWav) {
    sources.push(wavFile);
    const header = await readWavHeader(wavFile);
    if (header === undefined) {
      notes.push(`WAV/${session}.wav: header not understood; audio not used`);
    } else {
      const audioLength = framesToCentiseconds(header.frameCount, header.sampleRate);
      if (durationCs > audioLength)
        notes.push(`transcript runs ${((durationCs - audioLength) / 100).toFixed(2)} s past the end of the audio`);
      durationCs = Math.max(durationCs, audioLength);
      if (header.channelCount === 1) {
        audio = REFERENCE_CHANNELS.map((channel) => ({ path: wavFile, channel }));
        orderNote += '; mono WAV: both channels point at the mixed track';
      } else if (header.channelCount === 2) {
        audio = REFERENCE_CHANNELS.map((channel) => ({ path: wavFile, channel }));
        if (options.verifyChannelOrder ?? true) {
          const stereo = await (options.readAudio ?? readReferenceAudio)(wavFile);
          const tentative = {
            0: mergeOverlappingSegments(spansBySpeaker.get(speakers[0]) ?? []).segments,
            1: mergeOverlappingSegments(spansBySpeaker.get(speakers[1]) ?? []).segments,
          };
          const check = checkChannelOrder(stereo, tentative);
          const levels = `level left minus right: ${check.levelDifferenceDb.map((value) => `${value.toFixed(1)} dB`).join(' for the first speaker, ')} for the second`;
          if (check.decision === 'swapped') {
            speakers = [speakers[1], speakers[0]];
            orderNote = `channel 0 = ${speakers[0]}, channel 1 = ${speakers[1]}: swapped to follow the stereo WAV (${levels})`;
          } else if (check.decision === 'kept') {
            orderNote += `; confirmed by the stereo WAV (${levels})`;
          } else {
            orderNote += `; the stereo WAV does not decide the order (${levels}), first-speaker order kept`;
          }
        } else {
          orderNote += '; stereo WAV, channel order not checked';
        }
      } else {
        notes.push(`WAV/${session}.wav has ${header.channelCount} channels; audio not used`);
      }
    }
  } else {
    notes.push(`no WAV/${session}.wav: no audio; duration is the end of the last line`);
  }
  notes.unshift(orderNote);

  const channelOf = new Map<string, Channel>([
    [speakers[0], 0],
    [speakers[1], 1],
  ]);
  const spans: { channel: Channel; start: Centiseconds; end: Centiseconds }[] = [];
  const supervisions: ReferenceSupervision[] = [];
  let markerOnly = 0;
  let markersRemoved = 0;
  for (const line of transcript.lines) {
    const channel = channelOf.get(line.speaker);
    if (channel === undefined || line.end === line.start) continue;
    spans.push({ channel, start: line.start, end: line.end });
    if (HAS_MARKER.test(line.rawText)) markersRemoved += 1;
    if (line.text === '') markerOnly += 1;
    else supervisions.push({ channel, start: line.start, end: line.end, speaker: line.speaker, text: line.text });
  }
  const { segments, mergedCount } = segmentsFromSpans(spans);
  if (transcript.skippedRecords.length > 0)
    notes.push(`skipped ${transcript.skippedRecords.length} malformed MagicData lines (not strict)`);
  if (transcript.noiseLineCount > 0) notes.push(`skipped ${transcript.noiseLineCount} noise or invalid lines ([*])`);
  if (markersRemoved > 0) notes.push(`removed markers ([+], [LAUGHTER], ...) from the text of ${markersRemoved} lines`);
  if (markerOnly > 0) notes.push(`${markerOnly} lines hold only markers: speech segment kept, no supervision`);
  if (emptyLines > 0) notes.push(`dropped ${emptyLines} lines whose start and end round to the same centisecond`);
  if (mergedCount > 0)
    notes.push(`merged ${mergedCount} overlapping or abutting lines of the same speaker into one segment`);
  if (speakerInfo === undefined) notes.push('no SPKINFO.txt: speaker ids not checked');
  else {
    const unknown = speakers.filter((speaker) => !speakerInfo.has(speaker));
    if (unknown.length > 0) notes.push(`speakers not in SPKINFO.txt: ${unknown.join(', ')}`);
  }

  const recording: ReferenceRecording = {
    id: session,
    format: 'magicdata',
    sources,
    durationCs,
    segments,
    channelSpeakers: { 0: speakers[0], 1: speakers[1] },
    supervisions: supervisions.sort(compareSupervisions),
    notes,
  };
  if (transcript.skippedRecords.length > 0)
    recording.skippedRecords = transcript.skippedRecords.map(describeSkippedRecord);
  if (audio !== undefined && order.length > 2) {
    notes.push('audio left out: the dropped speakers are heard in it, so it is not one speaker per channel');
  } else if (audio !== undefined) {
    recording.audio = audio;
  }
  return recording;
}

/**
 * Loads MagicData-style corpora.
 *
 * @param paths corpus folders (each with `TXT/`), read in order; sessions by name within a folder.
 * @param options see {@link MagicDataOptions}.
 * @returns one recording per session.
 * @throws ReferenceCorpusError when a folder or its `TXT/` is missing, an asked session has no TXT
 *   file, two folders hold the same session, or as {@link readMagicDataSession}.
 */
export async function prepareMagicData(
  paths: readonly string[],
  options: MagicDataOptions = {},
): Promise<ReferenceRecording[]> {
  const recordings: ReferenceRecording[] = [];
  const seen = new Map<string, string>();
  for (const corpusFolder of paths) {
    const transcriptFolder = path.join(corpusFolder, 'TXT');
    if (!(await isDirectory(transcriptFolder)))
      throw new ReferenceCorpusError(
        transcriptFolder,
        {},
        'TXT folder not found (expected <corpus>/TXT/<session>.txt)',
      );
    const sessions =
      options.sessions === undefined
        ? (await listFiles(transcriptFolder, ['.txt'])).map((file) => path.basename(file, path.extname(file)))
        : [...options.sessions];
    const speakerInfoFile = path.join(corpusFolder, 'SPKINFO.txt');
    const speakerInfo = (await isFile(speakerInfoFile))
      ? parseMagicDataSpeakerInfo(await readTextFile(speakerInfoFile, 'speaker info'))
      : undefined;
    for (const session of sessions) {
      const other = seen.get(session);
      if (other !== undefined)
        throw new ReferenceCorpusError(corpusFolder, {}, `session ${JSON.stringify(session)} is also in ${other}`);
      seen.set(session, corpusFolder);
      const recording = await readMagicDataSession(corpusFolder, session, speakerInfo, options);
      if (speakerInfo !== undefined) recording.sources.push(speakerInfoFile);
      recordings.push(recording);
    }
  }
  return recordings;
}
