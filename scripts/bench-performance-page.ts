/**
 * docs/performance.md, written by `npm run bench` from the figures of the sections it ran: one table
 * (section, measure, value, ratio to the section's baseline) and the machine in one line (CPU model,
 * cores, memory, Node version). The page holds the sections of the run that wrote it and names them
 * in its header; a run of other sections rewrites it with theirs, so every row on the page comes from
 * one run on one machine.
 */
import { writeFile } from 'node:fs/promises';
import os from 'node:os';
import type { BenchFigure } from './bench-section.ts';

/** The figures of one section of a run, or why it was not measured. */
export interface SectionFigures {
  /** The section's name, as `--sections` takes it (e.g. `cli`). */
  section: string;
  figures: BenchFigure[];
  /** The first line of the section's error when it failed (its figures are then not listed). */
  failure?: string;
}

/** The machine the figures were measured on. */
export interface MachineDescription {
  cpuModel: string;
  cores: number;
  memoryBytes: number;
  nodeVersion: string;
}

/** This machine: `os.cpus()`, `os.totalmem()`, `process.version`. */
export function thisMachine(): MachineDescription {
  const cpus = os.cpus();
  return {
    cpuModel: cpus[0]?.model.trim() || 'unknown CPU',
    cores: cpus.length,
    memoryBytes: os.totalmem(),
    nodeVersion: process.version,
  };
}

/** A table cell: a `|` would end the cell, a line break the row. */
function cell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\s*\n\s*/g, ' ');
}

/**
 * The page's Markdown.
 * @param sections in the order the run ran them
 */
export function formatPerformancePage(sections: readonly SectionFigures[], machine: MachineDescription): string {
  const names = sections.map(({ section }) => `\`${section}\``).join(', ');
  const rows = sections.flatMap(({ section, figures, failure }) =>
    failure !== undefined
      ? [`| ${section} | not measured | ${cell(failure)} | — |`]
      : figures.map(
          (figure) => `| ${section} | ${cell(figure.measure)} | ${cell(figure.value)} | ${cell(figure.ratio ?? '—')} |`,
        ),
  );
  return [
    '# Performance',
    '',
    '<!-- Written by `npm run bench` (scripts/bench-performance-page.ts): edit the bench, not this page. -->',
    '',
    `Figures of the sections ${names || '(none)'} of \`npm run bench\`, from the one run that wrote this page. ` +
      'A run writes the page anew from the sections it ran (`npm run bench -- --sections NAME...`), ' +
      "so the sections not listed here were not part of that run; the bench's Markdown report (its " +
      'standard output) gives the method, every run and the CPU times of each section.',
    '',
    `Machine: ${machine.cpuModel}, ${machine.cores} cores, ${(machine.memoryBytes / 2 ** 30).toFixed(1)} GiB memory, Node ${machine.nodeVersion}.`,
    '',
    '| section | measure | value | ratio to the baseline |',
    '|---|---|---:|---|',
    ...rows,
    '',
  ].join('\n');
}

/** Writes {@link formatPerformancePage} of this machine to `file`. */
export async function writePerformancePage(file: string, sections: readonly SectionFigures[]): Promise<void> {
  await writeFile(file, formatPerformancePage(sections, thisMachine()));
}
