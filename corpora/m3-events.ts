/**
 * M3-DuplexBench benchmark folders (docs/dataset-format.md) as `ReferenceRecording`s: a folder
 * `data/{lang}/{domain}/{dataset}/` with `{split}.jsonl` (one events line per dialogue),
 * `txt_align/{id}.txt` (word alignment) and, when present, `audio/{id}.wav`.
 *
 * - Segments come from the words (`segmentsFromWords`: a channel's words merged while they touch or
 *   overlap). They are checked against the segments the JSONL events imply (`segmentsFromEvents`:
 *   each TURN/BC minus its SHORTPAUSEs); every disagreement is written to `notes`, the words win.
 * - Supervisions are the words grouped into IPUs (docs/events.md step 1: a channel's word segments merged
 *   across silences of at most 0.50 s, `buildIpus`), text = the IPU's words joined with
 *   `joinTranscript` (no spaces between Japanese words, one space between English words).
 * - Speakers are unknown in this format: `{id}:0` and `{id}:1`. In task (MT-QA) data channel 1 is the
 *   user and channel 0 the system (docs/dataset-format.md "audio/{id}.wav"); the loader does not rename them.
 * - Splits: every `*.jsonl` of the folder by default (sorted by name), or the ones asked for. A
 *   dialogue listed in several splits (e.g. `test` and `test_small`) is loaded once, from the first
 *   split in that order, and its notes name the others.
 */
import path from 'node:path';
import {
  AlignmentParseError,
  buildIpus,
  parseAlignment,
  parseEventsLine,
  segmentsFromEvents,
  segmentsFromWords,
} from '../pipeline/events/index.ts';
import type {
  AlignedWord,
  Channel,
  ChannelSegments,
  ReferenceRecording,
  ReferenceSupervision,
  SpeechSegment,
} from '../pipeline/model/types.ts';
import {
  compareSupervisions,
  formatCentiseconds,
  framesToCentiseconds,
  isDirectory,
  isFile,
  joinTranscript,
  listFiles,
  readTextFile,
  readWavHeader,
  REFERENCE_CHANNELS,
  ReferenceCorpusError,
} from './reference-recording.ts';

/** Options of {@link prepareM3Events}. */
export interface M3EventsOptions {
  /** Split names to read (`test` reads `test.jsonl`); default: every `*.jsonl` in the folder. */
  splits?: readonly string[];
}

/** Differences between the word-derived and the event-derived segments of one channel, as note lines. */
function describeDisagreement(
  channel: Channel,
  fromWords: readonly SpeechSegment[],
  fromEvents: readonly SpeechSegment[],
): string | undefined {
  const key = (segment: SpeechSegment): string => `${segment.start}-${segment.end}`;
  const wordKeys = new Set(fromWords.map(key));
  const eventKeys = new Set(fromEvents.map(key));
  const onlyWords = fromWords.filter((segment) => !eventKeys.has(key(segment)));
  const onlyEvents = fromEvents.filter((segment) => !wordKeys.has(key(segment)));
  if (onlyWords.length === 0 && onlyEvents.length === 0) return undefined;
  const show = (segments: readonly SpeechSegment[]): string =>
    segments
      .slice(0, 3)
      .map((segment) => `[${formatCentiseconds(segment.start)}, ${formatCentiseconds(segment.end)}]`)
      .join(', ') + (segments.length > 3 ? `, ... (${segments.length} in all)` : '');
  return (
    `channel ${channel}: words and events disagree (${fromWords.length} segments from words, ${fromEvents.length} from events; ` +
    `only in words: ${onlyWords.length === 0 ? 'none' : show(onlyWords)}; only in events: ${onlyEvents.length === 0 ? 'none' : show(onlyEvents)}); the words are used`
  );
}

/**
 * Supervisions of one dialogue: per channel, the word segments grouped into IPUs (`buildIpus`, 0.50 s
 * pause rule), each IPU's words (those starting inside it) joined with `joinTranscript`.
 *
 * @param words the dialogue's words, times in integer centiseconds.
 * @param segments `segmentsFromWords(words)`.
 * @param speakers speaker id of each channel.
 * @returns supervisions sorted by start, then channel.
 */
export function supervisionsFromWords(
  words: readonly AlignedWord[],
  segments: ChannelSegments,
  speakers: Record<Channel, string>,
): ReferenceSupervision[] {
  const supervisions: ReferenceSupervision[] = [];
  for (const channel of REFERENCE_CHANNELS) {
    const channelWords = words
      .filter((word) => word.channel === channel)
      .sort((a, b) => a.start - b.start || a.end - b.end);
    for (const ipu of buildIpus(segments[channel], undefined, channel)) {
      const inside = channelWords.filter((word) => word.start >= ipu.start && word.start < ipu.end);
      supervisions.push({
        channel,
        start: ipu.start,
        end: ipu.end,
        speaker: speakers[channel],
        text: joinTranscript(inside.map((word) => word.word)),
      });
    }
  }
  return supervisions.sort(compareSupervisions);
}

/** The splits to read: the asked ones, or every `*.jsonl` of the folder. */
async function splitFiles(folder: string, splits: readonly string[] | undefined): Promise<string[]> {
  if (splits !== undefined) return splits.map((split) => path.join(folder, `${split}.jsonl`));
  const files = await listFiles(folder, ['.jsonl']);
  if (files.length === 0) throw new ReferenceCorpusError(folder, {}, 'no {split}.jsonl file in the benchmark folder');
  return files;
}

