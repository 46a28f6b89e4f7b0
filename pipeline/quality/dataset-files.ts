/**
 * Reading a written dataset folder (stages/render-dataset.ts layout) for the quality and split
 * stages: `manifest.json`, `all.jsonl` (lines kept byte for byte), `metadata/{id}.json`,
 * `summary.json` (failed, i.e. quarantined, dialogues) and `audio/{id}.wav` paths.
 */
import { LANGUAGE_CODE_PATTERN } from '../model/language-code.ts';
import { InputFileError, readInputText } from '../storage/read-input-file.ts';
import { describeIssues } from '../model/validation.ts';
import path from 'node:path';
import { parseEventsLine } from '../events/index.ts';
import type { ChannelEvents, Language } from '../model/types.ts';
import { dialogueMetadataSchema, type DialogueMetadata } from '../model/dialogue-metadata.ts';
import { datasetManifestSchema } from '../model/dataset-manifest.ts';
import { summaryFailuresSchema } from '../model/dataset-summary.ts';
import { readRecord } from '../storage/json-records.ts';
import { describeFileSystemError } from '../storage/file-system-errors.ts';
import { containedPath } from '../storage/contained-path.ts';

/** A dataset folder could not be read: a file is missing or malformed (named in the message). */
export class DatasetReadError extends Error {
  override readonly name = 'DatasetReadError';
}

/** The fields of `metadata/{id}.json` the quality stages use (every dataset's metadata has them). */
export type { DialogueMetadata };

/** Turns a record failure into a DatasetReadError (the message names the file and the field). */
const readError = (message: string): Error => new DatasetReadError(message);

/** One dialogue of a dataset. */
export interface DatasetDialogue {
  id: string;
  /** The dialogue's line of `all.jsonl` exactly as written, with its `\n`. */
  line: string;
  events: ChannelEvents;
  metadata: DialogueMetadata;
  /** Absolute path of `audio/{id}.wav`. */
  audioFile: string;
  /** sha256 (hex) of the WAV as listed in `manifest.json` `files`; null when the manifest has none. */
  audioSha256: string | null;
  /**
   * `metadata/{id}.json` as `JSON.parse` read it, every field kept (`metadata` holds only the checked
   * ones), so that the report and export read each metadata file once; absent in a folder made in memory.
   */
  metadataJson?: unknown;
}

/** A quarantined (failed) dialogue from `summary.json`. */
export interface QuarantinedDialogue {
  id: string;
  stage: string;
  reason: string;
}

/** A dataset folder, read. */
export interface DatasetFolder {
  directory: string;
  language: Language;
  dataset: string;
  /** `manifest.json` domain (`task` for MT-QA, `chat`); `task` when absent. */
  domain: string;
  /** Dialogues in `all.jsonl` order (sorted by id as written). */
  dialogues: DatasetDialogue[];
  /** Failed dialogues listed in `summary.json` (empty when it has none or there is no summary). */
  quarantined: QuarantinedDialogue[];
}

/**
 * Reads `metadata/{id}.json` as readRecord reads it (the same messages), keeping the parsed JSON too.
 * @returns the checked fields and the whole value as parsed
 * @throws DatasetReadError naming the file when it cannot be read, is not JSON or does not fit the schema
 */
