/**
 * The fidelity report (./fidelity.ts builds it): what it holds (per direction, backchannel rates,
 * repeated runs, checks), its thresholds and options, and its text as deterministic JSON and Markdown.
 */
import type { Centiseconds, Channel } from '../model/types.ts';
import { formatJson } from '../storage/readable-json.ts';
import type { ChannelDirection, TimingAtom } from '../model/timing-statistics.ts';

/** The timing of one generated dialogue, as plain arrays (what the build collects per dialogue). */
export interface GeneratedDialogueTiming {
  /** Dialogue id. */
  id: string;
  /** Floor-transfer offsets of the dialogue's speaker changes, in placement order, per direction; integer centiseconds. */
  offsetsCs: Record<ChannelDirection, readonly Centiseconds[]>;
  /** Backchannels placed in the dialogue (by the listener). */
  backchannels: number;
  /** Seconds of the other speaker's TURN speech (the hosts' speech, the backchannel rate's denominator). */
  otherSpeakerSpeechSeconds: number;
}

/** Thresholds of the checks: what a generated timeline must reach against the measured statistics. */
export const FIDELITY_THRESHOLDS = Object.freeze({
  /** Largest KS distance per direction. */
  maximumKolmogorovSmirnovDistance: 0.05,
  /** Largest relative difference of the barge-in fraction and of the backchannel rate. */
  maximumRelativeRateDifference: 0.1,
  /** Length of a run of identical consecutive offsets that two dialogues must not share. */
  sharedRunLength: 5,
});

/** Options of `buildFidelityReport`. */
export interface FidelityOptions {
  /** Channel that speaks the backchannels (default 1, the user in MT-QA, docs/dataset-format.md). */
  backchannelListener: Channel;
  /** Run length for the repeated-sequence count (default 5). */
  sharedRunLength: number;
  /**
   * Whether the build placed backchannels (default true). When false the backchannel rate is still
   * reported, and its check passes with the detail "backchannels not generated".
   */
  backchannelsGenerated: boolean;
  /**
   * The channel that took turns with gaps only (the benchmark profile's system, place-dialogue.ts
   * `gapOnlyChannel`), or null: speaker changes into it are compared with the positive part of the
   * measured offsets (timing-statistics.ts `speakerChangeGaps`), the others with the whole.
   */
  gapOnlyChannel: Channel | null;
}

/** Quantiles in seconds (3 decimals) at 5, 25, 50, 75, 95 %; null for an empty sample. */
export interface Quantiles {
  p05: number | null;
  p25: number | null;
  p50: number | null;
  p75: number | null;
  p95: number | null;
}

/** Side-by-side numbers of one direction. */
export interface DirectionFidelity {
  direction: ChannelDirection;
  /** `pooled` (target = both directions' measured offsets) or `per-direction`. */
  target: 'pooled' | 'per-direction';
  /** `whole` distribution, or its `gaps` (positive part) for the gap-only channel's turns. */
  part: 'whole' | 'gaps';
  measuredCount: number;
  generatedCount: number;
  /** KS distance generated vs the sampler's target (null when either sample is empty). */
  kolmogorovSmirnovDistance: number | null;
  /** The 5 % critical distance for these sample sizes (null when either is empty). */
  criticalDistance05: number | null;
  /** KS distance generated vs this direction's own measured offsets (equals the above when per-direction). */
  distanceToOwnDirection: number | null;
  measuredQuantiles: Quantiles;
  generatedQuantiles: Quantiles;
  measuredOverlapFraction: number;
  generatedOverlapFraction: number;
  measuredBargeInFraction: number;
  generatedBargeInFraction: number;
  /** `|generated − measured| / measured` (null when measured is 0). */
  bargeInRelativeDifference: number | null;
}

/** A pair of dialogues sharing a run of identical offsets. */
export interface SharedRun {
  first: string;
  second: string;
  direction: ChannelDirection;
  /** The shared run, seconds. */
  offsetsSeconds: number[];
}

/** The fidelity report (JSON shape). Times in seconds unless named otherwise. */
export interface FidelityReport {
  statistics: { language: string; corpus: string; command: string; samplerUse: 'pooled' | 'per-direction' };
  dialogues: number;
  directions: DirectionFidelity[];
  bargeIn: { measuredFraction: number; generatedFraction: number; relativeDifference: number | null };
  backchannels: {
    listenerChannel: Channel;
    measuredPerMinute: number;
    generatedPerMinute: number | null;
    generatedCount: number;
    otherSpeakerSpeechSeconds: number;
    relativeDifference: number | null;
  };
  /**
   * Atoms (a value holding more than 2 % of a list, at least 5 times; timing-statistics.ts
   * `findAtoms`): those of the measured lists (recorded in the statistics, spread by the sampler) and
   * those of the generated offsets (each direction and both together).
   */
  atoms: { limitFraction: number; measured: TimingAtom[]; generated: TimingAtom[] };
  sharedRuns: {
    runLength: number;
    /** Dialogue pairs sharing at least one run (either direction). */
    dialoguePairs: number;
    /** Identical runs expected between different dialogues by chance alone, under the fitted distributions. */
    expectedByChance: number;
    /** Up to 10 examples. */
    examples: SharedRun[];
  };
  checks: { name: string; passed: boolean; detail: string }[];
}

