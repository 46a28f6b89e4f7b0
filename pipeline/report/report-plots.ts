/**
 * The report's charts as SVG text, compiled at report time with vega-lite 5 and rendered by vega 5
 * headless (`renderer: 'none'`, as pipeline/timeline/plots.ts does), so the page needs no script and
 * no network and the SVG is the same on every machine:
 * - floor-transfer offsets per direction: histogram (share of offsets per 0.1 s bin) and empirical
 *   CDF, measured (the sampler's target distribution) against generated (the build's placements);
 * - barge-in fraction and backchannels per minute, measured against generated.
 * Offsets are integer centiseconds; the charts show seconds in [-3, 3] (values outside are counted in
 * the subtitle).
 */
import * as vega from 'vega';
import { compile, type TopLevelSpec } from 'vega-lite';

/** Range of offsets shown, centiseconds. */
const RANGE_CS: [number, number] = [-300, 300];
/** Histogram bin width, centiseconds. */
const BIN_CS = 10;
const SERIES_COLORS = { domain: ['measured', 'generated'], range: ['#9e9e9e', '#e45756'] };

/** Renders a vega-lite spec to SVG text (deterministic for the same spec). */
export async function renderVegaLiteSvg(spec: TopLevelSpec): Promise<string> {
  const view = new vega.View(vega.parse(compile(spec).spec), { renderer: 'none' });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}

/** A named series of offsets, integer centiseconds. */
export interface OffsetSeries {
  series: 'measured' | 'generated';
  offsetsCs: readonly number[];
}

function outsideNote(series: readonly OffsetSeries[]): string {
  const parts = series.map((entry) => {
    const outside = entry.offsetsCs.filter((offset) => offset < RANGE_CS[0] || offset > RANGE_CS[1]).length;
    return `${entry.series} n = ${entry.offsetsCs.length}${outside ? ` (${outside} outside ±3 s)` : ''}`;
  });
  return parts.join(', ');
}

/**
 * Histogram of floor-transfer offsets, one bar series per entry, each as the share of its offsets per
 * 0.1 s bin (so a 4,000-offset measurement and a 50-offset build compare), bins `[start, start + 0.1)`.
 */
export async function offsetHistogramSvg(title: string, series: readonly OffsetSeries[]): Promise<string> {
  const rows: { series: string; start: number; end: number; share: number }[] = [];
  for (const entry of series) {
    const counts = new Map<number, number>();
    for (const offset of entry.offsetsCs) {
      if (offset < RANGE_CS[0] || offset > RANGE_CS[1]) continue;
      const bin = Math.floor(offset / BIN_CS);
      counts.set(bin, (counts.get(bin) ?? 0) + 1);
    }
    for (let bin = RANGE_CS[0] / BIN_CS; bin < RANGE_CS[1] / BIN_CS; bin += 1) {
      const share = entry.offsetsCs.length > 0 ? (counts.get(bin) ?? 0) / entry.offsetsCs.length : 0;
      rows.push({ series: entry.series, start: (bin * BIN_CS) / 100, end: ((bin + 1) * BIN_CS) / 100, share });
    }
  }
  return renderVegaLiteSvg({
    $schema: 'https://vega.github.io/schema/vega-lite/v5.json',
    width: 420,
    height: 180,
    title: { text: title, subtitle: outsideNote(series) },
    data: { values: rows },
    mark: { type: 'bar', opacity: 0.6 },
    encoding: {
      x: {
        field: 'start',
        type: 'quantitative',
        bin: { binned: true, step: BIN_CS / 100 },
        title: 'offset (s): next TURN start − floor TURN end; < 0 = overlap',
        scale: { domain: [RANGE_CS[0] / 100, RANGE_CS[1] / 100], nice: false },
      },
      x2: { field: 'end' },
      y: { field: 'share', type: 'quantitative', title: 'share of offsets', stack: null },
      color: { field: 'series', type: 'nominal', scale: SERIES_COLORS, title: null },
    },
    config: { font: 'sans-serif', background: 'white' },
  });
}

/** Empirical CDF of each series on the centisecond grid of [-3, 3] s (a step line per series). */
export async function offsetCdfSvg(title: string, series: readonly OffsetSeries[]): Promise<string> {
  const rows: { series: string; offset: number; cumulative: number }[] = [];
  for (const entry of series) {
    const sorted = [...entry.offsetsCs].sort((a, b) => a - b);
    if (sorted.length === 0) continue;
    let index = 0;
    for (let offset = RANGE_CS[0]; offset <= RANGE_CS[1]; offset += 1) {
      while (index < sorted.length && sorted[index]! <= offset) index += 1;
      rows.push({ series: entry.series, offset: offset / 100, cumulative: index / sorted.length });
    }
  }
  return renderVegaLiteSvg({
    $schema: 'https://vega.github.io/schema/vega-lite/v5.json',
    width: 420,
    height: 180,
    title: { text: title, subtitle: outsideNote(series) },
    data: { values: rows },
    mark: { type: 'line', interpolate: 'step-after' },
    encoding: {
      x: {
        field: 'offset',
        type: 'quantitative',
        title: 'offset (s)',
        scale: { domain: [RANGE_CS[0] / 100, RANGE_CS[1] / 100], nice: false },
      },
      y: { field: 'cumulative', type: 'quantitative', title: 'share ≤ offset', scale: { domain: [0, 1] } },
      color: { field: 'series', type: 'nominal', scale: SERIES_COLORS, title: null },
    },
    config: { font: 'sans-serif', background: 'white' },
  });
}

/** One bar of the rates chart. */
export interface RateBar {
  /** e.g. `barge-in fraction`. */
  measure: string;
  series: 'measured' | 'generated';
  value: number;
}

/** Measured against generated, one small panel per measure (each with its own scale). */
export async function ratesSvg(title: string, bars: readonly RateBar[]): Promise<string> {
  return renderVegaLiteSvg({
    $schema: 'https://vega.github.io/schema/vega-lite/v5.json',
    title,
    data: { values: bars.map((bar) => ({ ...bar })) },
    facet: { column: { field: 'measure', type: 'nominal', title: null } },
    spec: {
      width: 160,
      height: 140,
      mark: 'bar',
      encoding: {
        x: { field: 'series', type: 'nominal', title: null, sort: ['measured', 'generated'] },
        y: { field: 'value', type: 'quantitative', title: null },
        color: { field: 'series', type: 'nominal', scale: SERIES_COLORS, legend: null },
      },
    },
    resolve: { scale: { y: 'independent' } },
    config: { font: 'sans-serif', background: 'white' },
  });
}
