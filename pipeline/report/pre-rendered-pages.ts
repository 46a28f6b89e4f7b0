/**
 * Dialogue pages of the report made while the build still runs: each page as soon as its dialogue is
 * written, so that the report after the last answer only moves them into place (the report
 * takes most of the time the speech servers sit idle at the end of a build, and its dialogue pages,
 * each reading its whole WAV for the waveform, are half of it).
 *
 * A page is kept under a key of everything it is made from: the page's dataset fields
 * (dialogue-page.ts `PAGE_DATASET_FIELDS`: the page's type lets it read no others), the dialogue as the report reads it (export-dataset.ts
 * `ExportDialogue`: events, words, utterances, speakers, split, paths), its links, and the identity of
 * its WAV (the manifest's sha256, and the file's inode, length and modification time). The report
 * computes the key again from the committed dataset and uses the page only when it is the same;
 * otherwise (a split assigned since, a full-band rate another dialogue added, a WAV changed) it makes
 * the page as it always did. So a pre-rendered page is never one the report would not have written.
 *
 * The pages live in `{output}/report-pages.partial/` for the length of one build: removed when a build
 * starts pre-rendering, and when it ends; what a killed build left is removed by the next build under
 * the output folder's lock (pipeline/run/output-checks.ts). Nothing there is reused across builds.
 */