/**
 * Loads one benchmark folder.
 *
 * @param folder a dataset folder holding `{split}.jsonl` and `txt_align/`.
 * @param options see {@link M3EventsOptions}.
 * @returns one recording per dialogue (`format: 'm3-events'`), in split order then line order.
 *   `durationCs` is the length of `audio/{id}.wav` when present (from its header), else the end of
 *   the last word or event.
 * @throws ReferenceCorpusError when the folder, a split file or a `txt_align/{id}.txt` file is missing,
 *   or an id is listed twice in one split; EventsLineParseError (file:line and field) for a malformed
 *   events line; AlignmentParseError (file, line, field) for a malformed word line;
 *   SegmentValidationError when the events cannot be turned into segments.
 */
export async function readM3EventsFolder(folder: string, options: M3EventsOptions = {}): Promise<ReferenceRecording[]> {
  if (!(await isDirectory(folder))) throw new ReferenceCorpusError(folder, {}, 'benchmark folder not found');
  const recordings = new Map<string, ReferenceRecording>();
  for (const file of await splitFiles(folder, options.splits)) {
    const split = path.basename(file, '.jsonl');
    const text = await readTextFile(file, 'events JSONL');
    const idsInSplit = new Set<string>();
    const lines = text.split('\n');
    for (let index = 0; index < lines.length; index += 1) {
      const line = (lines[index] ?? '').replace(/\r$/, '');
      if (line.trim() === '') continue;
      const source = `${file}:${index + 1}`;
      const { id, events } = parseEventsLine(line, source);
      if (idsInSplit.has(id))
        throw new ReferenceCorpusError(file, { line: index + 1 }, `dialogue id ${JSON.stringify(id)} is listed twice`);
      idsInSplit.add(id);
      const earlier = recordings.get(id);
      if (earlier !== undefined) {
        earlier.notes.push(`also listed in ${split}.jsonl (line ${index + 1}); loaded once`);
        continue;
      }
      const alignmentFile = path.join(folder, 'txt_align', `${id}.txt`);
      const words = parseAlignment(await readTextFile(alignmentFile, 'word alignment'), alignmentFile);
      if (words.length === 0) throw new AlignmentParseError(alignmentFile, 1, 'line', 'the file has no words');
      const segments = segmentsFromWords(words);
      const fromEvents = segmentsFromEvents(events);
      const notes: string[] = [`split ${split} (${path.basename(file)} line ${index + 1}); ${words.length} words`];
      for (const channel of REFERENCE_CHANNELS) {
        const disagreement = describeDisagreement(channel, segments[channel], fromEvents[channel]);
        if (disagreement !== undefined) notes.push(disagreement);
      }
      const channelSpeakers: Record<Channel, string> = { 0: `${id}:0`, 1: `${id}:1` };
      const supervisions = supervisionsFromWords(words, segments, channelSpeakers);
      notes.push(`${supervisions.length} supervisions = IPUs of the words (0.50 s pause rule)`);
      const lastTime = Math.max(
        ...words.map((word) => word.end),
        ...REFERENCE_CHANNELS.flatMap((channel) => events[channel].map((event) => Math.max(event.start, event.end))),
      );
      const recording: ReferenceRecording = {
        id,
        format: 'm3-events',
        sources: [file, alignmentFile],
        durationCs: lastTime,
        segments,
        channelSpeakers,
        supervisions,
        notes,
      };
      const audioFile = path.join(folder, 'audio', `${id}.wav`);
      const header = (await isFile(audioFile)) ? await readWavHeader(audioFile) : undefined;
      if (header !== undefined && header.channelCount === 2) {
        recording.durationCs = Math.max(lastTime, framesToCentiseconds(header.frameCount, header.sampleRate));
        recording.audio = REFERENCE_CHANNELS.map((channel) => ({ path: audioFile, channel }));
        recording.sources.push(audioFile);
      } else if (await isFile(audioFile)) {
        notes.push(`audio/${id}.wav is not a two-channel WAV file; audio not used`);
      } else {
        notes.push(`no audio/${id}.wav; duration is the end of the last word or event`);
      }
      recordings.set(id, recording);
    }
  }
  return [...recordings.values()];
}

/**
 * Loads benchmark folders (the registry entry point).
 *
 * @param paths dataset folders (`data/{lang}/{domain}/{dataset}/`), read in order.
 * @param options see {@link M3EventsOptions}.
 * @returns the recordings of every folder, in order.
 * @throws as {@link readM3EventsFolder}; ReferenceCorpusError when two folders hold the same dialogue id.
 */
export async function prepareM3Events(
  paths: readonly string[],
  options: M3EventsOptions = {},
): Promise<ReferenceRecording[]> {
  const all: ReferenceRecording[] = [];
  const seen = new Map<string, string>();
  for (const folder of paths) {
    for (const recording of await readM3EventsFolder(folder, options)) {
      const other = seen.get(recording.id);
      if (other !== undefined)
        throw new ReferenceCorpusError(folder, {}, `dialogue id ${JSON.stringify(recording.id)} is also in ${other}`);
      seen.set(recording.id, folder);
      all.push(recording);
    }
  }
  return all;
}
