/**
 * A written dataset folder (stages/render-dataset.ts layout), read once into the shape every export
 * format works from: per dialogue its audio file, events, words, utterances (questions, answers and
 * the placed backchannels) with their channel, role and text, speakers, and its split.
 *
 * Times are integer centiseconds, as in the events and word files; the channel of each role comes from
 * `manifest.json` (`channels: {user, system}`; default 1 and 0, m3-format.md).
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { parseAlignment } from '../events/index.ts';
import type { AlignedWord, Centiseconds, Channel, ChannelEvents, Language, SpeakerRole, UtteranceKind } from '../model/types.ts';
import { DatasetReadError, readDatasetFolder, splitJsonlLines } from '../quality/dataset-files.ts';

/** One utterance of a dialogue: a question, an answer or a placed backchannel. */
export interface ExportUtterance {
  channel: Channel;
  role: SpeakerRole;
  kind: UtteranceKind;
  /** Start and end of the placed clip, centiseconds. */
  start: Centiseconds;
  end: Centiseconds;
  /** The text that was synthesized (what the audio says; padding such as "Well, ..." included). */
  text: string;
  /** TopiOCQA turn number; null for backchannels. */
  turnNumber: number | null;
}

/** The benchmark split a dialogue belongs to (split.json, `test.jsonl` / `dev.jsonl`). */
export type ExportSplit = 'test' | 'dev';

/** One dialogue, read. */
export interface ExportDialogue {
  id: string;
  /** Absolute path of `audio/{id}.wav`. */
  audioFile: string;
  durationSeconds: number;
  /** The dialogue's `all.jsonl` line exactly as written (with its `\n`). */
  eventsLine: string;
  events: ChannelEvents;
  /** Words of both channels in `txt_align` order, centiseconds. */
  words: AlignedWord[];
  /** Utterances sorted by (start, channel, end). */
  utterances: ExportUtterance[];
  speakers: Record<SpeakerRole, { speakerId: string; channel: Channel }>;
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
  /** Sample rate of the dataset's WAV files, Hz (manifest.json `sampleRate`). */
  sampleRate: number;
  channels: Record<SpeakerRole, Channel>;
  /** True when the dataset has `test.jsonl` and `dev.jsonl`. */
  hasSplits: boolean;
  /** In `all.jsonl` order (sorted by id). */
  dialogues: ExportDialogue[];
}

const channelSchema = z.union([z.literal(0), z.literal(1)]);
const manifestSchema = z.object({
  sampleRate: z.number().int().positive(),
  channels: z.object({ user: channelSchema, system: channelSchema }).optional(),
});
const metadataSchema = z.object({
  speakers: z.object({
    user: z.object({ speakerId: z.string().min(1) }),
    system: z.object({ speakerId: z.string().min(1) }),
  }),
  utterances: z.array(
    z.object({
      turnNumber: z.number().int(),
      role: z.enum(['user', 'system']),
      kind: z.enum(['question', 'answer']),
      channel: channelSchema,
      start: z.number().nonnegative(),
      end: z.number().nonnegative(),
      text: z.object({ synthesized: z.string() }),
    }),
  ),
  backchannels: z
    .array(z.object({ channel: channelSchema, start: z.number().nonnegative(), end: z.number().nonnegative(), text: z.string() }))
    .default([]),
});

/** Seconds with at most two decimals (as written in the metadata) -> integer centiseconds. */
function toCentiseconds(seconds: number): Centiseconds {
  return Math.round(seconds * 100);
}

