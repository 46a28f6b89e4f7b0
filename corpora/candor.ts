/**
 * CANDOR (English video-call conversations; Reece et al. 2023) as `ReferenceRecording`s.
 *
 * Layout read (one folder per conversation, the folder name is the conversation id):
 *
 *     <conversation>/transcription/transcript_{audiophile,cliffhanger,backbiter}.csv
 *     <conversation>/channel_map.json                      (optional, see below)
 *     <conversation>/processed/<conversation>.{wav,flac,mp3} (optional audio, or `audio` in channel_map.json)
 *
 * A transcript directly in the conversation folder (`<conversation>/transcript_backbiter.csv`) is
 * accepted too. A path given to {@link prepareCandor} is a conversation folder when it holds a
 * `transcription/` folder or a `transcript_*.csv` file; otherwise its sub-folders are the conversations.
 *
 * Transcripts: CSV with a header row; the columns read are `turn_id, speaker, start, stop, utterance`
 * (every segmentation also has `interval, delta, n_words` and others, which are not needed), and in
 * `backbiter` also `backchannel, backchannel_count, backchannel_speaker, backchannel_start,
 * backchannel_stop`. Times are seconds; they are rounded once, exactly on the written decimal, to
 * integer centiseconds. Everything is read as text (`cast: false`): speaker ids are hex strings and
 * must stay strings (`1e5` is not 100000, `007` is not 7).
 *
 * Segmentation (option `segmentation`, default `backbiter`):
 * - `audiophile`: the finest turns, split at every pause and speaker change; backchannels are turns
 *   of their own. Closest to raw speech activity.
 * - `cliffhanger`: turns split at sentence ends.
 * - `backbiter` (default): backchannels are taken out of the turn sequence and listed on the turn
 *   they occurred in (`backchannel*` columns), so a listener's "mm-hm" neither splits the speaker's
 *   turn nor counts as a turn. This is the segmentation built for turn-taking, which is what the
 *   reference recordings are for; each backchannel still becomes its own supervision (and speech
 *   segment) on the listener's channel, so the event rules can label it `BC`. Caveat: a backbiter
 *   turn spans the speaker's pauses inside it, so within-turn pauses (TURN_HOLD, SHORTPAUSE) are
 *   lost; use `audiophile` when those matter.
 *   When `backchannel_count` is above 1, CANDOR gives one start and one stop for the row: the
 *   backchannels become one supervision over that span (counted in the notes).
 *   Missing values are empty cells (or `NA`, `NaN`, `nan`, `None`, as pandas and R write them).
 *
 * Channels: CANDOR's audio is stereo, one speaker per side, with a channel map. Its exact file format
 * is not public to us, so we assume (and document here) a small JSON file `channel_map.json` in the
 * conversation folder:
 *
 *     {"channels": ["<speaker on channel 0 = left>", "<speaker on channel 1 = right>"], "audio": "processed/<id>.wav"}
 *
 * (`audio` optional, relative to the conversation folder; speaker ids are JSON strings). Without it,
 * the speaker of the first transcript row is put on channel 0 and the other on channel 1, which is
 * assumed (not checked) to match the audio's left and right.
 *
 * The transcript and channel-map formats and their parsers: candor-files.ts (re-exported).
 */
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import type { Centiseconds, Channel, ReferenceRecording, ReferenceSupervision } from '../pipeline/model/types.ts';
import {
  compareSupervisions,
  framesToCentiseconds,
  isDirectory,
  isFile,
  listFiles,
  readTextFile,
  readWavHeader,
  REFERENCE_CHANNELS,
  ReferenceCorpusError,
  segmentsFromSpans,
} from './reference-recording.ts';
import {
  DEFAULT_CANDOR_OPTIONS,
  parseCandorChannelMap,
  parseCandorTranscriptRecords,
  type CandorOptions,
  type CandorSegmentation,
  type CandorTranscriptRow,
} from './candor-files.ts';
import { describeSkippedRecord } from './skipped-records.ts';

export {
  CANDOR_BACKCHANNEL_COLUMNS,
  CANDOR_REQUIRED_COLUMNS,
  CANDOR_SEGMENTATIONS,
  DEFAULT_CANDOR_OPTIONS,
  parseCandorChannelMap,
  parseCandorTranscript,
  parseCandorTranscriptRecords,
  type CandorBackchannel,
  type CandorChannelMap,
  type CandorOptions,
  type CandorSegmentation,
  type CandorTranscript,
  type CandorTranscriptRow,
} from './candor-files.ts';

/** True when `folder` looks like one conversation (has `transcription/` or a `transcript_*.csv`). */
async function isConversationFolder(folder: string): Promise<boolean> {
  if (await isDirectory(path.join(folder, 'transcription'))) return true;
  return (await listFiles(folder, ['.csv'])).some((file) => path.basename(file).startsWith('transcript_'));
}

