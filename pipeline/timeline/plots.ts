/**
 * Histograms of the measured timing distributions as SVG text, rendered headless with vega-lite 5 and
 * vega 5 (`renderer: 'none'`, no canvas, so text widths are vega's estimates and the SVG is the same
 * on every machine). Bins are computed here (fixed width, left-closed `[start, start + width)`), so
 * the plot shows exactly the stored values.
 */
import * as vega from 'vega';
import { compile, type TopLevelSpec } from 'vega-lite';
import { quantileSorted } from 'simple-statistics';
import type { TimingStatistics } from './timing-statistics.ts';

/** One histogram to draw. */
export interface HistogramInput {
  title: string;
  /** Axis title of the values, with the unit. */
  axisTitle: string;
  /** The values (seconds or fractions). */
  values: readonly number[];
  /** Bin width in the values' unit. */
  binWidth: number;
  /**
   * Range shown, `[low, high]`; values outside are counted in the subtitle instead of drawn. Default:
   * the 1 % and 99 % quantiles widened to whole bins.
   */
  range?: [number, number];
}

/** A rendered plot. */
export interface RenderedPlot {
  /** File name, e.g. `floor-transfer-offsets.channel1-to-channel0.svg`. */
  fileName: string;
  svg: string;
}

/**
 * Renders one histogram as SVG text (deterministic for the same input).
 * @throws RangeError when `binWidth` is not positive
 */
export async function renderHistogramSvg(input: HistogramInput): Promise<string> {
  if (!(input.binWidth > 0)) throw new RangeError(`binWidth must be positive, got ${input.binWidth}`);
  const sorted = [...input.values].sort((a, b) => a - b);
  // Bin indices are computed on an integer grid (values × 1000) to avoid floating-point edges.
  const scale = 1000;
  const width = Math.round(input.binWidth * scale);
  const binOf = (value: number) => Math.floor(Math.round(value * scale) / width);
  let low: number;
  let high: number;
  if (input.range !== undefined) [low, high] = [binOf(input.range[0]), binOf(input.range[1])];
  else if (sorted.length > 0) [low, high] = [binOf(quantileSorted(sorted, 0.01)), binOf(quantileSorted(sorted, 0.99))];
  else [low, high] = [0, 0];
  const counts = new Map<number, number>();
  for (let bin = low; bin <= high; bin += 1) counts.set(bin, 0);
  let below = 0;
  let above = 0;
  for (const value of sorted) {
    const bin = binOf(value);
    if (bin < low) below += 1;
    else if (bin > high) above += 1;
    else counts.set(bin, (counts.get(bin) ?? 0) + 1);
  }
  const data = [...counts.entries()].map(([bin, count]) => ({
    start: (bin * width) / scale,
    end: ((bin + 1) * width) / scale,
    count,
  }));
  const outside = below + above > 0 ? `; outside the range shown: ${below} below, ${above} above` : '';
  const spec: TopLevelSpec = {
    $schema: 'https://vega.github.io/schema/vega-lite/v5.json',
    width: 560,
    height: 240,
    title: { text: input.title, subtitle: `n = ${sorted.length}, bin width ${input.binWidth}${outside}` },
    data: { values: data },
    mark: { type: 'bar', color: '#4c78a8' },
    encoding: {
      // `bin: { binned: true }`: the data are bins already (start, end), so the bars stand on y = 0
      x: {
        field: 'start',
        type: 'quantitative',
        bin: { binned: true, step: input.binWidth },
        title: input.axisTitle,
        scale: { zero: false, nice: false },
      },
      x2: { field: 'end' },
      y: { field: 'count', type: 'quantitative', title: 'count' },
    },
    config: { font: 'sans-serif', background: 'white' },
  };
  const view = new vega.View(vega.parse(compile(spec).spec), { renderer: 'none' });
  try {
    return `${await view.toSVG()}\n`;
  } finally {
    view.finalize();
  }
}

/** One histogram per distribution of a statistics file, in a fixed order (file names are stable). */
export async function timingStatisticsPlots(statistics: TimingStatistics): Promise<RenderedPlot[]> {
  const language = statistics.language;
  const plots: { fileName: string; input: HistogramInput }[] = [];
  for (const direction of ['channel0->channel1', 'channel1->channel0'] as const) {
    const name = direction.replace('->', '-to-');
    plots.push({
      fileName: `floor-transfer-offsets.${name}.svg`,
      input: {
        title: `Floor-transfer offsets ${direction} (${language})`,
        axisTitle: 'offset: next TURN start − floor TURN end (s); negative = overlap',
        values: statistics.speakerChange.byDirection[direction].offsets,
        binWidth: 0.05,
        range: [-3, 3],
      },
    });
    plots.push({
      fileName: `within-turn-overlaps.${name}.svg`,
      input: {
        title: `Within-turn overlaps ${direction} (${language})`,
        axisTitle: 'offset: TURN start − floor TURN end (s), TURN inside the floor TURN',
        values: statistics.speakerChange.withinTurnOverlaps[direction].offsets,
        binWidth: 0.25,
        range: [-15, 0],
      },
    });
  }
  plots.push(
    {
      fileName: 'turn-hold-gaps.svg',
      input: {
        title: `TURN_HOLD gaps (${language})`,
        axisTitle: 'gap (s)',
        values: statistics.turnHoldGaps.values,
        binWidth: 0.1,
        range: [0.5, 6],
      },
    },
    {
      fileName: 'short-pauses.svg',
      input: {
        title: `SHORTPAUSE durations (${language})`,
        axisTitle: 'pause (s)',
        values: statistics.shortPauses.values,
        binWidth: 0.01,
        range: [0, 0.5],
      },
    },
    {
      fileName: 'backchannel-durations.svg',
      input: {
        title: `Backchannel durations (${language})`,
        axisTitle: 'duration (s)',
        values: statistics.backchannels.durations.values,
        binWidth: 0.02,
        range: [0, 0.8],
      },
    },
    {
      fileName: 'backchannel-relative-positions.svg',
      input: {
        title: `Backchannel start inside the other speaker's TURN (${language})`,
        axisTitle: 'relative position (0 = TURN start, 1 = TURN end)',
        values: statistics.backchannels.relativePositions.values,
        binWidth: 0.025,
        range: [0, 0.975],
      },
    },
  );
  const rendered: RenderedPlot[] = [];
  for (const plot of plots) rendered.push({ fileName: plot.fileName, svg: await renderHistogramSvg(plot.input) });
  return rendered;
}
