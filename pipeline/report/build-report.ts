/**
 * The HTML report of a build: `{build}/report/index.html` plus one page per dialogue, static files
 * that work from `file://` and offline (no CDN, no web fonts; charts are SVG files compiled at report
 * time with vega-lite; the audio is the datasets' own WAV files, referenced by relative paths).
 *
 * ```
 * report/index.html                             per dataset: statistics (like the paper's Table 3),
 *                                               quality (Table 2), turn-taking fidelity (offset
 *                                               histograms and CDFs per direction, barge-in and
 *                                               backchannel rates), evaluable events, dialogues
 * report/dialogues/{lang}/{dataset}/{id}.html   two-lane waveform, events, words, audio (dialogue-page.ts)
 * report/events/{lang}/{dataset}.html           every event of the dataset, filterable, playable (event-list-page.ts)
 * report/plots/*.svg, report/assets/*           charts; style sheet and the dialogue page's script
 * ```
 *
 * Sources, per dataset folder: `all.jsonl`, `metadata/`, `txt_align/`, `audio/` (export-dataset.ts),
 * `tables.json`'s content (rebuilt with quality/tables.ts `buildDatasetTables`, so an unscored
 * dataset still gets its statistics), `fidelity.json`, `summary.json` (failed dialogues); the
 * measured offsets come from the timing statistics named in the metadata (`timing.statistics`) when
 * that file is one of the shipped defaults (pipeline/timeline/defaults/); the evaluable events are
 * computed with pipeline/events/evaluable-events.ts under the loader settings scripts/pipe.sh uses.
 * Deterministic: the same build gives the same bytes (no timestamps). Nothing half-written: the
 * report is written into `report.partial/` and renamed over `report/`.
 */
import { existsSync } from 'node:fs';
import { copyFile, mkdir, readdir, readFile, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import {
  DROP_REASON_DESCRIPTIONS,
  DROP_REASONS,
  EVALUATION_EVENT_TYPES,
  evaluableEventsReport,
  type EvaluableEventsReport,
} from '../events/evaluable-events.ts';
import { readExportDataset, type ExportDataset, type ExportDialogue } from '../export/export-dataset.ts';
import PQueue from 'p-queue';
import type { Centiseconds, Channel } from '../model/types.ts';
import { readDatasetFolder, type DatasetFolder } from '../quality/dataset-files.ts';
import { buildDatasetTables, type DatasetTables } from '../quality/tables.ts';
import { speechRateUnitLabel } from '../quality/speech-rate.ts';
import { packageFile } from '../storage/package-files.ts';
import { writeAtomic } from '../storage/write-atomic.ts';
import {
  CHANNEL_DIRECTIONS,
  fitTimingModel,
  loadTimingStatistics,
  samplingDistributions,
  type ChannelDirection,
} from '../timeline/timing-statistics.ts';
import {
  dialoguePagePath,
  dialoguePagePlan,
  eventListPagePath,
  renderDialoguePage,
  type PreRenderedDialoguePages,
} from './pre-rendered-pages.ts';
import { escapeHtml, fixed, htmlPage, htmlTable, type Cell } from './html.ts';
import { offsetCdfSvg, offsetHistogramSvg, ratesSvg, type OffsetSeries, type RateBar } from './report-plots.ts';
import { eventListPageHtml } from './event-list-page.ts';
import { benchmarkSplitName, datasetLoaderSettings } from './loader-verdicts.ts';

/** Folder of the report inside the build output. */
export const REPORT_DIRECTORY = 'report';
const ASSETS_SOURCE = packageFile('pipeline', 'report', 'assets');
const DEFAULT_STATISTICS_DIRECTORY = packageFile('pipeline', 'timeline', 'defaults');

/** Options of {@link writeBuildReport}. */
export interface BuildReportOptions {
  /** Most dialogue pages per dataset (the first by id); default: every dialogue. */
  dialoguePagesPerDataset?: number;
  /** Dialogue pages the build made while it ran: each is used when made from the same inputs, else made again. */
  preRendered?: PreRenderedDialoguePages;
}

/** What {@link writeBuildReport} wrote. */
export interface BuildReportResult {
  /** Absolute path of `report/index.html`. */
  indexPath: string;
  datasets: number;
  dialoguePages: number;
}

/** The fields of `fidelity.json` the report shows. */
interface FidelityJson {
  statistics?: { corpus?: string; command?: string };
  directions?: {
    direction: ChannelDirection;
    target?: string;
    /** `gaps`: compared with the positive part only (the benchmark profile's system answers). */
    part?: 'whole' | 'gaps';
    measuredCount?: number;
    generatedCount?: number;
    kolmogorovSmirnovDistance?: number | null;
    criticalDistance05?: number | null;
    measuredOverlapFraction?: number | null;
    generatedOverlapFraction?: number | null;
    measuredBargeInFraction?: number | null;
    generatedBargeInFraction?: number | null;
  }[];
  bargeIn?: { measuredFraction?: number | null; generatedFraction?: number | null };
  backchannels?: { measuredPerMinute?: number | null; generatedPerMinute?: number | null };
  checks?: { name: string; passed: boolean; detail: string }[];
}

async function readJson<T>(file: string): Promise<T | null> {
  const text = await readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return null;
    throw error;
  });
  if (text === null) return null;
  try {
    return JSON.parse(text) as T;
  } catch (error) {
    throw new Error(`${file}: not valid JSON (${(error as Error).message})`);
  }
}

