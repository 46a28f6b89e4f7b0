/**
 * One dataset's part of the report: its entry in the contents, its section of index.html (tables,
 * turn-taking plots, evaluable events, dialogues, failed dialogues), its dialogue pages and its page
 * of every event.
 */
import type { ContentCache } from '../storage/content-cache.ts';
import type { DatasetSummary } from '../model/dataset-summary.ts';
import { keptDialoguePage } from './cached-dialogue-pages.ts';
import path from 'node:path';
import type PQueue from 'p-queue';
import { missingDimensionWarnings } from '../events/benchmark-dimensions.ts';
import { evaluableEventsReport, type EvaluableEventsReport } from '../events/evaluable-events.ts';
import { readExportDataset, type ExportDialogue } from '../export/export-dataset.ts';
import type { DatasetFolder } from '../quality/dataset-files.ts';
import { buildDatasetTables } from '../quality/tables.ts';
import { writeAtomic } from '../storage/write-atomic.ts';
import {
  dialoguePagePath,
  dialoguePagePlan,
  eventListPagePath,
  renderDialoguePage,
  reportPageFile,
  type PreRenderedDialoguePages,
} from './pre-rendered-pages.ts';
import { escapeHtml, htmlTable, type Cell } from './html.ts';
import { eventListPageHtml } from './event-list-page.ts';
import { benchmarkSplitName, datasetLoaderSettings } from './loader-verdicts.ts';
import { allSettledInOrder, readJson, type FidelityJson } from './report-inputs.ts';
import { evaluableEventsSection, qualityTable, statisticsTable } from './report-tables.ts';
import { turnTakingPart } from './turn-taking-part.ts';

/** Options of {@link writeBuildReport}. */
export interface BuildReportOptions {
  /** Most dialogue pages per dataset (the first by id); default: every dialogue. */
  dialoguePagesPerDataset?: number;
  /** Dialogue pages the build made while it ran: each is used when made from the same inputs, else made again. */
  preRendered?: PreRenderedDialoguePages;
  /** The build's content cache: waveforms are read from it by the WAV's sha256 (./waveform-cache.ts), and kept in it. */
  cache?: ContentCache;
}

/** One dataset's part of the report: its entry in the contents, its section of index.html, and how many dialogue pages it wrote. */
export interface DatasetSection {
  content: string;
  section: string;
  dialoguePages: number;
}

