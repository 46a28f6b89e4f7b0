/**
 * NXT (NITE XML Toolkit) timed units as `ReferenceRecording`s: word-level timings, one XML file per
 * speaker, as in the HCRC Map Task Corpus annotations (v2.1, `Data/timed-units/`):
 *
 *     <dialogue>.<agent>.timed-units.xml       e.g. q1ec1.g.timed-units.xml (instruction giver)
 *                                                     q1ec1.f.timed-units.xml (instruction follower)
 *     <nite:root xmlns:nite="http://nite.sourceforge.net/" id="tu.q1ec1.g">
 *       <tu id="q1ec1g.1" start="0.0000" end="0.3294" utt="1">okay</tu>
 *       <sil id="q1ec1g.6" start="1.3702" end="1.5777"/>
 *       <noi id="q1ec1g.16" start="3.9394" end="4.2885" type="nonvocal"/>
 *
 * `tu` is a timed unit (a word, sometimes a few words spoken as one: `do you`, `going to`), `sil` a
 * silence, `noi` a non-speech noise (`type`: inbreath, outbreath, breath, lipsmack, lowamp, nonvocal,
 * laugh, phongesture, cough, unintelligible). Times are seconds with 4 decimals, rounded once,
 * exactly on the written decimal, to integer centiseconds. The XML is read with fast-xml-parser
 * (validated first, so malformed XML is an error naming file, line and column; the file reader:
 * nxt-timed-units.ts, re-exported).
 *
 * Quirks of the real Map Task files, handled here and counted in each recording's `notes`:
 * - some `tu` elements have start = end (e.g. `i'll try` at 252.0066 s in q3ec8.g): elided words
 *   with no duration; no speech time, their text is kept in the supervision around them;
 * - `realisation="nnno"` gives the pronounced form of a word written `no`: the orthographic word
 *   (the element text) is used;
 * - letters are written quoted (`"c"`, `"u"-turn`) and truncated words end in `--` (`g--`): kept as
 *   written (they are speech);
 * - `utt` (utterance number) is missing on some `tu` elements; it is not used;
 * - `noi` is never speech unless its type is listed in `noiseTypesAsSpeech` (none by default;
 *   `laugh` or `unintelligible` are candidates); `sil` is never speech; a `tu` whose text is a
 *   non-speech token (word-timings.ts) is not speech either.
 *
 * Channels: agent `g` (instruction giver) on channel 0, `f` (follower) on channel 1 by default
 * (`channelAgents`). Speaker ids are `<dialogue>.<agent>` (the speaker codes of the Map Task
 * metadata are not in these files, so the same person in two dialogues has two ids). Audio: a file
 * `<dialogue>.wav` (two channels, in channel order) or `<dialogue>.<agent>.wav` (one per speaker)
 * beside the XML files (or in `audioDirectory`), when present.
 */
import path from 'node:path';
import type { Channel, ReferenceRecording } from '../pipeline/model/types.ts';
import { isDirectory, isFile, listFiles, REFERENCE_CHANNELS, ReferenceCorpusError } from './reference-recording.ts';
import { describeSkippedRecord } from './skipped-records.ts';
import { readNxtTimedUnits, type NxtTimedUnitsFile } from './nxt-timed-units.ts';

export {
  parseNxtTimedUnits,
  readNxtTimedUnits,
  type NxtTimedElement,
  type NxtTimedUnitsFile,
} from './nxt-timed-units.ts';
import {
  findRecordingAudio,
  recordingFromTimedTokens,
  speechTokenPredicate,
  type NonSpeechTokenOptions,
  type TimedToken,
} from './word-timings.ts';

/** Options of {@link prepareNxt}. */
export interface NxtOptions extends NonSpeechTokenOptions {
  /** Only these dialogues (file name before `.<agent>.timed-units.xml`); default: every pair found. */
  dialogues?: readonly string[];
  /** Agent letter on channel 0 and on channel 1; default `['g', 'f']` (Map Task giver, follower). */
  channelAgents?: readonly [string, string];
  /** `noi` types counted as speech (e.g. `laugh`); default none. */
  noiseTypesAsSpeech?: readonly string[];
  /** Look for the audio here instead of beside the XML files. */
  audioDirectory?: string;
  /** Stop at the first bad element (default true); false skips it into the recording's `skippedRecords` and a note. */
  strict?: boolean;
}

