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
 * (validated first, so malformed XML is an error naming file, line and column).
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
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import type { Centiseconds, Channel, ReferenceRecording } from '../pipeline/model/types.ts';
import {
  isDirectory,
  isFile,
  listFiles,
  parseSecondsToCentiseconds,
  readTextFile,
  REFERENCE_CHANNELS,
  ReferenceCorpusError,
} from './reference-recording.ts';
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
}

/** File name ending of NXT timed-unit files. */
export const NXT_TIMED_UNITS_SUFFIX = '.timed-units.xml';

const TIMED_UNITS_NAME = /^(.+)\.([^.]+)\.timed-units\.xml$/;

/** One element of a timed-units file. */
export interface NxtTimedElement {
  /** `tu`, `sil` or `noi`. */
  kind: 'tu' | 'sil' | 'noi';
  id: string;
  start: Centiseconds;
  end: Centiseconds;
  /** Element text (`tu`), trimmed, entities decoded; empty for `sil`/`noi`. */
  text: string;
  /** `noi` type attribute; empty when absent. */
  noiseType: string;
  /** `realisation` attribute of a `tu` (the pronounced form), when present. */
  realisation?: string;
  /** 1-based line of the element's start tag. */
  line: number;
}

/** The parsed content of one timed-units file. */
export interface NxtTimedUnitsFile {
  file: string;
  /** Elements in file order. */
  elements: NxtTimedElement[];
  /** Elements other than `tu`/`sil`/`noi` that were skipped, by name. */
  skippedElements: Map<string, number>;
}

/** 1-based line number of a character offset, from the offsets where lines start. */
function lineAt(lineStarts: readonly number[], offset: number): number {
  let low = 0;
  let high = lineStarts.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if ((lineStarts[middle] as number) <= offset) low = middle + 1;
    else high = middle;
  }
  return low;
}

type OrderedNode = Record<string, unknown> & { ':@'?: Record<string, string> };

/**
 * Parses the text of one NXT timed-units file.
 *
 * @param text file content (UTF-8, byte-order mark already removed).
 * @param file path for messages.
 * @returns the `tu`/`sil`/`noi` elements (times in integer centiseconds) and counts of other elements.
 * @throws ReferenceCorpusError naming the file and line when the XML is malformed, the root element
 *   is missing, or an element lacks `start`/`end`, has a time that is not a non-negative decimal, or
 *   ends before it starts.
 */
export function parseNxtTimedUnits(text: string, file: string): NxtTimedUnitsFile {
  const validation = XMLValidator.validate(text);
  if (validation !== true) {
    throw new ReferenceCorpusError(
      file,
      { line: validation.err.line },
      `malformed XML (column ${validation.err.col}): ${validation.err.msg}`,
    );
  }
  const parser = new XMLParser({
    preserveOrder: true,
    ignoreAttributes: false,
    attributeNamePrefix: '',
    parseAttributeValue: false,
    parseTagValue: false,
    trimValues: false,
    captureMetaData: true,
  });
  const metadata = XMLParser.getMetaDataSymbol() as unknown as symbol;
  const document = parser.parse(text) as OrderedNode[];
  const lineStarts = [0];
  for (let index = text.indexOf('\n'); index !== -1; index = text.indexOf('\n', index + 1)) lineStarts.push(index + 1);
  const lineOf = (node: OrderedNode): number => {
    const start = (node[metadata as unknown as string] as { startIndex?: number } | undefined)?.startIndex;
    return start === undefined ? 1 : lineAt(lineStarts, start);
  };
  const rootNode = document.find((node) =>
    Object.keys(node).some((key) => key !== ':@' && !key.startsWith('?') && key !== '#text' && key !== '#comment'),
  );
  if (rootNode === undefined) throw new ReferenceCorpusError(file, {}, 'no root element');
  const rootName = Object.keys(rootNode).find((key) => key !== ':@') as string;
  const children = rootNode[rootName] as OrderedNode[];
  const elements: NxtTimedElement[] = [];
  const skippedElements = new Map<string, number>();
  for (const child of children) {
    const name = Object.keys(child).find((key) => key !== ':@') as string;
    if (name === '#text' || name === '#comment') continue;
    if (name !== 'tu' && name !== 'sil' && name !== 'noi') {
      skippedElements.set(name, (skippedElements.get(name) ?? 0) + 1);
      continue;
    }
    const line = lineOf(child);
    const attributes = child[':@'] ?? {};
    const time = (attribute: 'start' | 'end'): Centiseconds => {
      const value = attributes[attribute];
      if (value === undefined)
        throw new ReferenceCorpusError(file, { line, column: attribute }, `<${name}> has no ${attribute} attribute`);
      const centiseconds = parseSecondsToCentiseconds(value);
      if (centiseconds === undefined) {
        throw new ReferenceCorpusError(
          file,
          { line, column: attribute },
          `<${name}> ${attribute}=${JSON.stringify(value)} is not a non-negative decimal number of seconds`,
        );
      }
      return centiseconds;
    };
    const start = time('start');
    const end = time('end');
    if (end < start) {
      throw new ReferenceCorpusError(
        file,
        { line, column: 'end' },
        `<${name}> ends (${attributes.end}) before it starts (${attributes.start})`,
      );
    }
    const content = (child[name] as OrderedNode[])
      .map((part) => (typeof part['#text'] === 'string' ? part['#text'] : ''))
      .join('');
    elements.push({
      kind: name,
      id: attributes.id ?? '',
      start,
      end,
      text: name === 'tu' ? content.replace(/\s+/g, ' ').trim() : '',
      noiseType: attributes.type ?? '',
      ...(attributes.realisation === undefined ? {} : { realisation: attributes.realisation }),
      line,
    });
  }
  return { file, elements, skippedElements };
}

/** Reads and parses one timed-units file ({@link parseNxtTimedUnits}). */
export async function readNxtTimedUnits(file: string): Promise<NxtTimedUnitsFile> {
  return parseNxtTimedUnits(await readTextFile(file, 'NXT timed-units'), file);
}

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
    const parsed = [await readNxtTimedUnits(files[0] as string), await readNxtTimedUnits(files[1] as string)] as const;
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
  }
  return recordings;
}