/** Dataset folders of a build: every `data/{lang}/{domain}/{dataset}/manifest.json`, sorted. */
export async function buildDatasetDirectories(outputDirectory: string): Promise<string[]> {
  const data = path.join(outputDirectory, 'data');
  const found: string[] = [];
  const list = async (directory: string) =>
    (await readdir(directory, { withFileTypes: true }).catch(() => []))
      .filter((entry) => entry.isDirectory() && !entry.name.endsWith('.partial'))
      .map((entry) => entry.name)
      .sort();
  for (const language of await list(data)) {
    for (const domain of await list(path.join(data, language))) {
      for (const dataset of await list(path.join(data, language, domain))) {
        const directory = path.join(data, language, domain, dataset);
        if (existsSync(path.join(directory, 'manifest.json'))) found.push(directory);
      }
    }
  }
  return found;
}

/** The placement offsets of a dataset's speaker changes by direction, from `metadata/{id}.json` (`offsetFromFloor`), centiseconds. */
async function generatedOffsets(
  dataset: ExportDataset,
): Promise<{ offsets: Record<ChannelDirection, Centiseconds[]>; statisticsFile: string | null }> {
  const offsets: Record<ChannelDirection, Centiseconds[]> = { 'channel0->channel1': [], 'channel1->channel0': [] };
  let statisticsFile: string | null = null;
  type Metadata = {
    timing?: { statistics?: string };
    utterances?: { channel: Channel; offsetFromFloor?: number | null }[];
  };
  // METADATA_READ_CONCURRENCY files open at a time, not one per dialogue (a dataset of thousands ran out of file descriptors)
  const reads = new PQueue({ concurrency: METADATA_READ_CONCURRENCY });
  const read = await reads.addAll(
    dataset.dialogues.map(
      (dialogue) => () => readJson<Metadata>(path.join(dataset.directory, 'metadata', `${dialogue.id}.json`)),
    ),
  );
  for (const found of read) {
    const metadata = found ?? {};
    statisticsFile ??= metadata.timing?.statistics ?? null;
    const utterances = metadata.utterances ?? [];
    for (let index = 1; index < utterances.length; index++) {
      const previous = utterances[index - 1]!;
      const current = utterances[index]!;
      if (previous.channel === current.channel || typeof current.offsetFromFloor !== 'number') continue;
      offsets[`channel${previous.channel}->channel${current.channel}` as ChannelDirection].push(
        Math.round(current.offsetFromFloor * 100),
      );
    }
  }
  return { offsets, statisticsFile };
}

/**
 * The sampler's target offsets per direction from a shipped statistics file, or null when it is not
 * one: the whole distribution, or its positive part (gaps) for a direction fidelity.json compared that
 * way (as pipeline/timeline/fidelity.ts does for the benchmark profile's gap-only channel).
 */
