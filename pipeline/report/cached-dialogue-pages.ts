/**
 * Dialogue pages kept in the build's content cache, so that the machine that rendered a dialogue (a
 * worker of a queued build) draws its page, and the report, on the coordinator, writes it without
 * drawing it. A page is kept under a key of everything it is drawn from except its split (assigned
 * after every dialogue is built, so unknown to the worker): the page's dataset fields, the dialogue
 * as the report reads it with its paths relative to the output folder (so the worker's and the
 * coordinator's folders may differ), its links, and its WAV's sha256. The split is a placeholder in
 * the kept page, filled in when the page is written.
 */
import path from 'node:path';
import type { ExportDialogue } from '../export/export-dataset.ts';
import type { BinaryCodec, ContentCache } from '../storage/content-cache.ts';
import {
  dialoguePageHtml,
  PAGE_DATASET_FIELDS,
  waveformColumns,
  type DialoguePageLinks,
  type PageDataset,
} from './dialogue-page.ts';
import { benchmarkSplitName } from './loader-verdicts.ts';
import { cachedWavEnvelopes } from './waveform-cache.ts';
import { redactSecrets } from '../storage/redact.ts';

/** Cache folder of the pages. */
export const DIALOGUE_PAGE_CACHE_STAGE = 'dialogue-pages';

/** Stands for the split in a kept page: a NUL never appears in a page's escaped text (control characters are removed from corpus text on ingest). */
const SPLIT_PLACEHOLDER = '\u0000split\u0000';

/** The placeholder as UTF-8 bytes, as it is found in a kept page. */
const SPLIT_PLACEHOLDER_BYTES = Buffer.from(SPLIT_PLACEHOLDER, 'utf8');

/**
 * A page as a cache entry: its HTML, secrets redacted (as writeAtomic redacts text), as the data file.
 * Kept pages are handled as bytes: the report writes them as read, with only the split put in.
 */
const pageCodec: BinaryCodec<Buffer, Record<string, never>> = {
  encode: (bytes) => ({ bytes, metadata: {} }),
  decode: (bytes) => bytes,
};

/** The key material of a dialogue's page (module comment). */
function pageKey(
  outputDirectory: string,
  dataset: PageDataset,
  dialogue: ExportDialogue,
  links: DialoguePageLinks,
  audioSha256: string,
): unknown {
  const relative = (file: string | null) =>
    file === null ? null : path.relative(outputDirectory, file).split(path.sep).join('/');
  const { split: _split, testSmall: _testSmall, ...rest } = dialogue;
  return {
    version: 2, // of the drawing code: a page another version drew is not taken
    fields: Object.fromEntries(PAGE_DATASET_FIELDS.map((field) => [field, dataset[field]])),
    dialogue: { ...rest, audioFile: relative(rest.audioFile), fullBandAudioFile: relative(rest.fullBandAudioFile) },
    links,
    audioSha256,
  };
}

/**
 * Draw a dialogue's page (its waveform from the cache or its WAV at `audioFile`) and keep it in the cache.
 * @param outputDirectory the output folder the dialogue's paths are in (any absolute folder: only paths relative to it enter the key)
 * @throws as dialoguePageHtml and cachedWavEnvelopes; as the cache's write
 */
export async function keepDialoguePage(
  cache: ContentCache,
  outputDirectory: string,
  page: { dataset: PageDataset; dialogue: ExportDialogue; links: DialoguePageLinks },
  audio: { file: string; sha256: string },
): Promise<void> {
  const { dataset, dialogue, links } = page;
  const key = pageKey(outputDirectory, dataset, dialogue, links, audio.sha256);
  await cache.binary(
    DIALOGUE_PAGE_CACHE_STAGE,
    key,
    async () => {
      const envelopes = await cachedWavEnvelopes(audio.file, waveformColumns(dialogue), {
        cache,
        sha256: audio.sha256,
      });
      return Buffer.from(
        redactSecrets(dialoguePageHtml(dataset, dialogue, envelopes, links, SPLIT_PLACEHOLDER)),
        'utf8',
      );
    },
    pageCodec,
    '.html',
  );
}

/** Thrown inside {@link keptDialoguePage}'s lookup to leave a missing page missing. */
class NoPage extends Error {}

/**
 * The HTML of a dialogue's page kept by {@link keepDialoguePage} from the same inputs, as UTF-8 bytes
 * with the dialogue's split filled in (secrets redacted when it was kept); null when there is none.
 * @throws the cache folder's read errors other than a missing or damaged entry
 */
export async function keptDialoguePage(
  cache: ContentCache,
  outputDirectory: string,
  dataset: PageDataset,
  dialogue: ExportDialogue,
  links: DialoguePageLinks,
  audioSha256: string,
): Promise<Buffer | null> {
  const key = pageKey(outputDirectory, dataset, dialogue, links, audioSha256);
  let kept: Buffer;
  try {
    kept = await cache.binary(DIALOGUE_PAGE_CACHE_STAGE, key, () => Promise.reject(new NoPage()), pageCodec, '.html');
  } catch (error) {
    if (error instanceof NoPage) return null;
    throw error;
  }
  const at = kept.indexOf(SPLIT_PLACEHOLDER_BYTES);
  if (at < 0 || kept.indexOf(SPLIT_PLACEHOLDER_BYTES, at + 1) >= 0) return null; // not exactly one split
  const split = Buffer.from(benchmarkSplitName(dialogue.split), 'utf8');
  return Buffer.concat([kept.subarray(0, at), split, kept.subarray(at + SPLIT_PLACEHOLDER_BYTES.length)]);
}