/** The transcript file of a conversation: `transcription/transcript_<s>.csv`, else `transcript_<s>.csv`. */
async function transcriptFile(folder: string, segmentation: CandorSegmentation): Promise<string> {
  const name = `transcript_${segmentation}.csv`;
  const nested = path.join(folder, 'transcription', name);
  if (await isFile(nested)) return nested;
  const flat = path.join(folder, name);
  if (await isFile(flat)) return flat;
  throw new ReferenceCorpusError(
    nested,
    {},
    `transcript file not found (segmentation ${segmentation}; also looked for ${flat})`,
  );
}

/** Audio files looked for when `channel_map.json` names none, in order. */
function audioCandidates(folder: string, id: string): string[] {
  return [
    ...['.wav', '.flac', '.mp3'].map((extension) => path.join(folder, 'processed', `${id}${extension}`)),
    ...['.wav', '.flac', '.mp3'].map((extension) => path.join(folder, `${id}${extension}`)),
  ];
}

/**
 * Loads one CANDOR conversation folder.
 *
 * @param folder the conversation folder (its name is the recording id).
 * @param options see {@link CandorOptions}.
 * @returns a `ReferenceRecording` (`format: 'candor'`): one supervision per utterance row and per
 *   backchannel (backbiter), speech segments = the supervisions' spans merged per channel (a speaker's
 *   own overlapping or abutting spans become one segment), rows whose start and stop round to the same
 *   centisecond dropped. `durationCs` is the WAV audio's length when a WAV file is found, else the
 *   end of the last utterance.
 * @throws ReferenceCorpusError (file, line, row, column) as {@link parseCandorTranscriptRecords} (a
 *   malformed row only when `strict`, else it is in `skippedRecords` and counted in a note), plus: the
 *   transcript file is missing, a row's speaker (or backchannel speaker) is not in `channel_map.json`,
 *   the transcript has a third speaker (no channel map) or fewer than two speakers.
 */
export async function readCandorConversation(folder: string, options: CandorOptions = {}): Promise<ReferenceRecording> {
  const { segmentation, strict } = { ...DEFAULT_CANDOR_OPTIONS, ...options };
  const id = path.basename(path.resolve(folder));
  const transcript = await transcriptFile(folder, segmentation);
  const { rows, skippedRecords } = parseCandorTranscriptRecords(
    await readTextFile(transcript, 'transcript'),
    transcript,
    segmentation,
    { strict },
  );
  const notes: string[] = [];
  const sources = [transcript];

  const channelMapFile = path.join(folder, 'channel_map.json');
  const channelMap = (await isFile(channelMapFile))
    ? parseCandorChannelMap(await readTextFile(channelMapFile, 'channel map'), channelMapFile)
    : undefined;
  const speakers: string[] = [];
  if (channelMap !== undefined) {
    speakers.push(...channelMap.channels);
    sources.push(channelMapFile);
    notes.push(`channels from channel_map.json: channel 0 (left) = ${speakers[0]}, channel 1 (right) = ${speakers[1]}`);
  }
  const channelOf = (speaker: string, row: CandorTranscriptRow, column: string): Channel => {
    let position = speakers.indexOf(speaker);
    if (position < 0) {
      const location = { line: row.line, row: row.row, column };
      if (channelMap !== undefined)
        throw new ReferenceCorpusError(
          transcript,
          location,
          `speaker ${JSON.stringify(speaker)} is not in ${channelMapFile} (${speakers.join(', ')})`,
        );
      if (speakers.length === 2)
        throw new ReferenceCorpusError(
          transcript,
          location,
          `third speaker ${JSON.stringify(speaker)} (the conversation has ${speakers.join(' and ')})`,
        );
      speakers.push(speaker);
      position = speakers.length - 1;
    }
    return position as Channel;
  };

  const spans: { channel: Channel; start: Centiseconds; end: Centiseconds }[] = [];
  const supervisions: ReferenceSupervision[] = [];
  let emptyRows = 0;
  let emptyTexts = 0;
  let backchannelCount = 0;
  let sharedSpans = 0;
  const add = (channel: Channel, speaker: string, start: Centiseconds, end: Centiseconds, text: string): void => {
    if (end <= start) {
      emptyRows += 1;
      return;
    }
    spans.push({ channel, start, end });
    if (text === '') emptyTexts += 1;
    else supervisions.push({ channel, start, end, speaker, text });
  };
  for (const row of rows) {
    add(channelOf(row.speaker, row, 'speaker'), row.speaker, row.start, row.end, row.utterance);
    for (const backchannel of row.backchannels) {
      backchannelCount += 1;
      if (backchannel.count > 1) sharedSpans += 1;
      add(
        channelOf(backchannel.speaker, row, 'backchannel_speaker'),
        backchannel.speaker,
        backchannel.start,
        backchannel.end,
        backchannel.text,
      );
    }
  }
  if (speakers.length < 2)
    throw new ReferenceCorpusError(
      transcript,
      {},
      `needs two speakers, found ${speakers.length} (${speakers.join(', ') || 'none'})`,
    );
  if (channelMap === undefined) {
    notes.push(
      `no channel_map.json: channel 0 = ${speakers[0]} (speaker of the first row), channel 1 = ${speakers[1]}; assumed to be the audio's left and right`,
    );
  }
  notes.push(`segmentation ${segmentation} (${path.basename(transcript)}): ${rows.length} rows`);
  if (skippedRecords.length > 0) notes.push(`skipped ${skippedRecords.length} malformed CANDOR rows (not strict)`);
  if (segmentation === 'backbiter') notes.push(`${backchannelCount} backchannels as their own supervisions`);
  if (sharedSpans > 0)
    notes.push(
      `${sharedSpans} rows list several backchannels with one start and stop: one supervision each over that span`,
    );
  if (emptyRows > 0)
    notes.push(`dropped ${emptyRows} utterances or backchannels whose start and stop round to the same centisecond`);
  if (emptyTexts > 0)
    notes.push(`${emptyTexts} utterances or backchannels without text: speech segment kept, no supervision`);

  const { segments, mergedCount } = segmentsFromSpans(spans);
  if (mergedCount > 0)
    notes.push(`merged ${mergedCount} overlapping or abutting spans of the same speaker into one segment`);
  const lastEnd = Math.max(0, ...spans.map((span) => span.end));

  const recording: ReferenceRecording = {
    id,
    format: 'candor',
    sources,
    durationCs: lastEnd,
    segments,
    channelSpeakers: { 0: speakers[0] as string, 1: speakers[1] as string },
    supervisions: supervisions.sort(compareSupervisions),
    notes,
  };
  if (skippedRecords.length > 0) recording.skippedRecords = skippedRecords.map(describeSkippedRecord);

  const listedAudio = channelMap?.audio === undefined ? undefined : path.join(folder, channelMap.audio);
  let audioFile: string | undefined;
  if (listedAudio !== undefined) {
    if (await isFile(listedAudio)) audioFile = listedAudio;
    else notes.push(`audio ${channelMap?.audio} named in channel_map.json not found; no audio`);
  } else {
    for (const candidate of audioCandidates(folder, id)) {
      if (await isFile(candidate)) {
        audioFile = candidate;
        break;
      }
    }
    if (audioFile === undefined) notes.push('no audio found (processed/<id>.wav, .flac or .mp3)');
  }
  if (audioFile !== undefined) {
    sources.push(audioFile);
    const header = audioFile.toLowerCase().endsWith('.wav') ? await readWavHeader(audioFile) : undefined;
    if (header !== undefined && header.channelCount > 2) {
      notes.push(`audio ${path.basename(audioFile)} has ${header.channelCount} channels; not used`);
    } else {
      recording.audio = REFERENCE_CHANNELS.map((channel) => ({ path: audioFile, channel }));
      if (header?.channelCount === 1)
        notes.push(`audio ${path.basename(audioFile)} is mono: both channels point at the mixed track`);
    }
    if (header !== undefined) {
      const audioLength = framesToCentiseconds(header.frameCount, header.sampleRate);
      if (lastEnd > audioLength)
        notes.push(`transcript runs ${((lastEnd - audioLength) / 100).toFixed(2)} s past the end of the audio`);
      recording.durationCs = Math.max(lastEnd, audioLength);
    } else {
      notes.push('duration is the end of the last utterance (audio length not read)');
    }
  } else {
    notes.push('duration is the end of the last utterance');
  }
  return recording;
}

