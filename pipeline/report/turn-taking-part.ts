/**
 * The turn-taking part of a dataset's section of the report: the floor-transfer offsets placed in the
 * dataset (from its metadata) against the measured ones the sampler targets (from the shipped timing
 * statistics), as histogram and CDF plots per direction; the barge-in and backchannel rates; and the
 * fidelity tables and checks of `fidelity.json`.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import PQueue from 'p-queue';
import type { ExportDataset } from '../export/export-dataset.ts';
import type { Centiseconds, Channel } from '../model/types.ts';
import { packageFile } from '../storage/package-files.ts';
import { writeAtomic } from '../storage/write-atomic.ts';
import { containedPath } from '../storage/contained-path.ts';
import {
  CHANNEL_DIRECTIONS,
  fitTimingModel,
  loadTimingStatistics,
  samplingDistributions,
  type ChannelDirection,
} from '../timeline/timing-statistics.ts';
import { escapeHtml, fixed, htmlTable, type Cell } from './html.ts';
import { offsetCdfSvg, offsetHistogramSvg, ratesSvg, type OffsetSeries, type RateBar } from './report-plots.ts';
import { readJson, type FidelityJson } from './report-inputs.ts';

const DEFAULT_STATISTICS_DIRECTORY = packageFile('pipeline', 'timeline', 'defaults');
/** Metadata files a dataset's placement offsets are read from at once. */
const METADATA_READ_CONCURRENCY = 16;

/** What {@link generatedOffsets} reads of a dialogue's metadata. */
type OffsetMetadata = {
  timing?: { statistics?: string };
  utterances?: { channel: Channel; offsetFromFloor?: number | null }[];
};

/**
 * The placement offsets of a dataset's speaker changes by direction, from `metadata/{id}.json`
 * (`offsetFromFloor`), centiseconds.
 * @param parsed the metadata of every dialogue in `dataset.dialogues` order as already parsed (the
 *   report's dataset folder holds it); null: each file is read
 */
async function generatedOffsets(
  dataset: ExportDataset,
  parsed: readonly unknown[] | null,
): Promise<{ offsets: Record<ChannelDirection, Centiseconds[]>; statisticsFile: string | null }> {
  const offsets: Record<ChannelDirection, Centiseconds[]> = { 'channel0->channel1': [], 'channel1->channel0': [] };
  let statisticsFile: string | null = null;
  // METADATA_READ_CONCURRENCY files open at a time, not one per dialogue (a dataset of thousands ran out of file descriptors)
  const reads = new PQueue({ concurrency: METADATA_READ_CONCURRENCY });
  const read: (OffsetMetadata | null)[] =
    parsed !== null && parsed.length === dataset.dialogues.length
      ? (parsed as (OffsetMetadata | null)[])
      : await reads.addAll(
          dataset.dialogues.map(
            (dialogue) => () =>
              readJson<OffsetMetadata>(
                containedPath(path.join(dataset.directory, 'metadata'), `${dialogue.id}.json`, {
                  value: dialogue.id,
                  file: path.join(dataset.directory, 'all.jsonl'),
                  field: 'id',
                }),
              ),
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

/** Rates shown for a dataset without its own fidelity.json, with where the measured ones came from. */
interface FallbackRates {
  bargeIn: { measuredFraction: number | null; generatedFraction: number | null };
  backchannels: { measuredPerMinute: number | null; generatedPerMinute: number | null };
  measuredFrom: string | null;
}

/**
 * The rates of a dataset without its own fidelity.json (a barge-in variant): generated barge-in
 * fraction = speaker changes placed with an offset below −0.40 s (the barge-in threshold of docs/events.md) over
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

/** The turn-taking part of a dataset's section: its plot images, notes and fidelity tables (HTML). */
export interface TurnTakingPart {
  /** The dataset has placed utterances (real recordings have none: nothing generated to compare). */
  placed: boolean;
  plotImages: string[];
  ratesNote: string;
  fidelityHtml: string;
  measuredNote: string;
}

/**
 * Writes the dataset's turn-taking plots into `work/plots/` (named by `key`) and returns the part.
 * @throws as readJson (a malformed metadata or fidelity file) and writeAtomic
 */
export async function turnTakingPart(part: {
  dataset: ExportDataset;
  /** The report's folder being written. */
  work: string;
  /** `{language}-{dataset}`, the prefix of the plot files. */
  key: string;
  fidelity: FidelityJson | null;
  /** Every dialogue's metadata as `JSON.parse` read it, in `dataset.dialogues` order; absent: read from the files. */
  metadata?: readonly unknown[];
}): Promise<TurnTakingPart> {
  const { dataset, work, key, fidelity } = part;
  // turn-taking: measured against generated offsets, per direction
  const generated = await generatedOffsets(dataset, part.metadata ?? null);
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
        { durable: false },
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
    await writeAtomic(path.join(work, file), await ratesSvg('Barge-in and backchannel rates', bars), {
      durable: false,
    });
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
  return { placed, plotImages, ratesNote, fidelityHtml, measuredNote };
}