async function readText(file: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    throw new DatasetReadError(`${file}: cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
}

/** Ids listed in a split file (`test.jsonl`, ...), or null when the file does not exist. */
async function splitIds(file: string): Promise<Set<string> | null> {
  const text = await readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return null;
    throw new DatasetReadError(`${file}: cannot be read (${error.code ?? error.message})`);
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
      if (typeof id !== 'string') throw new DatasetReadError(`${file}:${index + 1}: not a JSON line with a string "id"`);
      return id;
    }),
  );
}

/**
 * Reads a dataset folder `data/{lang}/{domain}/{dataset}` for export.
 * @throws DatasetReadError naming the file (and line or field) when `manifest.json`, `all.jsonl`, a
 *   metadata file or a `txt_align` file is missing or malformed, or a split file lists an unknown id.
 */
export async function readExportDataset(directory: string): Promise<ExportDataset> {
  const folder = await readDatasetFolder(directory);
  const manifestFile = path.join(folder.directory, 'manifest.json');
  const manifestResult = manifestSchema.safeParse(JSON.parse(await readText(manifestFile)));
  if (!manifestResult.success) {
    const issue = manifestResult.error.issues[0];
    throw new DatasetReadError(`${manifestFile}: ${issue?.path.join('.') || '(top level)'}: ${issue?.message ?? 'invalid'}`);
  }
  const manifest = manifestResult.data;
  const channels: Record<SpeakerRole, Channel> = manifest.channels ?? { user: 1, system: 0 };
  if (channels.user === channels.system) throw new DatasetReadError(`${manifestFile}: channels: user and system share channel ${channels.user}`);

  const [test, dev, testSmall] = await Promise.all(
    ['test.jsonl', 'dev.jsonl', 'test_small.jsonl'].map((name) => splitIds(path.join(folder.directory, name))),
  );
  const known = new Set(folder.dialogues.map((dialogue) => dialogue.id));
  for (const [name, ids] of [['test.jsonl', test], ['dev.jsonl', dev], ['test_small.jsonl', testSmall]] as const) {
    for (const id of ids ?? []) if (!known.has(id)) throw new DatasetReadError(`${path.join(folder.directory, name)}: lists ${id}, which is not in all.jsonl`);
  }

  const dialogues: ExportDialogue[] = [];
  for (const dialogue of folder.dialogues) {
    const metadataFile = path.join(folder.directory, 'metadata', `${dialogue.id}.json`);
    const parsed = metadataSchema.safeParse(JSON.parse(await readText(metadataFile)));
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new DatasetReadError(`${metadataFile}: ${issue?.path.join('.') || '(top level)'}: ${issue?.message ?? 'invalid'}`);
    }
    const metadata = parsed.data;
    const alignmentFile = path.join(folder.directory, 'txt_align', `${dialogue.id}.txt`);
    const words = parseAlignment(await readText(alignmentFile), alignmentFile);
    const utterances: ExportUtterance[] = [
      ...metadata.utterances.map((utterance) => ({
        channel: utterance.channel,
        role: utterance.role,
        kind: utterance.kind,
        start: toCentiseconds(utterance.start),
        end: toCentiseconds(utterance.end),
        text: utterance.text.synthesized,
        turnNumber: utterance.turnNumber,
      })),
      ...metadata.backchannels.map((backchannel) => ({
        channel: backchannel.channel,
        role: (backchannel.channel === channels.user ? 'user' : 'system') as SpeakerRole,
        kind: 'backchannel' as const,
        start: toCentiseconds(backchannel.start),
        end: toCentiseconds(backchannel.end),
        text: backchannel.text,
        turnNumber: null,
      })),
    ].sort((a, b) => a.start - b.start || a.channel - b.channel || a.end - b.end);
    dialogues.push({
      id: dialogue.id,
      audioFile: dialogue.audioFile,
      durationSeconds: dialogue.metadata.durationSeconds,
      eventsLine: dialogue.line,
      events: dialogue.events,
      words,
      utterances,
      speakers: {
        user: { speakerId: metadata.speakers.user.speakerId, channel: channels.user },
        system: { speakerId: metadata.speakers.system.speakerId, channel: channels.system },
      },
      split: test?.has(dialogue.id) ? 'test' : dev?.has(dialogue.id) ? 'dev' : null,
      testSmall: testSmall?.has(dialogue.id) ?? false,
    });
  }
  return {
    directory: folder.directory,
    language: folder.language,
    dataset: folder.dataset,
    domain: folder.domain,
    sampleRate: manifest.sampleRate,
    channels,
    hasSplits: test !== null && dev !== null,
    dialogues,
  };
}

/** The role speaking on `channel`. */
export function roleOfChannel(dataset: Pick<ExportDataset, 'channels'>, channel: Channel): SpeakerRole {
  return dataset.channels.user === channel ? 'user' : 'system';
}
