/**
 * A written dataset folder (stages/render-dataset.ts layout, MT-QA builds and `duplexsynth chat`
 * alike), read once into the shape every export format works from: per dialogue its audio file,
 * events, words, utterances with their channel, role and text, the speaker of each channel, and its
 * split.
 *
 * Times are integer centiseconds, as in the events and word files. The role of each channel: for a
 * dataset whose `manifest.json` maps `channels: {user, system}` (MT-QA builds; default user 1, system 0,
 * docs/dataset-format.md "audio/{id}.wav") `user` and `system`; otherwise (chat: two real speakers)
 * `channel0` and `channel1`.
 */
import { existsSync } from 'node:fs';
import { readInputText } from '../storage/read-input-file.ts';
import path from 'node:path';
import {
  exportManifestSchema as manifestSchema,
  exportMetadataSchema as metadataSchema,
} from './export-dataset-schemas.ts';
import { parseAlignment } from '../events/index.ts';
import type {
  AlignedWord,
  Centiseconds,
  Channel,
  ChannelEvents,
  Language,
  SpeakerRole,
  UtteranceKind,
} from '../model/types.ts';
import {
  DatasetReadError,
  readDatasetFolder,
  splitJsonlLines,
  type DatasetDialogue,
  type DatasetFolder,
} from '../quality/dataset-files.ts';
import { describeIssues } from '../model/validation.ts';
import { describeFileSystemError } from '../storage/file-system-errors.ts';
import { containedPath } from '../storage/contained-path.ts';

/** One utterance of a dialogue: a question, an answer or a placed backchannel (chat: a turn or a backchannel). */
export interface ExportUtterance {
  channel: Channel;
  /** The channel's role (`user`, `system`, `channel0`, `channel1`). */
  role: string;
  /** `question`, `answer`, `backchannel` (MT-QA); `turn`, `backchannel` (chat). */
  kind: UtteranceKind | 'turn';
  /** Start and end of the placed clip, centiseconds. */
  start: Centiseconds;
  end: Centiseconds;
  /**
   * What the audio says: the synthesized text (padding such as "Well, ..." included), for an utterance
   * cut off (a barge-in variant's answer) only the words spoken before the cut; or a recording's transcript.
   */
  text: string;
  /** Only for an utterance cut off before its end: the text it was to say and the planned words it did not say. */
  cutOff?: { plannedText: string; unspokenWords: string[] };
  /** TopiOCQA turn number; null for backchannels. */
  turnNumber: number | null;
}

/** The benchmark split a dialogue belongs to (`test.jsonl`; `dev.jsonl`, or `test_other.jsonl` when there is no dev alias). */
export type ExportSplit = 'test' | 'dev';

/** One dialogue, read. */
export interface ExportDialogue {
  id: string;
  /** Absolute path of `audio/{id}.wav` (the benchmark's file, at the dataset's `sampleRate`). */
  audioFile: string;
  /** Absolute path of the full-band master `audio_fullband/{id}.wav` (the TTS engine's rate), null when the dataset has none for it. */
  fullBandAudioFile: string | null;
  durationSeconds: number;
  /** The dialogue's `all.jsonl` line exactly as written (with its `\n`). */
  eventsLine: string;
  events: ChannelEvents;
  /** Words of both channels in `txt_align` order, centiseconds. */
  words: AlignedWord[];
  /** Utterances sorted by (start, channel, end). */
  utterances: ExportUtterance[];
  /** Speaker id of each channel. */
  speakers: Record<Channel, string>;
  /** null when the dataset has no split (built without quality scoring) or the dialogue is in neither part. */
  split: ExportSplit | null;
  /** Listed in `test_small.jsonl`. */
  testSmall: boolean;
}