/** File name ending of NXT timed-unit files. */
export const NXT_TIMED_UNITS_SUFFIX = '.timed-units.xml';

const TIMED_UNITS_NAME = /^(.+)\.([^.]+)\.timed-units\.xml$/;

/** `q1ec1.g.timed-units.xml` -> `{ dialogue: 'q1ec1', agent: 'g' }`, or undefined. */
export function parseNxtFileName(file: string): { dialogue: string; agent: string } | undefined {
  const match = TIMED_UNITS_NAME.exec(path.basename(file));
  return match === null ? undefined : { dialogue: match[1] as string, agent: match[2] as string };
}

/**
 * Builds the recording of one dialogue from its two parsed files.
 *
 * @param dialogue dialogue id (recording id).
 * @param files the parsed files in channel order (channel 0 first).
 * @param speakers speaker id per channel.
 * @throws ReferenceCorpusError when a file has no timed unit at all.
 */
export function nxtToReferenceRecording(
  dialogue: string,
  files: readonly [NxtTimedUnitsFile, NxtTimedUnitsFile],
  speakers: Record<Channel, string>,
  options: NxtOptions = {},
  audio?: { path: string; channel: Channel }[],
): ReferenceRecording {
  const isSpeechWord = speechTokenPredicate(options.nonSpeechTokens);
  const speechNoise = new Set(options.noiseTypesAsSpeech ?? []);
  const tokens: TimedToken[] = [];
  const notes: string[] = [];
  let realisations = 0;
  let multiWord = 0;
  let multiWordExample = '';
  const noise = new Map<string, number>();
  for (const channel of REFERENCE_CHANNELS) {
    const parsed = files[channel];
    if (!parsed.elements.some((element) => element.kind === 'tu'))
      throw new ReferenceCorpusError(parsed.file, {}, 'no <tu> timed unit: the speaker says nothing');
    for (const element of parsed.elements) {
      if (element.kind === 'sil') {
        tokens.push({ channel, start: element.start, end: element.end, text: '<sil>', speech: false });
      } else if (element.kind === 'noi') {
        const type = element.noiseType === '' ? 'noi' : element.noiseType;
        noise.set(type, (noise.get(type) ?? 0) + 1);
        tokens.push({
          channel,
          start: element.start,
          end: element.end,
          text: `<noi:${type}>`,
          speech: speechNoise.has(element.noiseType),
        });
      } else {
        if (element.realisation !== undefined) realisations += 1;
        if (element.text.includes(' ')) {
          multiWord += 1;
          if (multiWordExample === '') multiWordExample = element.text;
        }
        tokens.push({
          channel,
          start: element.start,
          end: element.end,
          text: element.text,
          speech: isSpeechWord(element.text),
        });
      }
    }
    for (const [name, count] of parsed.skippedElements)
      notes.push(`${path.basename(parsed.file)}: ${count} <${name}> elements skipped (not tu, sil or noi)`);
  }
  notes.unshift(
    `channel 0 = ${speakers[0]} (${path.basename(files[0].file)}), channel 1 = ${speakers[1]} (${path.basename(files[1].file)})`,
  );
  if (noise.size > 0) {
    const kinds = [...noise.entries()]
      .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
      .map(([type, count]) => `${type} ${count}`);
    notes.push(
      `<noi> noises: ${kinds.join(', ')}; ${speechNoise.size === 0 ? 'none' : [...speechNoise].join(', ')} counted as speech`,
    );
  }
  if (realisations > 0)
    notes.push(`${realisations} timed units carry a realisation attribute (pronounced form): the written word is used`);
  if (multiWord > 0)
    notes.push(`${multiWord} timed units hold several words (e.g. ${JSON.stringify(multiWordExample)}), timed as one`);
  return recordingFromTimedTokens({
    id: dialogue,
    format: 'nxt',
    sources: [files[0].file, files[1].file],
    tokens,
    channelSpeakers: speakers,
    ...(audio === undefined ? {} : { audio }),
    notes,
  });
}

/** Audio beside the XML files: `<dialogue>.wav` or `<dialogue>_0.wav` + `_1.wav` (word-timings.ts `findRecordingAudio`), or `<dialogue>.<agent>.wav` per channel. */
async function findNxtAudio(
  folder: string,
  dialogue: string,
  agents: readonly [string, string],
): Promise<{ path: string; channel: Channel }[] | undefined> {
  const found = await findRecordingAudio(folder, dialogue);
  if (found !== undefined) return found.audio;
  const perSpeaker = agents.map((agent) => path.join(folder, `${dialogue}.${agent}.wav`));
  if ((await isFile(perSpeaker[0] as string)) && (await isFile(perSpeaker[1] as string))) {
    return REFERENCE_CHANNELS.map((channel) => ({ path: perSpeaker[channel] as string, channel }));
  }
  return undefined;
}