async function measuredOffsets(
  statisticsFile: string | null,
  gapDirections: ReadonlySet<ChannelDirection>,
): Promise<Record<ChannelDirection, readonly Centiseconds[]> | null> {
  if (statisticsFile === null) return null;
  const file = path.join(DEFAULT_STATISTICS_DIRECTORY, path.basename(statisticsFile));
  if (!existsSync(file)) return null;
  const statistics = await loadTimingStatistics(file);
  const distributions = samplingDistributions(statistics);
  const model = fitTimingModel(statistics);
  const of = (direction: ChannelDirection) =>
    gapDirections.has(direction)
      ? (model.speakerChangeGaps[direction]?.values ?? [])
      : distributions.speakerChange[direction];
  return { 'channel0->channel1': of('channel0->channel1'), 'channel1->channel0': of('channel1->channel0') };
}

function qualityTable(tables: DatasetTables): string {
  if (!tables.scored)
    return '<p class="note">Not scored: the build ran without quality scoring (run <code>duplexsynth score</code> on the dataset folder).</p>';
  const unit = speechRateUnitLabel(tables.language);
  const rows: Cell[][] = tables.quality.map((row) => {
    const quality = row.quality;
    if (quality === null) return [row.split, null, 'not scored', null, null, null, null, null, null, null];
    return [
      row.split,
      quality.dialogues,
      fixed(quality.dnsmos?.ovrl, 2),
      fixed(quality.dnsmos?.sig, 2),
      fixed(quality.dnsmos?.bak, 2),
      fixed(quality.dnsmos?.p808, 2),
      quality.cometKiwi === null ? (tables.cometKiwi === null ? 'n/a' : 'not computed') : fixed(quality.cometKiwi, 3),
      fixed(quality.meanChannelLoudnessLufs, 1),
      fixed(quality.speechRate, 2),
      quality.roleLabelDisagreements,
    ];
  });
  return htmlTable(
    [
      'split',
      'dialogues',
      'DNSMOS OVRL',
      'SIG',
      'BAK',
      'P808',
      'COMETKiwi',
      'loudness (LUFS)',
      `speech rate (${unit})`,
      'role/label disagreements',
    ],
    rows,
  );
}

function statisticsTable(tables: DatasetTables): string {
  return htmlTable(
    ['split', 'dialogues', 'hours', 'mean s', 'TURN_SHIFT', 'TURN_HOLD', 'BC', 'BARGE_IN'],
    tables.statistics.map((row) => [
      row.split,
      row.dialogues,
      row.hours.toFixed(2),
      row.meanSeconds.toFixed(1),
      row.events.TURN_SHIFT,
      row.events.TURN_HOLD,
      row.events.BC,
      row.events.BARGE_IN,
    ]),
  );
}

function evaluableEventsSection(reports: readonly EvaluableEventsReport[], scope: string): string {
  const used = DROP_REASONS.filter((reason) =>
    reports.some((report) => EVALUATION_EVENT_TYPES.some((type) => (report.byType[type].dropped[reason] ?? 0) > 0)),
  );
  const tables = reports.map((report) => {
    const rows = EVALUATION_EVENT_TYPES.map((type) => {
      const counts = report.byType[type];
      return [type, counts.inFile, counts.samples, ...used.map((reason) => counts.dropped[reason] ?? 0)] as Cell[];
    });
    const drops = report.dialoguesWithDrops.length
      ? `<p class="note">Dropped although this setting evaluates them: ${report.dialoguesWithDrops.length} (${report.dialoguesWithDrops
          .slice(0, 10)
          .map((drop) => `${escapeHtml(drop.id)} ${drop.event} at ${(drop.start / 100).toFixed(2)} s: ${drop.reason}`)
          .join('; ')}${report.dialoguesWithDrops.length > 10 ? '; …' : ''})</p>`
      : '';
    return `<h4>${escapeHtml(report.setting)} (${report.dialogues} dialogues)</h4>\n${htmlTable(['event', 'in file', 'samples', ...used.map((reason) => `dropped: ${reason}`)], rows)}${drops}`;
  });
  const reasons = used.length
    ? `<ul class="note">${used.map((reason) => `<li>${reason}: ${escapeHtml(DROP_REASON_DESCRIPTIONS[reason])}</li>`).join('')}</ul>`
    : '';
  return `<h3>Evaluable events (${escapeHtml(scope)})</h3>
<p class="note">What the benchmark's loader (M3-DuplexBench <code>build_event_samples</code>, called as <code>scripts/pipe.sh</code> calls it) turns into samples, and why it drops the others (pipeline/events/evaluable-events.ts).</p>
${tables.join('\n')}
${reasons}`;
}