/** A dataset folder, read for export. */
export interface ExportDataset {
  directory: string;
  language: Language;
  dataset: string;
  domain: string;
  /** Sample rate of the dataset's WAV files, Hz (manifest.json `sampleRate`, or its one `sampleRates` entry); null when they differ or it is not recorded. */
  sampleRate: number | null;
  /** The full-band masters (manifest.json `fullBand`): their folder and rates, Hz; null when the dataset has none. */
  fullBand: { directory: string; sampleRates: number[] } | null;
  /** The MT-QA channel of each role, when the manifest maps them (null for chat data). */
  channels: Record<SpeakerRole, Channel> | null;
  /** The role of each channel (module comment). */
  roles: Record<Channel, string>;
  /** True when the dataset has `test.jsonl` and `dev.jsonl` or `test_other.jsonl`. */
  hasSplits: boolean;
  /** In `all.jsonl` order (sorted by id). */
  dialogues: ExportDialogue[];
}

/** `JSON.parse` of a file's text. @throws DatasetReadError naming the file when it is not JSON */
function parseJson(text: string, file: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new DatasetReadError(`${file}: not valid JSON (${(error as Error).message})`);
  }
}

/** Seconds with at most two decimals (as written in the metadata) -> integer centiseconds. */
function toCentiseconds(seconds: number): Centiseconds {
  return Math.round(seconds * 100);
}

async function readText(file: string): Promise<string> {
  try {
    return await readInputText(file);
  } catch (error) {
    throw new DatasetReadError(describeFileSystemError(error, file, 'cannot be read'));
  }
}

/** Ids listed in a split file (`test.jsonl`, ...), or null when the file does not exist. */
async function splitIds(file: string): Promise<Set<string> | null> {
  const text = await readInputText(file).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return null;
    throw new DatasetReadError(describeFileSystemError(error, file, 'cannot be read'));
  });
  if (text === null) return null;
  return new Set(
    splitJsonlLines(text).map((line, index) => {
      const id = (() => {
        try {
          return (JSON.parse(line) as { id?: unknown }).id;
        } catch {
          return undefined;
        }
      })();
      if (typeof id !== 'string')
        throw new DatasetReadError(`${file}:${index + 1}: not a JSON line with a string "id"`);
      return id;
    }),
  );
}

/**
 * Reads a dataset folder `data/{lang}/{domain}/{dataset}` for export.
 * @param directory the folder, or the folder as `readDatasetFolder` read it (not read again)
 * @throws DatasetReadError naming the file (and line or field) when `manifest.json`, `all.jsonl`, a
 *   metadata file or a `txt_align` file is missing or malformed, or a split file lists an unknown id.
 */
