/**
 * The writer of one dataset folder: each dialogue's WAV (or a hard link to its stored rendering), full-band
 * master, word alignment and metadata written atomically into `{dataset}.partial/`, then `all.jsonl` and
 * `manifest.json`, every file checked against the manifest, and the folder renamed into place
 * (stages/render-dataset-replace.ts).
 */
import { mkdir, readdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { encodeWavPcm16 } from '../pipeline/audio/wav.ts';
import { formatAlignment } from '../pipeline/events/index.ts';
import { NothingBuiltError, ShrinkRefusedError } from '../pipeline/model/build-errors.ts';
import { assertOutputLockHeld } from '../pipeline/run/build-lock.ts';
import { bytesHash } from '../pipeline/storage/content-cache.ts';
import { refuseForeignDatasetFolder } from '../pipeline/storage/foreign-dataset-folder.ts';
import { syncFileSystemOf } from '../pipeline/storage/file-system-sync.ts';
import { linkOrWriteAtomic, writeAtomic } from '../pipeline/storage/write-atomic.ts';

import { redactSecrets } from '../pipeline/storage/redact.ts';
import { formatRecord } from '../pipeline/storage/json-records.ts';
import { dialogueMetadataSchema, type DialogueMetadata } from '../pipeline/model/dialogue-metadata.ts';
import {
  writtenManifestSchema,
  type ManifestSettings,
  type WrittenManifest,
} from '../pipeline/model/dataset-manifest.ts';
import type { z } from 'zod';
import { readStoredWav, type StoredWav } from './place-timeline.ts';
import {
  describeCommonCause,
  existingDialogueCount,
  replaceFinalFolder,
  restorePreviousDataset,
} from './render-dataset-replace.ts';

/** Files of the work folder are flushed together before the commit renames it (../pipeline/storage/file-system-sync.ts). */
const WORK_FOLDER_WRITE = { durable: false };

/** Whether `data` is a stored WAV (a file and its record) rather than bytes or text. */
function isStoredWav(data: Uint8Array | string | StoredWav): data is StoredWav {
  return typeof data === 'object' && !(data instanceof Uint8Array);
}

/** Folder of the full-band masters inside a dataset folder (the benchmark's loader reads only `audio/{id}.wav` by id). */
export const FULL_BAND_DIRECTORY = 'audio_fullband';

/** Options of {@link DatasetWriter.commit}. */
export interface CommitOptions {
  /** Replace a dataset that has more dialogues than this one (default false: refuse). */
  allowShrink?: boolean;
  /** The dialogues that failed, with their reasons: named when nothing was built. */
  failures?: readonly { id: string; stage: string; reason: string }[];
}

/** One dialogue as {@link DatasetWriter.addDialogue} wrote it. */
export interface WrittenDialogue {
  /** Absolute path of its WAV in the work folder (`{dataset}.partial/audio/{id}.wav`; `commit` renames the folder). */
  audioFile: string;
  /** sha256 (hex) of the WAV, as the manifest lists it. */
  audioSha256: string;
  /** `metadata/{id}.json` as written. */
  metadataText: string;
  /** `txt_align/{id}.txt` as written. */
  alignmentText: string;
  /** Rate of its full-band master, Hz; null when it has none. */
  fullBandSampleRate: number | null;
}

/** Writes one dataset folder; create with `open`, add dialogues, then `commit`. */
export class DatasetWriter {
  private readonly files = new Map<string, string>();
  /** Bytes written per file (the same keys as `files`). */
  private readonly sizes = new Map<string, number>();
  private readonly lines = new Map<string, string>();
  /** Sample rate of each full-band master written, by dialogue id. */
  private readonly fullBandRates = new Map<string, number>();
  /** Files put as hard links to a stored copy (the same keys as `files`). */
  private readonly linked = new Set<string>();

  private constructor(
    readonly finalDirectory: string,
    readonly workDirectory: string,
    private readonly linkToStored: boolean,
  ) {}

  /**
   * Start writing a dataset at `directory` (the final folder). A leftover `.partial` folder from an
   * interrupted run is removed first. A final folder that duplexsynth wrote (it has `manifest.json`) is
   * replaced on `commit`. A `{dataset}.previous` that a commit left (render-dataset-replace.ts) is put back
   * or removed; one without the commit's marker is left as it is and stops the build.
   * @param options `linkToStored` (default true): a WAV given with the cache file that holds it becomes
   *   a hard link to that file (`put`); false: every file is written
   * @throws ForeignDatasetFolderError (exit code 2) when `directory` exists with files but no
   *   manifest.json (someone else's folder, ../pipeline/storage/foreign-dataset-folder.ts);
   *   ForeignPreviousFolderError when `{dataset}.previous` exists and is not a commit's backup
   */
  static async open(directory: string, options: { linkToStored?: boolean } = {}): Promise<DatasetWriter> {
    await restorePreviousDataset(directory);
    await refuseForeignDatasetFolder(directory);
    const work = `${directory}.partial`;
    await rm(work, { recursive: true, force: true });
    await mkdir(work, { recursive: true });
    return new DatasetWriter(directory, work, options.linkToStored ?? true);
  }

  /**
   * Writes one file of the dataset and records its sha256 and length for the manifest.
   * @param data the bytes or text, or a stored WAV (e.g. the rendering's cache entry: a file never
   *   rewritten in place): the dataset's file is then a hard link to it, and its recorded sha256 is the
   *   manifest's; where linking fails, or `linkToStored` is off, its bytes are read, checked against
   *   that sha256, and written (linkOrWriteAtomic)
   * @throws as writeAtomic; as readStoredWav when a stored WAV must be copied and differs from its record
   */
  private async put(relative: string, data: Uint8Array | string | StoredWav): Promise<void> {
    const key = relative.split(path.sep).join('/');
    const target = path.join(this.workDirectory, relative);
    if (isStoredWav(data)) {
      if (this.linkToStored) {
        const how = await linkOrWriteAtomic(
          target,
          { byteLength: data.byteLength, read: () => readStoredWav(data) },
          data.path,
          WORK_FOLDER_WRITE,
        );
        if (how === 'linked') this.linked.add(key);
      } else {
        await writeAtomic(target, await readStoredWav(data), WORK_FOLDER_WRITE);
      }
      this.files.set(key, data.sha256);
      this.sizes.set(key, data.byteLength);
      return;
    }
    // writeAtomic redacts text; the recorded sha256 must be of what is written
    const content = typeof data === 'string' ? redactSecrets(data) : data;
    await writeAtomic(target, content, WORK_FOLDER_WRITE);
    this.files.set(key, bytesHash(content));
    this.sizes.set(key, typeof content === 'string' ? Buffer.byteLength(content, 'utf8') : content.byteLength);
  }

  /** Removes files put into the work folder (those of a dialogue that failed part way), and their records; a missing one is skipped. */
  private async remove(relatives: readonly string[]): Promise<void> {
    for (const relative of relatives) {
      const key = relative.split(path.sep).join('/');
      await rm(path.join(this.workDirectory, relative), { force: true });
      this.files.delete(key);
      this.sizes.delete(key);
      this.linked.delete(key);
    }
  }

  /** Files put as hard links to a stored copy (a cache entry) rather than written (`put` given a stored WAV). */
  get linkedFiles(): number {
    return this.linked.size;
  }

  /**
   * Write one dialogue's audio, alignment and metadata, and keep its events line for `all.jsonl`.
   * @param dialogue the audio as `tracks` (two mono tracks, index = channel, of equal length, float
   *   samples in [-1, 1], at `sampleRate`; encoded here), as `wav`, the WAV bytes to write as they are,
   *   or as `wavFile`, a stored WAV (stages/place-timeline.ts `RenderedTimeline`) the file is linked to;
   *   the full-band master likewise (`tracks`, `wav` or `file`)
   * @param metadataSchema the schema the metadata is checked against before it is written
   *   (pipeline/model/dialogue-metadata.ts: the task or chat one; default the one every dataset's fits)
   * @returns where its WAV is now (in the work folder, until `commit` renames the folder), the WAV's
   *   sha256 as the manifest will list it, and the text of its metadata and alignment files as written
   * @throws RangeError when the tracks differ in length or the id is not a safe file name;
   *   RecordFileError when the metadata does not fit its schema (before anything is written); as `put`
   *   (the dialogue's files written until then are removed)
   */
  async addDialogue<S extends z.ZodType<DialogueMetadata>>(
    dialogue: (
      { tracks: [Float32Array, Float32Array]; sampleRate: number } | { wav: Uint8Array } | { wavFile: StoredWav }
    ) & {
      id: string;
      eventsLine: string;
      words: Parameters<typeof formatAlignment>[0];
      metadata: z.input<S>;
      /** The full-band master (two tracks at the TTS engine's rate, or their WAV bytes), written to `audio_fullband/{id}.wav`. */
      fullBand?: ({ tracks: [Float32Array, Float32Array] } | { wav: Uint8Array } | { file: StoredWav }) & {
        sampleRate: number;
      };
    },
    metadataSchema: S = dialogueMetadataSchema as unknown as S,
  ): Promise<WrittenDialogue> {
    if (!/^[A-Za-z0-9._-]+$/.test(dialogue.id))
      throw new RangeError(`dialogue id "${dialogue.id}" is not a safe file name`);
    if ('tracks' in dialogue && dialogue.tracks[0].length !== dialogue.tracks[1].length)
      throw new RangeError(`${dialogue.id}: channel tracks differ in length`);
    // the metadata is checked before anything is written, and a dialogue that fails part way has its
    // files removed: the dataset holds whole dialogues only (else a failed one would be listed in the
    // manifest with its audio and alignment, though not among its dialogues)
    const metadataFile = path.join('metadata', `${dialogue.id}.json`);
    // as put writes them (text is redacted: ../pipeline/storage/redact.ts)
    const metadataText = redactSecrets(
      formatRecord(path.join(this.finalDirectory, metadataFile), metadataSchema, dialogue.metadata),
    );
    const alignmentText = redactSecrets(formatAlignment(dialogue.words));
    return this.addFormattedDialogue({
      id: dialogue.id,
      eventsLine: dialogue.eventsLine,
      audio:
        'wavFile' in dialogue
          ? dialogue.wavFile
          : 'wav' in dialogue
            ? dialogue.wav
            : encodeWavPcm16({ channels: dialogue.tracks, sampleRate: dialogue.sampleRate }),
      ...(dialogue.fullBand ? { fullBand: dialogue.fullBand } : {}),
      metadataText,
      alignmentText,
    });
  }

  /**
   * Write one dialogue whose metadata and alignment are already formatted (as {@link addDialogue}
   * formats them: a dialogue record a worker of a queued build made), and keep its events line.
   * Nothing is read or hashed but the two texts: a stored WAV becomes a hard link to its cache file
   * and is listed with the sha256 it was stored with.
   * @returns as {@link addDialogue}
   * @throws RangeError when the id is not a safe file name; as `put` (the dialogue's files written
   *   until then are removed)
   */
  async addFormattedDialogue(dialogue: {
    id: string;
    eventsLine: string;
    audio: Uint8Array | StoredWav;
    fullBand?: ({ tracks: [Float32Array, Float32Array] } | { wav: Uint8Array } | { file: StoredWav }) & {
      sampleRate: number;
    };
    metadataText: string;
    alignmentText: string;
  }): Promise<WrittenDialogue> {
    if (!/^[A-Za-z0-9._-]+$/.test(dialogue.id))
      throw new RangeError(`dialogue id "${dialogue.id}" is not a safe file name`);
    const { metadataText, alignmentText } = dialogue;
    const metadataFile = path.join('metadata', `${dialogue.id}.json`);
    const audioFile = path.join('audio', `${dialogue.id}.wav`);
    const fullBandFile = path.join(FULL_BAND_DIRECTORY, `${dialogue.id}.wav`);
    const alignmentFile = path.join('txt_align', `${dialogue.id}.txt`);
    const done: string[] = [];
    try {
      await this.put(audioFile, dialogue.audio);
      done.push(audioFile);
      if (dialogue.fullBand) {
        await this.writeFullBandMaster(dialogue.id, dialogue.fullBand);
        done.push(fullBandFile);
      }
      await this.put(alignmentFile, alignmentText);
      done.push(alignmentFile);
      await this.put(metadataFile, metadataText);
    } catch (error) {
      // each put is atomic (nothing is left of the one that failed); the ones before it are removed
      await this.remove(done);
      this.fullBandRates.delete(dialogue.id);
      throw error;
    }
    this.lines.set(dialogue.id, dialogue.eventsLine);
    return {
      audioFile: path.join(this.workDirectory, audioFile),
      audioSha256: this.files.get(audioFile.split(path.sep).join('/'))!,
      metadataText,
      alignmentText,
      fullBandSampleRate: this.fullBandRates.get(dialogue.id) ?? null,
    };
  }

  /** `audio_fullband/{id}.wav`: the full-band master's two tracks at their rate, 16-bit (its own function so the bench's profile names its cost). */
  private async writeFullBandMaster(
    id: string,
    fullBand: ({ tracks: [Float32Array, Float32Array] } | { wav: Uint8Array } | { file: StoredWav }) & {
      sampleRate: number;
    },
  ): Promise<void> {
    await this.put(
      path.join(FULL_BAND_DIRECTORY, `${id}.wav`),
      'file' in fullBand
        ? fullBand.file
        : 'wav' in fullBand
          ? fullBand.wav
          : encodeWavPcm16({ channels: fullBand.tracks, sampleRate: fullBand.sampleRate }),
    );
    this.fullBandRates.set(id, fullBand.sampleRate);
  }

  /** Ids of the dialogues added so far, sorted. */
  dialogueIds(): string[] {
    return [...this.lines.keys()].sort();
  }

  /** Write a file at the dataset's top level (e.g. the summary), included in the manifest. */
  async addFile(name: string, data: Uint8Array | string): Promise<void> {
    await this.put(name, data);
  }

  /**
   * Write `all.jsonl` and `manifest.json`, check every file against the manifest, then replace the
   * final folder by the finished one. When it refuses, the `.partial` folder is removed and the final
   * folder is left as it was.
   * @param settings recorded in the manifest (language, dataset, domain, sample rate, channel mapping,
   *   detector settings; pipeline/model/dataset-manifest.ts)
   * @param options `allowShrink`; `failures` to name the common cause when nothing was built
   * @throws NothingBuiltError when no dialogue was added (naming the most common failure reason);
   *   ShrinkRefusedError when the final folder's manifest lists more dialogues and `allowShrink` is not
   *   set; LockLostError when the build lost its output-folder lock; Error naming the file when a
   *   written file is missing or has another length than was written, or a file not in the manifest is there
   */
  async commit(settings: ManifestSettings, options: CommitOptions = {}): Promise<void> {
    const ids = this.dialogueIds();
    if (ids.length === 0) {
      await this.discard();
      throw new NothingBuiltError(
        `${this.finalDirectory}: no dialogue was built, so nothing was committed${describeCommonCause(options.failures ?? [])}`,
      );
    }
    const previous = await existingDialogueCount(this.finalDirectory);
    if (previous !== undefined && ids.length < previous && options.allowShrink !== true) {
      await this.discard();
      const failed = options.failures?.length
        ? ` (${options.failures.length} failed${describeCommonCause(options.failures)})`
        : '';
      throw new ShrinkRefusedError(
        `${this.finalDirectory}: the new dataset has ${ids.length} dialogues${failed}, the one there has ${previous}; it was kept. ` +
          'Pass --allow-shrink to replace it with the smaller one, or choose another --out',
      );
    }
    const jsonl = ids.map((id) => `${this.lines.get(id)}\n`).join('');
    await this.put('all.jsonl', jsonl);
    const files = Object.fromEntries([...this.files.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    const fullBandRates = [...new Set(ids.flatMap((id) => this.fullBandRates.get(id) ?? []))].sort((a, b) => a - b);
    const fullBand =
      fullBandRates.length > 0
        ? {
            fullBand: {
              directory: FULL_BAND_DIRECTORY,
              sampleRates: fullBandRates,
              dialogues: ids.filter((id) => this.fullBandRates.has(id)).length,
            },
          }
        : {};
    const manifest: WrittenManifest = {
      format: 'm3-duplexbench',
      manifestVersion: 1,
      ...settings,
      ...fullBand,
      dialogues: ids,
      files,
    };
    await writeAtomic(
      path.join(this.workDirectory, 'manifest.json'),
      formatRecord(path.join(this.finalDirectory, 'manifest.json'), writtenManifestSchema, manifest),
      WORK_FOLDER_WRITE,
    );
    await this.checkAgainstManifest(files);
    await syncFileSystemOf(this.workDirectory); // every file on the disk before the folder takes its name
    assertOutputLockHeld(this.finalDirectory);
    await replaceFinalFolder(this.finalDirectory, this.workDirectory);
  }

  /**
   * Check the work folder: every file the manifest lists is there with the length written (writeAtomic
   * checked that length, so the bytes are not read back), and no other file is.
   * @throws Error naming the file
   */
  private async checkAgainstManifest(files: Record<string, string>): Promise<void> {
    for (const relative of Object.keys(files)) {
      const file = path.join(this.workDirectory, relative);
      const { size } = await stat(file).catch((error: NodeJS.ErrnoException) => {
        throw new Error(`${file}: listed in the manifest but missing (${error.code ?? error.message}); not committed`);
      });
      const written = this.sizes.get(relative);
      if (size !== written) throw new Error(`${file}: ${size} bytes, ${written} were written; not committed`);
    }
    for (const entry of await readdir(this.workDirectory, { recursive: true, withFileTypes: true })) {
      if (!entry.isFile()) continue;
      const relative = path
        .relative(this.workDirectory, path.join(entry.parentPath, entry.name))
        .split(path.sep)
        .join('/');
      if (relative !== 'manifest.json' && !(relative in files))
        throw new Error(`${path.join(this.workDirectory, relative)}: not in the manifest; not committed`);
    }
  }

  /** Removes the `.partial` folder of an unfinished dataset (the final folder is left as it is). */
  async discard(): Promise<void> {
    await rm(this.workDirectory, { recursive: true, force: true });
  }
}