/** Rates shown for a dataset without its own fidelity.json, with where the measured ones came from. */
interface FallbackRates {
  bargeIn: { measuredFraction: number | null; generatedFraction: number | null };
  backchannels: { measuredPerMinute: number | null; generatedPerMinute: number | null };
  measuredFrom: string | null;
}

/**
 * The rates of a dataset without its own fidelity.json (a barge-in variant): generated barge-in
 * fraction = speaker changes placed with an offset below −0.40 s (events.md's barge-in threshold) over
 * all speaker changes; generated backchannels per minute = BC events of the user channel over the
 * minutes of the system channel's TURN events; measured ones from the base dataset's fidelity.json
 * (the folder without the `_bargein` suffix), when there is one.
 */
async function ratesWithoutFidelity(
  dataset: ExportDataset,
  offsets: Record<ChannelDirection, Centiseconds[]>,
): Promise<FallbackRates> {
  const changes = CHANNEL_DIRECTIONS.flatMap((direction) => offsets[direction]);
  const generatedFraction = changes.length ? changes.filter((offset) => offset < -40).length / changes.length : null;
  const listener: Channel = dataset.channels?.user ?? 1;
  const host: Channel = listener === 0 ? 1 : 0;
  let backchannels = 0;
  let hostCs = 0;
  for (const dialogue of dataset.dialogues) {
    backchannels += dialogue.events[listener].filter((event) => event.event === 'BC').length;
    hostCs += dialogue.events[host]
      .filter((event) => event.event === 'TURN')
      .reduce((sum, event) => sum + Math.max(0, event.end - event.start), 0);
  }
  const generatedPerMinute = hostCs > 0 ? backchannels / (hostCs / 6000) : null;
  const base = dataset.directory.replace(/_bargein$/, '');
  const baseFidelity =
    base !== dataset.directory ? await readJson<FidelityJson>(path.join(base, 'fidelity.json')) : null;
  return {
    bargeIn: { measuredFraction: baseFidelity?.bargeIn?.measuredFraction ?? null, generatedFraction },
    backchannels: { measuredPerMinute: baseFidelity?.backchannels?.measuredPerMinute ?? null, generatedPerMinute },
    measuredFrom: baseFidelity ? `${path.basename(base)}/fidelity.json` : null,
  };
}

/**
 * Writes the report of the build in `outputDirectory` (module comment) and returns where.
 * @throws Error naming the file when a dataset folder cannot be read (DatasetReadError), a JSON file
 *   is malformed, or a WAV cannot be decoded; the previous report (if any) is then left as it was
 */
export async function writeBuildReport(
  outputDirectory: string,
  options: BuildReportOptions = {},
): Promise<BuildReportResult> {
  const output = path.resolve(outputDirectory);
  const finalDirectory = path.join(output, REPORT_DIRECTORY);
  const work = `${finalDirectory}.partial`;
  await rm(work, { recursive: true, force: true });
  await mkdir(work, { recursive: true });
  try {
    const result = await writeReportInto(output, work, options);
    await rm(finalDirectory, { recursive: true, force: true });
    await rename(work, finalDirectory);
    return { ...result, indexPath: path.join(finalDirectory, 'index.html') };
  } catch (error) {
    await rm(work, { recursive: true, force: true });
    throw error;
  }
}