async function readMetadata(file: string): Promise<{ metadata: DialogueMetadata; json: unknown }> {
  let text: string;
  try {
    text = await readInputText(file);
  } catch (error) {
    if (error instanceof InputFileError) throw new DatasetReadError(error.message);
    const code = (error as NodeJS.ErrnoException).code;
    throw new DatasetReadError(`${file}: cannot be read (${code ?? (error as Error).message})`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new DatasetReadError(`${file}: not valid JSON (${(error as Error).message})`);
  }
  const result = dialogueMetadataSchema.safeParse(json);
  if (!result.success) throw new DatasetReadError(`${file}: ${describeIssues(result.error.issues)}`);
  return { metadata: result.data, json };
}

async function readText(file: string): Promise<string> {
  try {
    return await readInputText(file);
  } catch (error) {
    throw new DatasetReadError(describeFileSystemError(error, file, 'cannot be read'));
  }
}

/**
 * Splits a JSONL text into lines that keep their `\n` (a last line without one gets none), skipping
 * empty lines.
 */
export function splitJsonlLines(text: string): string[] {
  const lines: string[] = [];
  let start = 0;
  while (start < text.length) {
    const newline = text.indexOf('\n', start);
    const end = newline < 0 ? text.length : newline + 1;
    const line = text.slice(start, end);
    if (line.trim() !== '') lines.push(line);
    start = end;
  }
  return lines;
}

/**
 * Reads a dataset folder `data/{lang}/task/{dataset}`: language and dataset name from
 * `manifest.json` (falling back to the folder names), every line of `all.jsonl`, each dialogue's
 * metadata, and the failed list of `summary.json` when present.
 * @throws DatasetReadError naming the file when `manifest.json`, `all.jsonl` or a metadata file is
 *   missing or malformed, an events line does not parse, an id repeats, or the language is not en/ja.
 */
export async function readDatasetFolder(directory: string): Promise<DatasetFolder> {
  const absolute = path.resolve(directory);
  const manifestFile = path.join(absolute, 'manifest.json');
  const manifest = await readRecord(manifestFile, datasetManifestSchema, { makeError: readError });
  const manifestFiles: Record<string, string> = manifest.files ?? {};
  const language = manifest.language ?? path.basename(path.dirname(path.dirname(absolute)));
  if (!LANGUAGE_CODE_PATTERN.test(language))
    throw new DatasetReadError(
      `${manifestFile}: language "${language}" is not a language code (BCP-47, e.g. en, ja, zh)`,
    );
  const dataset = manifest.dataset ?? path.basename(absolute);
  // the report names folders by it (dialogues/{lang}/{dataset}/)
  containedPath(absolute, dataset, { value: dataset, file: manifestFile, field: 'dataset' });
  const jsonlFile = path.join(absolute, 'all.jsonl');
  const lines = splitJsonlLines(await readText(jsonlFile));
  const dialogues: DatasetDialogue[] = [];
  const seen = new Set<string>();
  for (const [index, line] of lines.entries()) {
    let parsed: ReturnType<typeof parseEventsLine>;
    try {
      parsed = parseEventsLine(line, `${jsonlFile}:${index + 1}`);
    } catch (error) {
      throw new DatasetReadError((error as Error).message);
    }
    if (seen.has(parsed.id))
      throw new DatasetReadError(`${jsonlFile}:${index + 1}: dialogue id ${parsed.id} appears twice`);
    seen.add(parsed.id);
    // an id names the dialogue's files: one outside the dataset folder is refused before anything is read
    const metadataFile = containedPath(path.join(absolute, 'metadata'), `${parsed.id}.json`, {
      value: parsed.id,
      file: `${jsonlFile}:${index + 1}`,
      field: 'id',
    });
    const { metadata, json: metadataJson } = await readMetadata(metadataFile);
    const audioSha256 = manifestFiles[`audio/${parsed.id}.wav`];
    dialogues.push({
      id: parsed.id,
      line,
      events: parsed.events,
      metadata,
      audioFile: path.join(absolute, 'audio', `${parsed.id}.wav`),
      audioSha256: typeof audioSha256 === 'string' ? audioSha256 : null,
      metadataJson,
    });
  }
  let quarantined: QuarantinedDialogue[] = [];
  const summaryFile = path.join(absolute, 'summary.json');
  const summary = await readRecord(summaryFile, summaryFailuresSchema, { optional: true, makeError: readError });
  if (summary?.failed) {
    quarantined = summary.failed
      .map((item) => ({ id: item.id, stage: item.stage ?? '', reason: item.reason ?? '' }))
      .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }
  const domain = manifest.domain ?? 'task';
  return { directory: absolute, language, dataset, domain, dialogues, quarantined };
}

/** Every speaker identity of a dialogue (`speakers.*.speakerId`, both roles), sorted, unique. */
export function dialogueSpeakerIds(metadata: Pick<DialogueMetadata, 'speakers'>): string[] {
  return [...new Set(Object.values(metadata.speakers).map((speaker) => speaker.speakerId))].sort();
}

/**
 * The source conversation a dialogue was made from, as a key shared by the languages' datasets:
 * `{corpus}/{file}#{conversationNumber}` when the metadata has them, else the dialogue id.
 */
export function sourceConversationKey(dialogue: Pick<DatasetDialogue, 'id' | 'metadata'>): string {
  const source = dialogue.metadata.source;
  if (source && source.file !== undefined && source.conversationNumber !== undefined) {
    return `${source.corpus ?? 'corpus'}/${source.file}#${source.conversationNumber}`;
  }
  return dialogue.id;
}
