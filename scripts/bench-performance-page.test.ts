/**
 * docs/performance.md's writer on synthetic section results: the machine line, one row per figure in
 * the run's order, the failed sections, and the header naming the sections the page holds.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  formatPerformancePage,
  thisMachine,
  writePerformancePage,
  type MachineDescription,
  type SectionFigures,
} from './bench-performance-page.ts';

const machine: MachineDescription = {
  cpuModel: 'Example CPU @ 2.00GHz',
  cores: 2,
  memoryBytes: 8 * 2 ** 30,
  nodeVersion: 'v20.0.0',
};

const sections: SectionFigures[] = [
  {
    section: 'cli',
    figures: [
      { measure: '`duplexsynth --version` start: wall s', value: '0.310', ratio: '4.20 (/ bare `node -e 0`, wall)' },
      { measure: 'a figure without a baseline', value: '12' },
    ],
  },
  { section: 'vad', figures: [], failure: 'onnxruntime: no model | at that path' },
];

describe('formatPerformancePage', () => {
  const page = formatPerformancePage(sections, machine);

  it('gives the machine in one line: CPU model, cores, memory, Node version', () => {
    expect(page).toContain('Machine: Example CPU @ 2.00GHz, 2 cores, 8.0 GiB memory, Node v20.0.0.');
  });

  it('names the sections it holds in its header', () => {
    expect(page.split('\n')[0]).toBe('# Performance');
    expect(page).toContain('Figures of the sections `cli`, `vad` of `npm run bench`');
  });

  it('lists one row per figure in the run order, a dash without a baseline, and a failed section with its reason', () => {
    const rows = page.split('\n').filter((line) => line.startsWith('| ') && !line.startsWith('| section'));
    expect(rows).toEqual([
      '| cli | `duplexsynth --version` start: wall s | 0.310 | 4.20 (/ bare `node -e 0`, wall) |',
      '| cli | a figure without a baseline | 12 | — |',
      '| vad | not measured | onnxruntime: no model \\| at that path | — |',
    ]);
    expect(page).toContain('| section | measure | value | ratio to the baseline |\n|---|---|---:|---|\n| cli |');
  });

  it('holds no load average and no date', () => {
    expect(page).not.toMatch(/load|\b20\d\d-\d\d-\d\d\b/i);
  });

  it('ends in one line break', () => {
    expect(page.endsWith('|\n')).toBe(true);
  });
});

describe('writePerformancePage', () => {
  it("writes the page of this machine's description to the file", async () => {
    const folder = await mkdtemp(path.join(os.tmpdir(), 'duplexsynth-performance-page-'));
    try {
      const file = path.join(folder, 'performance.md');
      await writePerformancePage(file, sections);
      expect(await readFile(file, 'utf8')).toBe(formatPerformancePage(sections, thisMachine()));
      expect(thisMachine().cores).toBe(os.cpus().length);
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });
});