async function writeReportInto(
  output: string,
  work: string,
  options: BuildReportOptions,
): Promise<Omit<BuildReportResult, 'indexPath'>> {
  for (const asset of ['report.css', 'dialogue.js']) {
    await mkdir(path.join(work, 'assets'), { recursive: true });
    await copyFile(path.join(ASSETS_SOURCE, asset), path.join(work, 'assets', asset));
  }
  const build = await readJson<{ name?: string; seed?: number }>(path.join(output, 'summary.json'));
  const directories = await buildDatasetDirectories(output);
  const folders = await allSettledInOrder(directories.map((directory) => readDatasetFolder(directory)));
  refuseSharedPageNames(folders);
  // every dataset at once, its dialogue pages REPORT_PAGE_CONCURRENCY at a time across datasets: one
  // page's file reads and writes wait while another's HTML is built (pages in order: 2.2-2.5 s for a
  // 20-dialogue build's report, a fifth of it waiting on the file system)
  const pages = new PQueue({ concurrency: REPORT_PAGE_CONCURRENCY });
  const parts = await allSettledInOrder(folders.map((folder) => datasetSection(output, work, folder, options, pages)));
  const sections = parts.map((part) => part.section);
  const contents = parts.map((part) => part.content);
  const dialoguePages = parts.reduce((sum, part) => sum + part.dialoguePages, 0);
  const title = `duplexsynth build ${build?.name ? `"${build.name}"` : path.basename(output)}`;
  const body = `<h1>${escapeHtml(title)}</h1>
<p class="note">${build?.seed !== undefined ? `seed ${build.seed} · ` : ''}${directories.length} datasets · ${dialoguePages} dialogue pages · static report: open this file in a browser (works offline)</p>
<ul>${contents.join('')}</ul>
${sections.join('\n')}`;
  await writeAtomic(path.join(work, 'index.html'), htmlPage(title, 'assets', body));
  return { datasets: directories.length, dialoguePages };
}

/**
 * The report names a dataset's pages, charts and section by its language and dataset name
 * (`dialogues/{lang}/{dataset}/`, `events/{lang}/{dataset}.html`): two folders that share both (the
 * same name in two domains, `data/en/task/X` and `data/en/chat/X`) would write over each other's.
 * @throws Error naming both folders
 */
function refuseSharedPageNames(folders: readonly DatasetFolder[]): void {
  const seen = new Map<string, string>();
  for (const { directory, language, dataset } of folders) {
    const name = `${language}/${dataset}`;
    const other = seen.get(name);
    if (other !== undefined) {
      throw new Error(
        `${other} and ${directory}: two datasets named ${dataset} in ${language}; the report names pages by language and dataset, so rename one (e.g. duplexsynth chat --dataset)`,
      );
    }
    seen.set(name, directory);
  }
}

/** Dialogue pages {@link writeBuildReport} builds at once (reading their WAV files, writing their HTML). */
const REPORT_PAGE_CONCURRENCY = 4;
/** Metadata files a dataset's placement offsets are read from at once. */
const METADATA_READ_CONCURRENCY = 16;

/**
 * The results of `promises` in order, once every one has settled (so nothing still writes into the
 * report's folder when it is removed after a failure).
 * @throws the first rejection, in order
 */
async function allSettledInOrder<T>(promises: readonly Promise<T>[]): Promise<T[]> {
  const settled = await Promise.allSettled(promises);
  const failure = settled.find((result) => result.status === 'rejected');
  if (failure) throw failure.reason;
  return settled.map((result) => (result as PromiseFulfilledResult<T>).value);
}

/** One dataset's part of the report: its entry in the contents, its section of index.html, and how many dialogue pages it wrote. */
interface DatasetSection {
  content: string;
  section: string;
  dialoguePages: number;
}