/**
 * Loads NXT timed-units dialogues.
 *
 * @param paths folders holding `*.timed-units.xml` files, or timed-units files (one file names its
 *   dialogue; the other agent's file is taken from the same folder).
 * @returns one recording per dialogue, sorted by dialogue id; `format: 'nxt'`, supervisions with
 *   word timings, audio when found beside the files.
 * @throws ReferenceCorpusError naming the file (and line) when a path is missing, a file name is not
 *   `<dialogue>.<agent>.timed-units.xml`, a dialogue lacks one of the two agents' files, a dialogue
 *   id appears in two folders, or a file is malformed ({@link parseNxtTimedUnits}).
 */
export async function prepareNxt(paths: readonly string[], options: NxtOptions = {}): Promise<ReferenceRecording[]> {
  const agents = options.channelAgents ?? (['g', 'f'] as const);
  if (agents[0] === agents[1]) throw new RangeError(`nxt: channelAgents must differ, got ${agents[0]} twice`);
  const dialogues = new Map<string, string>(); // dialogue -> folder
  for (const given of paths) {
    const addFile = (file: string) => {
      const name = parseNxtFileName(file);
      if (name === undefined)
        throw new ReferenceCorpusError(
          file,
          {},
          `not an NXT timed-units file name (<dialogue>.<agent>${NXT_TIMED_UNITS_SUFFIX})`,
        );
      const folder = path.dirname(file);
      const earlier = dialogues.get(name.dialogue);
      if (earlier !== undefined && path.resolve(earlier) !== path.resolve(folder)) {
        throw new ReferenceCorpusError(file, {}, `dialogue ${name.dialogue} is also in ${earlier}`);
      }
      dialogues.set(name.dialogue, folder);
    };
    if (await isDirectory(given)) {
      const files = await listFiles(given, [NXT_TIMED_UNITS_SUFFIX]);
      if (files.length === 0)
        throw new ReferenceCorpusError(given, {}, `no *${NXT_TIMED_UNITS_SUFFIX} files in the folder`);
      files.forEach(addFile);
    } else if (await isFile(given)) addFile(given);
    else throw new ReferenceCorpusError(given, {}, 'no such file or folder');
  }
  const wanted = options.dialogues === undefined ? undefined : new Set(options.dialogues);
  if (wanted !== undefined) {
    for (const dialogue of wanted)
      if (!dialogues.has(dialogue))
        throw new ReferenceCorpusError(paths.join(', '), {}, `dialogue ${dialogue} not found`);
  }
  const ids = [...dialogues.keys()]
    .filter((dialogue) => wanted === undefined || wanted.has(dialogue))
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const recordings: ReferenceRecording[] = [];
  for (const dialogue of ids) {
    const folder = dialogues.get(dialogue) as string;
    const files = agents.map((agent) => path.join(folder, `${dialogue}.${agent}${NXT_TIMED_UNITS_SUFFIX}`));
    for (const file of files)
      if (!(await isFile(file)))
        throw new ReferenceCorpusError(
          file,
          {},
          `missing: dialogue ${dialogue} needs the timed units of agents ${agents.join(' and ')}`,
        );
    const strict = { strict: options.strict ?? true };
    const parsed = [
      await readNxtTimedUnits(files[0] as string, strict),
      await readNxtTimedUnits(files[1] as string, strict),
    ] as const;
    const speakers = { 0: `${dialogue}.${agents[0]}`, 1: `${dialogue}.${agents[1]}` };
    recordings.push(
      nxtToReferenceRecording(
        dialogue,
        parsed,
        speakers,
        options,
        await findNxtAudio(options.audioDirectory ?? folder, dialogue, agents),
      ),
    );
    const skipped = parsed.flatMap((file) => file.skippedRecords ?? []);
    const recording = recordings.at(-1) as ReferenceRecording;
    if (skipped.length > 0) {
      recording.skippedRecords = skipped.map(describeSkippedRecord);
      recording.notes.push(`skipped ${skipped.length} malformed NXT elements (not strict)`);
    }
  }
  return recordings;
}