/** Writes one dataset's plots, dialogue pages (through `pages`) and event list into `work`, and returns its part of index.html. */
export async function datasetSection(part: {
  /** The build's output folder (absolute). */
  output: string;
  /** The report's folder being written. */
  work: string;
  folder: DatasetFolder;
  options: BuildReportOptions;
  /** The queue every dataset's dialogue pages are written through. */
  pages: PQueue;
}): Promise<DatasetSection> {
  const { output, work, folder, options, pages } = part;
  const { directory } = folder;
  const dataset = await readExportDataset(folder);
  const key = `${dataset.language}-${dataset.dataset}`;
  const anchor = `dataset-${key}`;
  const content = `<li><a href="#${escapeHtml(anchor)}">${escapeHtml(dataset.dataset)} (${dataset.language})</a></li>`;
  const tables = await buildDatasetTables(folder);
  const summary = await readJson<{
    failed?: { id: string; stage: string; reason: string }[];
    evaluableEvents?: EvaluableEventsReport[];
    speechRecognition?: DatasetSummary['speechRecognition'];
  }>(path.join(directory, 'summary.json'));
  const recognition = summary?.speechRecognition;
  const recognitionHtml =
    recognition && recognition.errorRate !== null
      ? `\n<p class="note">Speech recognition of the utterances of this dataset: ${recognition.unit} error rate ${recognition.errorRate.toFixed(3)} (${recognition.edits} edits in ${recognition.referenceTokens} ${recognition.unit}s, ${recognition.utterances} utterances).</p>`
      : '';
  const fidelity = await readJson<FidelityJson>(path.join(directory, 'fidelity.json'));

  // the metadata readDatasetFolder parsed, when it kept every dialogue's (each file is read once)
  const metadata = folder.dialogues.map((dialogue) => dialogue.metadataJson);
  const { placed, plotImages, ratesNote, fidelityHtml, measuredNote } = await turnTakingPart({
    dataset,
    work,
    key,
    fidelity,
    ...(metadata.every((value) => value !== undefined) ? { metadata } : {}),
  });

  // evaluable events: the build's own report in summary.json (its loader settings, barge-in variants
  // included, all dialogues) when it has one; else computed here on the test split (what the
  // benchmark evaluates), or on every dialogue without a split
  const evaluated = dataset.hasSplits
    ? dataset.dialogues.filter((dialogue) => dialogue.split === 'test')
    : dataset.dialogues;
  const fromSummary =
    Array.isArray(summary?.evaluableEvents) && summary.evaluableEvents.length > 0 ? summary.evaluableEvents : null;
  const reports =
    fromSummary ??
    datasetLoaderSettings(dataset).map(({ name, settings }) => evaluableEventsReport(name, settings, evaluated));
  const evaluableScope = fromSummary
    ? `all ${fromSummary[0]!.dialogues} dialogues, from the build's summary.json`
    : dataset.hasSplits
      ? `test split, ${evaluated.length} dialogues`
      : `all ${evaluated.length} dialogues`;

  // one line per benchmark dimension this dataset gives no sample for
  const dimensionWarnings = missingDimensionWarnings(
    dataset.dataset,
    dataset.dataset.endsWith('_bargein') ? 'barge-in' : 'default',
    reports,
  );
  const dimensionsHtml = dimensionWarnings
    .map((warning) => `<p class="note failed">warning: ${escapeHtml(warning)}</p>\n`)
    .join('');

  // dialogue pages
  const limit = options.dialoguePagesPerDataset ?? Number.POSITIVE_INFINITY;
  const dialogueRows: Cell[][] = [];
  const eventsPage = eventListPagePath(dataset);
  const listed = new Map<string, { audio: string; page: string | null }>();
  const fromEventsPage = (target: string) =>
    path
      .relative(path.dirname(path.join(output, 'report', eventsPage)), target)
      .split(path.sep)
      .join('/');
  const pageOf = (dialogue: ExportDialogue) => dialoguePagePath(dataset, dialogue.id);
  const audioSha256 = new Map(folder.dialogues.map((dialogue) => [dialogue.id, dialogue.audioSha256]));
  const writePage = async (dialogue: ExportDialogue) => {
    const { page, links } = dialoguePagePlan(output, dataset, dialogue);
    const target = reportPageFile(work, page);
    const kept =
      options.cache && audioSha256.get(dialogue.id)
        ? await keptDialoguePage(options.cache, output, dataset, dialogue, links, audioSha256.get(dialogue.id)!)
        : null;
    if (kept !== null) {
      // drawn by the worker that rendered the dialogue (cached-dialogue-pages.ts)
      await writeAtomic(target, kept, { durable: false });
      if (options.preRendered) options.preRendered.taken += 1;
      return;
    }
    // made while the build ran, from exactly these inputs (pre-rendered-pages.ts), or made now
    if (
      options.preRendered &&
      (await options.preRendered.take(page, dataset, dialogue, links, audioSha256.get(dialogue.id) ?? null, target))
    )
      return;
    const sha256 = audioSha256.get(dialogue.id) ?? null;
    const envelopeCache = options.cache && sha256 !== null ? { cache: options.cache, sha256 } : null;
    await writeAtomic(target, await renderDialoguePage(dataset, dialogue, links, dialogue.audioFile, envelopeCache), {
      durable: false,
    });
  };
  const paged = dataset.dialogues.slice(0, Math.min(limit, dataset.dialogues.length));
  await allSettledInOrder(paged.map((dialogue) => pages.add(() => writePage(dialogue))));
  const dialoguePages = paged.length;
  for (const [index, dialogue] of dataset.dialogues.entries()) {
    const count = (type: string) =>
      dialogue.events[0].concat(dialogue.events[1]).filter((event) => event.event === type).length;
    const link: Cell =
      index < limit
        ? { html: `<a href="${escapeHtml(pageOf(dialogue))}">${escapeHtml(dialogue.id)}</a>` }
        : dialogue.id;
    listed.set(dialogue.id, {
      audio: fromEventsPage(dialogue.audioFile),
      page: index < limit ? fromEventsPage(path.join(output, 'report', pageOf(dialogue))) : null,
    });
    dialogueRows.push([
      link,
      dataset.hasSplits ? benchmarkSplitName(dialogue.split) : '—',
      dialogue.durationSeconds.toFixed(2),
      count('TURN_SHIFT'),
      count('TURN_HOLD'),
      count('BC'),
      count('BARGE_IN'),
      count('SHORTPAUSE'),
    ]);
  }
  await writeAtomic(
    reportPageFile(work, eventsPage),
    eventListPageHtml(dataset, {
      assets: fromEventsPage(path.join(output, 'report', 'assets')),
      index: fromEventsPage(path.join(output, 'report', 'index.html')),
      dialogues: listed,
    }),
    { durable: false },
  );
  const failed = summary?.failed ?? [];
  const failedHtml = failed.length
    ? `<h3 class="failed">Failed dialogues (${failed.length})</h3>${htmlTable(
        ['id', 'stage', 'reason'],
        failed.map((item) => [item.id, item.stage, item.reason]),
      )}`
    : '';
  const section = `<section id="${escapeHtml(anchor)}">
<h2>${escapeHtml(tables.track)}: ${escapeHtml(dataset.dataset)}</h2>
<p class="note">${escapeHtml(path.relative(output, directory).split(path.sep).join('/'))} · channel 0 = ${dataset.roles[0]}, channel 1 = ${dataset.roles[1]}${dataset.sampleRate === null ? '' : ` · ${dataset.sampleRate} Hz`}${dataset.fullBand === null ? '' : ` · full-band masters (${escapeHtml(dataset.fullBand.directory)}/) at ${dataset.fullBand.sampleRates.join(' or ')} Hz`}</p>
<h3>Statistics (like the paper's Table 3)</h3>
${statisticsTable(tables)}${recognitionHtml}
<h3>Quality (like the paper's Table 2)</h3>
${qualityTable(tables)}
<h3>Turn-taking: measured against generated</h3>
${placed ? `<p class="note">Floor-transfer offsets of speaker changes (next TURN start − floor TURN end; &lt; 0 is an overlap, &lt; −0.40 s a barge-in). Generated: the placements of this dataset (metadata <code>offsetFromFloor</code>); ${measuredNote}.</p>` : '<p class="note">No placed utterances in this dataset (recordings of real speech): nothing generated to compare.</p>'}
<div class="plots">${plotImages.join('\n')}</div>
${ratesNote}
${fidelityHtml}
${evaluableEventsSection(reports, evaluableScope)}
${dimensionsHtml}<p><a href="${escapeHtml(eventsPage)}">Every event of ${escapeHtml(dataset.dataset)}</a>: filter by type and by what the loader keeps, play each one.</p>
<h3>Dialogues</h3>
${htmlTable(['id', 'split', 'seconds', 'TURN_SHIFT', 'TURN_HOLD', 'BC', 'BARGE_IN', 'SHORTPAUSE'], dialogueRows)}
${failedHtml}
</section>`;
  return { content, section, dialoguePages };
}
