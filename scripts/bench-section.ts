/**
 * What a section of `npm run bench` is given and what it reports: its Markdown (the return value of
 * the section), lines for the summary at the end of the report, and the figures that
 * docs/performance.md lists (scripts/bench-performance-page.ts).
 */

/** The bench command's options (scripts/cli.ts, command `bench`). */
export interface BenchOptions {
  /** TopiOCQA JSON; default the shared dev set. */
  corpus?: string;
  /** Dialogues of the build sections. */
  limit: number;
  /** The two build sizes of the `machines` section's flat-at-scale builds, dialogues; default 100 and 1,000. */
  scaleDialogues?: number[];
}

/** One row of docs/performance.md: a figure the section measured and, where it has one, its ratio to its baseline. */
export interface BenchFigure {
  /** What was measured, with its unit (e.g. `Silero VAD, x real time per core`). */
  measure: string;
  /** The value as the section's report prints it. */
  value: string;
  /** The ratio to the section's baseline as the report prints it, naming the baseline; absent where the figure has none. */
  ratio?: string;
}

/** What a section reports besides its Markdown; the section pushes onto both lists as it measures. */
export interface SectionFindings {
  /** Lines of the summary after the sections: a goal figure beside its baseline. */
  headlines: string[];
  /** Rows of docs/performance.md. */
  figures: BenchFigure[];
}

/** A section: its Markdown, given the command's options and the lists it reports into. */
export type BenchSection = (options: BenchOptions, findings: SectionFindings) => Promise<string>;
