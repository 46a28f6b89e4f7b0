/**
 * A dialogue's report page inputs as the report will read them once its dataset is committed (its
 * line of `all.jsonl`, metadata and alignment as written, the manifest fields of the page), made from
 * what the build holds while it writes the dialogue: for the pages made during a build
 * (./dataset-output.ts) and the pages a queued build's workers draw (./worker-jobs.ts).
 */
import path from 'node:path';
import { channelRoles, exportDialogue, type ExportDialogue } from '../export/export-dataset.ts';
import { parseEventsLine } from '../events/index.ts';
import type { Channel, Language, SpeakerRole } from '../model/types.ts';
import type { PageDataset } from '../report/dialogue-page.ts';
import { FULL_BAND_DIRECTORY } from '../../stages/render-dataset.ts';

/** What a dialogue's page is made from. */
export interface DialoguePageSource {
  language: Language;
  dataset: string;
  /** Absolute path of the dataset's final folder. */
  directory: string;
  id: string;
  /** Its `all.jsonl` line without the newline. */
  eventsLine: string;
  durationSeconds: number;
  metadataText: string;
  alignmentText: string;
  /** Rate of its full-band master, Hz; null without one. */
  fullBandSampleRate: number | null;
  /** The manifest's `channels`. */
  channels: Record<SpeakerRole, Channel>;
  /** The manifest's `sampleRate`, Hz. */
  sampleRate: number;
}

/**
 * The page's dataset fields and the dialogue as the report reads them (no split yet).
 * @throws as exportDialogue and parseEventsLine (a record the report could not read either)
 */
export function dialoguePageInputs(source: DialoguePageSource): { dataset: PageDataset; dialogue: ExportDialogue } {
  const dataset: PageDataset = {
    dataset: source.dataset,
    language: source.language,
    domain: 'task',
    channels: source.channels,
    roles: channelRoles(source.channels),
    sampleRate: source.sampleRate,
    fullBand:
      source.fullBandSampleRate === null
        ? null
        : { directory: FULL_BAND_DIRECTORY, sampleRates: [source.fullBandSampleRate] },
  };
  const directory = path.resolve(source.directory); // the report reads the dataset by its absolute path
  const { id } = source;
  const line = `${source.eventsLine}\n`; // as all.jsonl holds it
  const dialogue = exportDialogue(
    {
      directory,
      channels: source.channels,
      roles: dataset.roles,
      fullBandDirectory: dataset.fullBand?.directory ?? null,
      hasFullBandFile: () => source.fullBandSampleRate !== null,
      split: () => null,
      testSmall: () => false,
    },
    {
      id,
      line,
      events: parseEventsLine(line, path.join(directory, 'all.jsonl')).events,
      audioFile: path.join(directory, 'audio', `${id}.wav`),
      metadata: { durationSeconds: source.durationSeconds },
    },
    { text: source.metadataText, file: path.join(directory, 'metadata', `${id}.json`) },
    { text: source.alignmentText, file: path.join(directory, 'txt_align', `${id}.txt`) },
  );
  return { dataset, dialogue };
}