/**
 * Loads CANDOR conversations.
 *
 * @param paths conversation folders and/or corpus folders (whose sub-folders are conversations,
 *   sorted by name); read in order.
 * @param options see {@link CandorOptions}.
 * @returns one recording per conversation.
 * @throws as {@link readCandorConversation}; ReferenceCorpusError when a path is not a folder, a
 *   corpus folder holds no conversation, or two folders have the same conversation id.
 */
export async function prepareCandor(
  paths: readonly string[],
  options: CandorOptions = {},
): Promise<ReferenceRecording[]> {
  const folders: string[] = [];
  for (const entry of paths) {
    if (!(await isDirectory(entry))) throw new ReferenceCorpusError(entry, {}, 'CANDOR folder not found');
    if (await isConversationFolder(entry)) {
      folders.push(entry);
      continue;
    }
    const children = (await readdir(entry))
      .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
      .map((name) => path.join(entry, name));
    const conversations: string[] = [];
    for (const child of children)
      if ((await isDirectory(child)) && (await isConversationFolder(child))) conversations.push(child);
    if (conversations.length === 0)
      throw new ReferenceCorpusError(
        entry,
        {},
        'no CANDOR conversation folder (with transcription/ or transcript_*.csv) inside',
      );
    folders.push(...conversations);
  }
  const recordings: ReferenceRecording[] = [];
  const seen = new Map<string, string>();
  for (const folder of folders) {
    const recording = await readCandorConversation(folder, options);
    const other = seen.get(recording.id);
    if (other !== undefined)
      throw new ReferenceCorpusError(folder, {}, `conversation id ${JSON.stringify(recording.id)} is also ${other}`);
    seen.set(recording.id, folder);
    recordings.push(recording);
  }
  return recordings;
}