export async function readExportDataset(directory: string | DatasetFolder): Promise<ExportDataset> {
  const folder = typeof directory === 'string' ? await readDatasetFolder(directory) : directory;
  const manifestFile = path.join(folder.directory, 'manifest.json');
  const manifestResult = manifestSchema.safeParse(JSON.parse(await readText(manifestFile)));
  if (!manifestResult.success) {
    throw new DatasetReadError(`${manifestFile}: ${describeIssues(manifestResult.error.issues)}`);
  }
  const manifest = manifestResult.data;
  // MT-QA builds record the mapping; a task dataset without one has the default
  // (docs/dataset-format.md "audio/{id}.wav")
  const channels: Record<SpeakerRole, Channel> | null =
    manifest.channels ?? (folder.domain === 'task' ? { user: 1, system: 0 } : null);
  if (channels !== null && channels.user === channels.system)
    throw new DatasetReadError(`${manifestFile}: channels: user and system share channel ${channels.user}`);
  const roles = channelRoles(channels);
  const sampleRates = manifest.sampleRate !== undefined ? [manifest.sampleRate] : (manifest.sampleRates ?? []);

  // the rest of a split is `test_other.jsonl` (a split name the benchmark knows), also written as `dev.jsonl`
  const [test, devFile, testOther, testSmall] = await Promise.all(
    ['test.jsonl', 'dev.jsonl', 'test_other.jsonl', 'test_small.jsonl'].map((name) =>
      splitIds(path.join(folder.directory, name)),
    ),
  );
  const dev = devFile ?? testOther;
  const known = new Set(folder.dialogues.map((dialogue) => dialogue.id));
  for (const [name, ids] of [
    ['test.jsonl', test],
    ['dev.jsonl', devFile],
    ['test_other.jsonl', testOther],
    ['test_small.jsonl', testSmall],
  ] as const) {
    for (const id of ids ?? [])
      if (!known.has(id))
        throw new DatasetReadError(`${path.join(folder.directory, name)}: lists ${id}, which is not in all.jsonl`);
  }

  const context: ExportDialogueContext = {
    directory: folder.directory,
    channels,
    roles,
    // listed in the manifest (a dataset written by duplexsynth lists every file), else present
    fullBandDirectory: manifest.fullBand?.directory ?? null,
    hasFullBandFile: (relative) =>
      manifest.files ? manifest.files[relative] !== undefined : existsSync(path.join(folder.directory, relative)),
    split: (id) => (test?.has(id) ? 'test' : dev?.has(id) ? 'dev' : null),
    testSmall: (id) => testSmall?.has(id) ?? false,
  };
  const dialogues: ExportDialogue[] = [];
  const jsonlFile = path.join(folder.directory, 'all.jsonl');
  for (const dialogue of folder.dialogues) {
    const name = { value: dialogue.id, file: jsonlFile, field: 'id' };
    const metadataFile = containedPath(path.join(folder.directory, 'metadata'), `${dialogue.id}.json`, name);
    const alignmentFile = containedPath(path.join(folder.directory, 'txt_align'), `${dialogue.id}.txt`, name);
    // the metadata as readDatasetFolder parsed it, else (a folder made in memory) read from its file
    const metadataSource =
      dialogue.metadataJson !== undefined
        ? { json: dialogue.metadataJson, file: metadataFile }
        : { text: await readText(metadataFile), file: metadataFile };
    dialogues.push(
      exportDialogue(context, dialogue, metadataSource, { text: await readText(alignmentFile), file: alignmentFile }),
    );
  }
  return {
    directory: folder.directory,
    language: folder.language,
    dataset: folder.dataset,
    domain: folder.domain,
    sampleRate: sampleRates.length === 1 ? sampleRates[0]! : null,
    fullBand: manifest.fullBand
      ? { directory: manifest.fullBand.directory, sampleRates: manifest.fullBand.sampleRates }
      : null,
    channels,
    roles,
    hasSplits: test !== null && dev !== null,
    dialogues,
  };
}

/** What {@link exportDialogue} takes from the dataset a dialogue belongs to. */
export interface ExportDialogueContext {
  /** The dataset folder (where the dialogue's files are named, whether or not they are there yet). */
  directory: string;
  channels: Record<SpeakerRole, Channel> | null;
  roles: Record<Channel, string>;
  /** The full-band masters' folder (manifest.json `fullBand.directory`), null when the dataset has none. */
  fullBandDirectory: string | null;
  /** Whether the dataset holds the full-band file at this path relative to its folder. */
  hasFullBandFile: (relative: string) => boolean;
  split: (id: string) => ExportSplit | null;
  testSmall: (id: string) => boolean;
}

/**
 * One dialogue for export, from its line of `all.jsonl` and metadata (as readDatasetFolder reads them)
 * and the text of its metadata and `txt_align` files: what {@link readExportDataset} does per dialogue,
 * without reading (a build calls it with the texts it has just written).
 * @param metadataSource the text of `metadata/{id}.json`, or its value as `JSON.parse` gave it (`json`),
 *   and the path named in errors
 * @param alignment the text of `txt_align/{id}.txt` and the path named in errors
 * @throws DatasetReadError naming the file and field when the metadata does not fit, lacks a channel's
 *   speaker, or the alignment does not parse
 */
