/**
 * Stage `render-dataset`: writes the M3-DuplexBench layout (../shared/docs/m3-format.md) for one
 * language:
 *
 * ```
 * data/{lang}/task/{dataset}/
 *   audio/{id}.wav          2 channels, PCM 16-bit, one speaker per channel
 *   all.jsonl               one events line per dialogue, sorted by id (the split stage comes later)
 *   txt_align/{id}.txt      channel<TAB>start<TAB>end<TAB>word, seconds with 2 decimals
 *   metadata/{id}.json      source conversation, texts before/after rewrite and translation, speakers, seed
 *   manifest.json           every file with its sha256, plus the settings needed to re-derive events
 * ```
 *
 * Nothing is half-written: the dataset is written into `{dataset}.partial/` and renamed over the
 * final folder only when complete; each file inside is itself written atomically.
 */
import { mkdir, readdir, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { encodeWavPcm16 } from '../pipeline/audio/raw-audio.ts';
import { formatAlignment } from '../pipeline/events/index.ts';
import type { Language } from '../pipeline/model/types.ts';
import { bytesHash, writeAtomic } from '../pipeline/run/content-cache.ts';

/** Relative path of a dataset folder inside the build output: `data/{lang}/task/{dataset}`. */
export function datasetRelativePath(language: Language, dataset: string): string {
  return path.join('data', language, 'task', dataset);
}

/** Writes one dataset folder; create with `open`, add dialogues, then `commit`. */
export class DatasetWriter {
  private readonly files = new Map<string, string>();
  private readonly lines = new Map<string, string>();

  private constructor(
    readonly finalDirectory: string,
    readonly workDirectory: string,
  ) {}

  /**
   * Start writing a dataset at `directory` (the final folder). A leftover `.partial` folder from an
   * interrupted run is removed first. A final folder that duplexsynth wrote (it has `manifest.json`) is
   * replaced on `commit`.
   * @throws Error when `directory` exists with files but no manifest.json (someone else's folder)
   */
  static async open(directory: string): Promise<DatasetWriter> {
    const existing = await readdir(directory).catch(() => [] as string[]);
    if (existing.length > 0 && !existing.includes('manifest.json')) {
      throw new Error(`${directory}: exists, holds files and was not written by duplexsynth (no manifest.json); remove it or choose another --out`);
    }
    const work = `${directory}.partial`;
    await rm(work, { recursive: true, force: true });
    await mkdir(work, { recursive: true });
    return new DatasetWriter(directory, work);
  }

  private async put(relative: string, data: Uint8Array | string): Promise<void> {
    await writeAtomic(path.join(this.workDirectory, relative), data);
    this.files.set(relative.split(path.sep).join('/'), bytesHash(data));
  }

  /**
   * Write one dialogue's audio, alignment and metadata, and keep its events line for `all.jsonl`.
   * @param tracks two mono tracks (index = channel) of equal length, float samples in [-1, 1]
   * @throws RangeError when the tracks differ in length or the id is not a safe file name
   */
  async addDialogue(dialogue: {
    id: string;
    tracks: [Float32Array, Float32Array];
    sampleRate: number;
    eventsLine: string;
    words: Parameters<typeof formatAlignment>[0];
    metadata: unknown;
  }): Promise<void> {
    if (!/^[A-Za-z0-9._-]+$/.test(dialogue.id)) throw new RangeError(`dialogue id "${dialogue.id}" is not a safe file name`);
    if (dialogue.tracks[0].length !== dialogue.tracks[1].length) throw new RangeError(`${dialogue.id}: channel tracks differ in length`);
    await this.put(path.join('audio', `${dialogue.id}.wav`), encodeWavPcm16({ channels: dialogue.tracks, sampleRate: dialogue.sampleRate }));
    await this.put(path.join('txt_align', `${dialogue.id}.txt`), formatAlignment(dialogue.words));
    await this.put(path.join('metadata', `${dialogue.id}.json`), `${JSON.stringify(dialogue.metadata, null, 2)}\n`);
    this.lines.set(dialogue.id, dialogue.eventsLine);
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
   * Write `all.jsonl` and `manifest.json`, then replace the final folder by the finished one.
   * @param manifestExtra settings recorded in the manifest (sample rate, channel mapping, detector settings)
   */
  async commit(manifestExtra: Record<string, unknown>): Promise<void> {
    const jsonl = this.dialogueIds().map((id) => `${this.lines.get(id)}\n`).join('');
    await this.put('all.jsonl', jsonl);
    const files = Object.fromEntries([...this.files.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    const manifest = { format: 'm3-duplexbench', manifestVersion: 1, ...manifestExtra, dialogues: this.dialogueIds(), files };
    await writeAtomic(path.join(this.workDirectory, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
    await rm(this.finalDirectory, { recursive: true, force: true });
    await rename(this.workDirectory, this.finalDirectory);
  }
}