import { createHash } from 'node:crypto';
import { mkdir, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import type { ExportDataset, ExportDialogue } from '../export/export-dataset.ts';
import type { ContentCache } from '../storage/content-cache.ts';
import { containedPath } from '../storage/contained-path.ts';
import { writeAtomic } from '../storage/write-atomic.ts';
import {
  dialoguePageHtml,
  PAGE_DATASET_FIELDS,
  waveformColumns,
  type DialoguePageLinks,
  type PageDataset,
} from './dialogue-page.ts';
import { cachedWavEnvelopes, type EnvelopeCache } from './waveform-cache.ts';

/** Folder of a build's pre-rendered pages inside its output folder. */
export const PRE_RENDERED_PAGES_DIRECTORY = 'report-pages.partial';

/** Where a dialogue's page goes and what it links to. */
export interface DialoguePagePlan {
  /** The page's path inside the report folder, `/`-separated: `dialogues/{lang}/{dataset}/{id}.html`. */
  page: string;
  links: DialoguePageLinks;
}

/** A dialogue's page inside the report folder, `/`-separated. */
export function dialoguePagePath(dataset: Pick<ExportDataset, 'language' | 'dataset'>, id: string): string {
  return `dialogues/${dataset.language}/${dataset.dataset}/${id}.html`;
}

/**
 * The absolute path of `page` (a page path of the report, `/`-separated, made from a dialogue id or a
 * dataset name) inside `folder` (the report's work folder, or the pre-rendered pages' folder).
 * @throws PathOutsideFolderError naming the folder and the page when it leads outside the folder
 */
export function reportPageFile(folder: string, page: string): string {
  return containedPath(folder, page, { value: page, file: folder, field: 'report page', fileName: false });
}

/** A dataset's event list page inside the report folder, `/`-separated. */
export function eventListPagePath(dataset: Pick<ExportDataset, 'language' | 'dataset'>): string {
  return `events/${dataset.language}/${dataset.dataset}.html`;
}

/**
 * The page of `dialogue` in the report of the build in `outputDirectory`, and its links relative to
 * it (the index, the assets, the dialogue's WAV, the dataset's event list).
 */
export function dialoguePagePlan(
  outputDirectory: string,
  dataset: Pick<ExportDataset, 'language' | 'dataset'>,
  dialogue: Pick<ExportDialogue, 'id' | 'audioFile'>,
): DialoguePagePlan {
  const report = path.join(outputDirectory, 'report');
  const page = dialoguePagePath(dataset, dialogue.id);
  const pageDirectory = path.dirname(path.join(report, page));
  const relative = (target: string) => path.relative(pageDirectory, target).split(path.sep).join('/');
  return {
    page,
    links: {
      assets: relative(path.join(report, 'assets')),
      audio: relative(dialogue.audioFile),
      index: relative(path.join(report, 'index.html')),
      events: relative(path.join(report, eventListPagePath(dataset))),
    },
  };
}

/**
 * The HTML of a dialogue's page, its waveform read from `audioFile` (default: the dialogue's own WAV;
 * a build reads it where it is until its dataset is committed), or from the cache entry of the WAV's
 * sha256 when `envelopeCache` is given and holds one (./waveform-cache.ts).
 * @throws as readWavEnvelopes (a WAV that cannot be read or decoded, named) and dialoguePageHtml
 */
export async function renderDialoguePage(
  dataset: PageDataset,
  dialogue: ExportDialogue,
  links: DialoguePageLinks,
  audioFile: string = dialogue.audioFile,
  envelopeCache: EnvelopeCache | null = null,
): Promise<string> {
  const envelopes = await cachedWavEnvelopes(audioFile, waveformColumns(dialogue), envelopeCache);
  return dialoguePageHtml(dataset, dialogue, envelopes, links);
}

/** Which WAV a page's waveform was read from: the manifest's sha256 and the file's identity on disk. */
export interface PageAudioIdentity {
  sha256: string;
  /** Inode number, length in bytes and modification time (ms) of the file: a file changed or replaced since has others. */
  inode: number;
  size: number;
  modifiedMs: number;
}

/**
 * The identity of the WAV at `file`, listed with `sha256` in its dataset's manifest.
 * @throws the file-system error when it cannot be stat'ed
 */
export async function pageAudioIdentity(file: string, sha256: string): Promise<PageAudioIdentity> {
  const stats = await stat(file);
  return { sha256, inode: stats.ino, size: stats.size, modifiedMs: stats.mtimeMs };
}

/** Version of the key's layout; a change of it keeps pages of an older layout from matching. */
const PAGE_KEY_VERSION = 1;

/** sha256 (hex) of everything a dialogue page is made from (module comment). */
export function dialoguePageKey(
  dataset: PageDataset,
  dialogue: ExportDialogue,
  links: DialoguePageLinks,
  audio: PageAudioIdentity,
): string {
  const fields = Object.fromEntries(PAGE_DATASET_FIELDS.map((field) => [field, dataset[field]]));
  return createHash('sha256')
    .update(JSON.stringify([PAGE_KEY_VERSION, fields, dialogue, links, audio]))
    .digest('hex');
}

/**
 * The dialogue pages a build makes while it runs (module comment). `add` makes one and never throws (a
 * page it could not make is made by the report); `take` hands the report a page whose key matches.
 */
export class PreRenderedDialoguePages {
  /** Key of each page made, by its path inside the report folder. */
  private readonly keys = new Map<string, string>();
  /** Pages `add` could not make (the report makes them). */
  failures = 0;
  /** Pages handed to the report. */
  taken = 0;

  private constructor(
    readonly directory: string,
    private readonly cache: ContentCache | null,
  ) {}

  /**
   * Starts the pre-rendered pages of the build in `outputDirectory`: `{output}/report-pages.partial/`,
   * emptied first (what an interrupted build left there).
   * @param cache the build's content cache: the waveforms are read from and kept in it (./waveform-cache.ts)
   * @throws the file-system error when the folder cannot be made
   */
  static async open(outputDirectory: string, cache: ContentCache | null = null): Promise<PreRenderedDialoguePages> {
    const directory = path.join(path.resolve(outputDirectory), PRE_RENDERED_PAGES_DIRECTORY);
    await rm(directory, { recursive: true, force: true });
    await mkdir(directory, { recursive: true });
    return new PreRenderedDialoguePages(directory, cache);
  }

  /**
   * Makes the page of a dialogue just written.
   * @param outputDirectory the build's output folder (the page's links are those of its report)
   * @param dialogue as the report will read it, with its final paths
   * @param audioFile where its WAV is now (the dataset's work folder, renamed into place on commit)
   * @param audioSha256 the WAV's sha256 as the manifest will list it
   */
  async add(
    outputDirectory: string,
    dataset: PageDataset,
    dialogue: ExportDialogue,
    audioFile: string,
    audioSha256: string,
  ): Promise<void> {
    const { page, links } = dialoguePagePlan(path.resolve(outputDirectory), dataset, dialogue);
    try {
      const html = await renderDialoguePage(
        dataset,
        dialogue,
        links,
        audioFile,
        this.cache ? { cache: this.cache, sha256: audioSha256 } : null,
      );
      const key = dialoguePageKey(dataset, dialogue, links, await pageAudioIdentity(audioFile, audioSha256));
      await writeAtomic(reportPageFile(this.directory, page), html, { durable: false });
      this.keys.set(page, key);
    } catch {
      this.keys.delete(page);
      this.failures += 1;
    }
  }

  /**
   * Moves the pre-rendered `page` to `target` when it was made from exactly these inputs.
   * @param audioSha256 the manifest's sha256 of the dialogue's WAV; null (not listed): never taken
   * @returns true when moved; false when there is none, or its key differs (the report makes it)
   */
  async take(
    page: string,
    dataset: PageDataset,
    dialogue: ExportDialogue,
    links: DialoguePageLinks,
    audioSha256: string | null,
    target: string,
  ): Promise<boolean> {
    const key = this.keys.get(page);
    if (key === undefined || audioSha256 === null) return false;
    this.keys.delete(page);
    const audio = await pageAudioIdentity(dialogue.audioFile, audioSha256).catch(() => null);
    if (audio === null || dialoguePageKey(dataset, dialogue, links, audio) !== key) return false;
    await mkdir(path.dirname(target), { recursive: true });
    const moved = await rename(reportPageFile(this.directory, page), target).then(
      () => true,
      () => false,
    );
    if (moved) this.taken += 1;
    return moved;
  }

  /** Removes the folder and what is left in it. */
  async discard(): Promise<void> {
    this.keys.clear();
    await rm(this.directory, { recursive: true, force: true });
  }
}