/** Writes one dataset's plots, dialogue pages (through `pages`) and event list into `work`, and returns its part of index.html. */
async function datasetSection(
  output: string,
  work: string,
  folder: DatasetFolder,
  options: BuildReportOptions,
  pages: PQueue,
): Promise<DatasetSection> {
  const { directory } = folder;
  const dataset = await readExportDataset(folder);
  const key = `${dataset.language}-${dataset.dataset}`;
  const anchor = `dataset-${key}`;
  const content = `<li><a href="#${escapeHtml(anchor)}">${escapeHtml(dataset.dataset)} (${dataset.language})</a></li>`;
  const tables = await buildDatasetTables(folder);
  const summary = await readJson<{
    failed?: { id: string; stage: string; reason: string }[];
    evaluableEvents?: EvaluableEventsReport[];
  }>(path.join(directory, 'summary.json'));
  const fidelity = await readJson<FidelityJson>(path.join(directory, 'fidelity.json'));

  // turn-taking: measured against generated offsets, per direction
  const generated = await generatedOffsets(dataset);
  const gapDirections = new Set(
    (fidelity?.directions ?? []).filter((entry) => entry.part === 'gaps').map((entry) => entry.direction),
  );
  const measured = await measuredOffsets(generated.statisticsFile, gapDirections);
  const plotImages: string[] = [];
  // real recordings (chat data) have no placements: nothing generated to compare
  const placed = CHANNEL_DIRECTIONS.some((direction) => generated.offsets[direction].length > 0);
  for (const direction of placed ? CHANNEL_DIRECTIONS : []) {
    const series: OffsetSeries[] = [
      ...(measured ? [{ series: 'measured' as const, offsetsCs: measured[direction] }] : []),
      { series: 'generated' as const, offsetsCs: generated.offsets[direction] },
    ];
    const name = direction.replace('->', '-to-');
    const [from, to] = (direction.match(/\d/g) ?? []).map(Number);
    const roleOf = (channel: number | undefined) => (channel === 0 || channel === 1 ? dataset.roles[channel] : '?');
    const label = `${direction} (${roleOf(from)} → ${roleOf(to)}${gapDirections.has(direction) ? '; measured: gaps only' : ''})`;
    for (const [kind, render] of [
      ['histogram', offsetHistogramSvg],
      ['cdf', offsetCdfSvg],
    ] as const) {
      const file = `plots/${key}-offsets-${kind}-${name}.svg`;
      await writeAtomic(
        path.join(work, file),
        await render(`Floor-transfer offsets ${label}, ${kind === 'cdf' ? 'CDF' : 'histogram'}`, series),
      );
      plotImages.push(
        `<img src="${escapeHtml(file)}" alt="${escapeHtml(`${kind} of floor-transfer offsets ${direction}`)}">`,
      );
    }
  }
  const bars: RateBar[] = [];
  // a dataset without its own fidelity.json (a barge-in variant): its rates from its placements and
  // events, the measured ones from its base dataset's fidelity.json (the same timing statistics)
  const fallback = !fidelity && placed ? await ratesWithoutFidelity(dataset, generated.offsets) : null;
  const rates = fidelity ?? fallback;
  const ratesNote = fallback
    ? `<p class="note">No fidelity.json in this folder (a barge-in variant): the rates plot shows generated rates from this dataset's placements (speaker changes with an offset &lt; −0.40 s) and events (BC per minute of the other channel's TURN speech); measured ones from ${fallback.measuredFrom ? `<code>${escapeHtml(fallback.measuredFrom)}</code>` : 'nowhere (no base dataset folder beside it)'}.</p>`
    : '';
  if (rates?.bargeIn) {
    for (const [series, value] of [
      ['measured', rates.bargeIn.measuredFraction],
      ['generated', rates.bargeIn.generatedFraction],
    ] as const) {
      if (typeof value === 'number') bars.push({ measure: 'barge-in fraction of speaker changes', series, value });
    }
  }
  if (rates?.backchannels) {
    for (const [series, value] of [
      ['measured', rates.backchannels.measuredPerMinute],
      ['generated', rates.backchannels.generatedPerMinute],
    ] as const) {
      if (typeof value === 'number') bars.push({ measure: 'backchannels per minute', series, value });
    }
  }
  if (bars.length > 0) {
    const file = `plots/${key}-rates.svg`;
    await writeAtomic(path.join(work, file), await ratesSvg('Barge-in and backchannel rates', bars));
    plotImages.push(`<img src="${escapeHtml(file)}" alt="barge-in and backchannel rates, measured and generated">`);
  }
  const fidelityRows: Cell[][] = (fidelity?.directions ?? []).map((entry) => [
    entry.direction,
    entry.part === 'gaps' ? 'gaps (positive part)' : 'whole distribution',
    entry.measuredCount ?? null,
    entry.generatedCount ?? null,
    fixed(entry.kolmogorovSmirnovDistance, 3),
    fixed(entry.criticalDistance05, 3),
    fixed(entry.measuredOverlapFraction, 3),
    fixed(entry.generatedOverlapFraction, 3),
    fixed(entry.measuredBargeInFraction, 3),
    fixed(entry.generatedBargeInFraction, 3),
  ]);
  const fidelityHtml = fidelity
    ? `${htmlTable(['direction', 'measured', 'measured n', 'generated n', 'KS distance', 'KS 5 % critical', 'overlap (measured)', 'overlap (generated)', 'barge-in (measured)', 'barge-in (generated)'], fidelityRows)}
${htmlTable(
  ['rate', 'measured', 'generated'],
  [
    [
      'barge-in fraction of speaker changes',
      fixed(fidelity.bargeIn?.measuredFraction, 3),
      fixed(fidelity.bargeIn?.generatedFraction, 3),
    ],
    [
      'backchannels per minute of the other speaker’s speech',
      fixed(fidelity.backchannels?.measuredPerMinute, 2),
      fixed(fidelity.backchannels?.generatedPerMinute, 2),
    ],
  ],
)}
<ul class="note">${(fidelity.checks ?? []).map((check) => `<li>${check.passed ? '✓' : '✗'} ${escapeHtml(check.name)}: ${escapeHtml(check.detail)}</li>`).join('')}</ul>`
    : '<p class="note">No fidelity.json in this dataset folder.</p>';
  // fidelity.json counts the measured offsets the build sampled from; a different count now means the
  // shipped statistics file changed since the build
  const changed = CHANNEL_DIRECTIONS.filter((direction) => {
    const then = fidelity?.directions?.find((entry) => entry.direction === direction)?.measuredCount;
    return measured !== null && then !== undefined && then !== measured[direction].length;
  });
  const measuredNote = measured
    ? `measured: the sampler's target offsets from <code>${escapeHtml(path.basename(generated.statisticsFile!))}</code> as shipped now (${escapeHtml(fidelity?.statistics?.corpus ?? 'shipped timing statistics')})${
        changed.length
          ? `; <strong>that file changed since the build</strong> (measured n in fidelity.json: ${changed.map((direction) => fidelity?.directions?.find((entry) => entry.direction === direction)?.measuredCount).join(', ')}; now: ${changed.map((direction) => measured[direction].length).join(', ')}), so the table below, from the build, is the reference`
          : ''
      }`
    : `measured: not shown (the statistics file <code>${escapeHtml(generated.statisticsFile ?? 'unknown')}</code> is not one of the shipped defaults)`;

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
    const target = path.join(work, page);
    // made while the build ran, from exactly these inputs (pre-rendered-pages.ts), or made now
    if (
      options.preRendered &&
      (await options.preRendered.take(page, dataset, dialogue, links, audioSha256.get(dialogue.id) ?? null, target))
    )
      return;
    await writeAtomic(target, await renderDialoguePage(dataset, dialogue, links));
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
    path.join(work, eventsPage),
    eventListPageHtml(dataset, {
      assets: fromEventsPage(path.join(output, 'report', 'assets')),
      index: fromEventsPage(path.join(output, 'report', 'index.html')),
      dialogues: listed,
    }),
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
${statisticsTable(tables)}
<h3>Quality (like the paper's Table 2)</h3>
${qualityTable(tables)}
<h3>Turn-taking: measured against generated</h3>
${placed ? `<p class="note">Floor-transfer offsets of speaker changes (next TURN start − floor TURN end; &lt; 0 is an overlap, &lt; −0.40 s a barge-in). Generated: the placements of this dataset (metadata <code>offsetFromFloor</code>); ${measuredNote}.</p>` : '<p class="note">No placed utterances in this dataset (recordings of real speech): nothing generated to compare.</p>'}
<div class="plots">${plotImages.join('\n')}</div>
${ratesNote}
${fidelityHtml}
${evaluableEventsSection(reports, evaluableScope)}
<p><a href="${escapeHtml(eventsPage)}">Every event of ${escapeHtml(dataset.dataset)}</a>: filter by type and by what the loader keeps, play each one.</p>
<h3>Dialogues</h3>
${htmlTable(['id', 'split', 'seconds', 'TURN_SHIFT', 'TURN_HOLD', 'BC', 'BARGE_IN', 'SHORTPAUSE'], dialogueRows)}
${failedHtml}
</section>`;
  return { content, section, dialoguePages };
}