/** `value` rounded to `decimals` decimals. */
export const round = (value: number, decimals: number) => Number(value.toFixed(decimals));

/** `|generated − measured| / measured`, 4 decimals; null when `measured` is 0. */
export const relativeDifference = (generated: number, measured: number) =>
  measured === 0 ? null : round(Math.abs(generated - measured) / measured, 4);

/** The report as deterministic JSON text (2-space indentation, trailing newline). */
export function formatFidelityJson(report: FidelityReport): string {
  return `${formatJson(report)}\n`;
}

/** The report as Markdown (deterministic): tables of directions, rates, repeated runs and checks. */
export function formatFidelityMarkdown(report: FidelityReport): string {
  const show = (value: number | null) => (value === null ? 'n/a' : String(value));
  const lines: string[] = [];
  lines.push(`# Turn-taking fidelity (${report.statistics.language})`, '');
  lines.push(
    `${report.dialogues} generated dialogues compared with the measured statistics of ${report.statistics.corpus} ` +
      `(sampler target: ${report.statistics.samplerUse}; measured by \`${report.statistics.command}\`).`,
    '',
  );
  lines.push('## Floor-transfer offsets (seconds)', '');
  lines.push(
    '| direction | compared with | measured n | generated n | KS distance | 5 % critical | KS to own direction | p05 | p25 | p50 | p75 | p95 | overlap | barge-in |',
  );
  lines.push('|---|---|---|---|---|---|---|---|---|---|---|---|---|---|');
  for (const entry of report.directions) {
    const pair = (measured: number | null, generated: number | null) => `${show(measured)} / ${show(generated)}`;
    const m = entry.measuredQuantiles;
    const g = entry.generatedQuantiles;
    lines.push(
      `| ${entry.direction} | ${entry.part === 'gaps' ? 'positive part (gaps)' : 'whole distribution'} | ${entry.measuredCount} | ${entry.generatedCount} | ${show(entry.kolmogorovSmirnovDistance)} | ` +
        `${show(entry.criticalDistance05)} | ${show(entry.distanceToOwnDirection)} | ${pair(m.p05, g.p05)} | ${pair(m.p25, g.p25)} | ` +
        `${pair(m.p50, g.p50)} | ${pair(m.p75, g.p75)} | ${pair(m.p95, g.p95)} | ` +
        `${pair(entry.measuredOverlapFraction, entry.generatedOverlapFraction)} | ${pair(entry.measuredBargeInFraction, entry.generatedBargeInFraction)} |`,
    );
  }
  lines.push('', 'Quantile, overlap and barge-in cells are measured / generated.', '');
  lines.push('## Rates', '');
  lines.push('| | measured | generated | relative difference |', '|---|---|---|---|');
  lines.push(
    `| barge-in fraction of speaker changes | ${report.bargeIn.measuredFraction} | ${report.bargeIn.generatedFraction} | ${show(report.bargeIn.relativeDifference)} |`,
  );
  const backchannels = report.backchannels;
  lines.push(
    `| backchannels per minute of channel ${backchannels.listenerChannel === 1 ? 0 : 1} TURN speech (listener channel ${backchannels.listenerChannel}) | ` +
      `${backchannels.measuredPerMinute} | ${show(backchannels.generatedPerMinute)} | ${show(backchannels.relativeDifference)} |`,
  );
  lines.push(
    '',
    `Generated: ${backchannels.generatedCount} backchannels over ${backchannels.otherSpeakerSpeechSeconds} s of host speech.`,
    '',
  );
  lines.push('## Value atoms', '');
  const atomLine = (atom: TimingAtom) =>
    `- ${atom.list}: ${atom.valueSeconds} s, ${atom.count} times (${(atom.fraction * 100).toFixed(2)} %)`;
  lines.push(
    `A value holding more than ${report.atoms.limitFraction * 100} % of a list (at least 5 times) is an atom.`,
    '',
  );
  lines.push(
    report.atoms.measured.length === 0
      ? 'Measured: none.'
      : 'Measured (spread over the timing resolution by the sampler):',
  );
  for (const atom of report.atoms.measured) lines.push(atomLine(atom));
  lines.push('', report.atoms.generated.length === 0 ? 'Generated: none.' : 'Generated:');
  for (const atom of report.atoms.generated) lines.push(atomLine(atom));
  lines.push('');
  lines.push('## Repeated offset sequences', '');
  lines.push(
    `${report.sharedRuns.dialoguePairs} dialogue pairs share ${report.sharedRuns.runLength} consecutive identical offsets ` +
      `(expected by chance under the fitted distributions: ${report.sharedRuns.expectedByChance}).`,
  );
  for (const example of report.sharedRuns.examples) {
    lines.push(`- ${example.first} and ${example.second}, ${example.direction}: ${example.offsetsSeconds.join(', ')}`);
  }
  lines.push('', '## Checks', '', '| check | passed | detail |', '|---|---|---|');
  for (const check of report.checks) lines.push(`| ${check.name} | ${check.passed ? 'yes' : 'no'} | ${check.detail} |`);
  return `${lines.join('\n')}\n`;
}