export function exportDialogue(
  context: ExportDialogueContext,
  dialogue: Pick<DatasetDialogue, 'id' | 'line' | 'events' | 'audioFile'> & {
    metadata: Pick<DatasetDialogue['metadata'], 'durationSeconds'>;
  },
  metadataSource: { text: string; file: string } | { json: unknown; file: string },
  alignment: { text: string; file: string },
): ExportDialogue {
  const { channels, roles } = context;
  const metadataFile = metadataSource.file;
  const parsed = metadataSchema.safeParse(
    'json' in metadataSource ? metadataSource.json : parseJson(metadataSource.text, metadataFile),
  );
  if (!parsed.success) {
    throw new DatasetReadError(`${metadataFile}: ${describeIssues(parsed.error.issues)}`);
  }
  const metadata = parsed.data;
  const speakers: Partial<Record<Channel, string>> = {};
  for (const [key, speaker] of Object.entries(metadata.speakers)) {
    const channel =
      speaker.channel ??
      (key === 'user'
        ? channels?.user
        : key === 'system'
          ? channels?.system
          : key === 'channel0'
            ? 0
            : key === 'channel1'
              ? 1
              : undefined);
    if (channel !== undefined) speakers[channel] = speaker.speakerId;
  }
  if (speakers[0] === undefined || speakers[1] === undefined)
    throw new DatasetReadError(`${metadataFile}: speakers: need the speaker of channel 0 and of channel 1`);
  const words = parseAlignment(alignment.text, alignment.file);
  const utterances: ExportUtterance[] = [
    ...metadata.utterances.map((utterance) => ({
      channel: utterance.channel,
      role: roles[utterance.channel],
      kind: utterance.kind,
      start: toCentiseconds(utterance.start),
      end: toCentiseconds(utterance.end),
      // metadata of earlier versions has no transcript (and no cut-off answers with the whole text in it)
      text:
        utterance.text.transcript ??
        utterance.text.synthesized ??
        utterance.text.final ??
        utterance.text.spoken ??
        utterance.text.source ??
        '',
      turnNumber: utterance.turnNumber ?? null,
      ...(utterance.cutOff
        ? { cutOff: { plannedText: utterance.cutOff.plannedText, unspokenWords: utterance.cutOff.unspokenWords } }
        : {}),
    })),
    ...metadata.backchannels.map((backchannel) => ({
      channel: backchannel.channel,
      role: roles[backchannel.channel],
      kind: 'backchannel' as const,
      start: toCentiseconds(backchannel.start),
      end: toCentiseconds(backchannel.end),
      text: backchannel.text,
      turnNumber: null,
    })),
  ].sort((a, b) => a.start - b.start || a.channel - b.channel || a.end - b.end);
  const fullBandRelative =
    context.fullBandDirectory !== null ? `${context.fullBandDirectory}/${dialogue.id}.wav` : null;
  return {
    id: dialogue.id,
    audioFile: dialogue.audioFile,
    fullBandAudioFile:
      fullBandRelative !== null && context.hasFullBandFile(fullBandRelative)
        ? containedPath(context.directory, fullBandRelative, {
            value: dialogue.id,
            file: metadataFile,
            field: 'id',
          })
        : null,
    durationSeconds: dialogue.metadata.durationSeconds,
    eventsLine: dialogue.line,
    events: dialogue.events,
    words,
    utterances,
    speakers: speakers as Record<Channel, string>,
    split: context.split(dialogue.id),
    testSmall: context.testSmall(dialogue.id),
  };
}

/** The role of each channel (module comment): `user` and `system` where the dataset maps them, else `channel0` and `channel1`. */
export function channelRoles(channels: Record<SpeakerRole, Channel> | null): Record<Channel, string> {
  return channels === null
    ? { 0: 'channel0', 1: 'channel1' }
    : ({ [channels.user]: 'user', [channels.system]: 'system' } as Record<Channel, string>);
}

/**
 * The "main" channel of a dataset for tools that train one side (moshi-finetune's `SPEAKER_MAIN`, the
 * left channel): the system's for MT-QA, channel 0 for chat.
 */
export function mainChannel(dataset: Pick<ExportDataset, 'channels'>): Channel {
  return dataset.channels?.system ?? 0;
}

/** The channels in display order: the user first for MT-QA (the questioner speaks first), else 0, 1. */
export function channelOrder(dataset: Pick<ExportDataset, 'channels'>): [Channel, Channel] {
  return dataset.channels === null ? [0, 1] : [dataset.channels.user, dataset.channels.system];
}
