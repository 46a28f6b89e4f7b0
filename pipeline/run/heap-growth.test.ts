import { execFile } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { PACKAGE_ROOT, TYPESCRIPT_LOADER_ARGUMENTS } from '../storage/package-files.ts';
import { widenHeapGrowth } from './heap-growth.ts';

const run = promisify(execFile);

/**
 * Run `body` (ES module code with `heapGrowth`, the module, in scope; it may print `PHASE name` lines)
 * in a child process with V8's GC tracing on; `collect()` allocates and collects four times. The flag is
 * process-wide, so it is never set in the test runner's own process. The factors are V8's own report of
 * each new old-generation limit (`--trace-gc-verbose`: "[HeapController] Limit: old size: … KB, new
 * limit: … KB (F)", F the factor the limit was computed with; the "factor F based on mu…" line before it
 * is the dynamic factor, printed before the flag overrides it).
 * @returns the factors of the limits V8 computed, per phase ('start' before the first PHASE line)
 */
async function factorsByPhase(nodeOptions: string[], body: string): Promise<Record<string, string[]>> {
  const module = pathToFileURL(`${PACKAGE_ROOT}/pipeline/run/heap-growth.ts`).href;
  const script = [
    `import v8 from 'node:v8';`,
    `const heapGrowth = await import(${JSON.stringify(module)});`,
    `v8.setFlagsFromString('--trace-gc-verbose');`,
    // live objects and garbage, so V8 has GC and mutator speeds to pick its own factor from
    `const live = Array.from({ length: 200000 }, (_, i) => ({ i, name: 'object ' + i }));`,
    `const collect = () => { for (let round = 0; round < 4; round++) { let garbage = []; for (let i = 0; i < 300000; i++) garbage.push({ i }); garbage = null; globalThis.gc(); } };`,
    body,
    `console.log('PHASE end ' + live.length);`,
  ].join('\n');
  const { stdout } = await run(
    process.execPath,
    [...TYPESCRIPT_LOADER_ARGUMENTS, '--expose-gc', ...nodeOptions, '--input-type=module', '-e', script],
    { maxBuffer: 16 * 2 ** 20 },
  );
  const phases: Record<string, string[]> = {};
  let phase = 'start';
  for (const line of stdout.split('\n')) {
    const marker = /^PHASE (\S+)/.exec(line);
    if (marker) phase = marker[1]!;
    const limit = /\[HeapController\] Limit: .*\(([\d.]+)\)$/.exec(line);
    if (limit) (phases[phase] ??= []).push(limit[1]!);
  }
  return phases;
}

describe('widenHeapGrowth', () => {
  it('makes V8 use the given growing factor from the next full collection on', async () => {
    const phases = await factorsByPhase(
      [],
      `heapGrowth.widenHeapGrowth({ percent: 150 }); console.log('PHASE widened-' + heapGrowth.widenedHeapGrowthPercent()); collect();`,
    );
    expect(Object.keys(phases)).toContain('widened-150');
    expect(phases['widened-150']!.length).toBeGreaterThanOrEqual(4);
    expect(new Set(phases['widened-150'])).toEqual(new Set(['2.5']));
  });

  it('keeps the factor the process was started with (node --heap-growing-percent)', async () => {
    const phases = await factorsByPhase(
      ['--heap-growing-percent=50'],
      `const kept = !heapGrowth.widenHeapGrowth({ percent: 150 }) && heapGrowth.widenedHeapGrowthPercent() === null; console.log('PHASE ' + (kept ? 'kept' : 'overridden')); collect();`,
    );
    expect(phases.kept!.length).toBeGreaterThanOrEqual(4);
    expect(new Set(phases.kept)).toEqual(new Set(['1.5']));
  });

  it('refuses a percent that is not a positive integer, before touching V8', () => {
    expect(() => widenHeapGrowth({ percent: 0, execArgv: [] })).toThrow(/positive integer, got 0/);
    expect(() => widenHeapGrowth({ percent: 2.5, execArgv: [] })).toThrow(RangeError);
  });
});
