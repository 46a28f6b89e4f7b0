import { execFile } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { PACKAGE_ROOT, TYPESCRIPT_LOADER_ARGUMENTS } from '../storage/package-files.ts';
import { BUILD_INTERRUPT_BUDGET, raiseOptimizationBudget, V8_DEFAULT_INTERRUPT_BUDGET } from './optimization-budget.ts';

const run = promisify(execFile);

/**
 * Run `setup` (ES module code with `budget`, the module, in scope), then call a small function 100
 * times per round for 60 rounds, in a child process with `--trace-opt` (the flag is process-wide, so it
 * is never set in the test runner's own process). Rounds are marked on stdout with synchronous writes,
 * in order with V8's own trace lines.
 * @returns the round in which V8 marked the function for optimization (null: not in 60 rounds), and what `setup` printed
 */
async function roundOfOptimization(
  nodeOptions: string[],
  setup: string,
): Promise<{ round: number | null; said: string[] }> {
  const module = pathToFileURL(`${PACKAGE_ROOT}/pipeline/run/optimization-budget.ts`).href;
  const script = [
    `import { writeSync } from 'node:fs';`,
    `const budget = await import(${JSON.stringify(module)});`,
    setup,
    `function probedWork(x) { let sum = 0; for (let i = 0; i < 20; i++) sum += (i * x) % 7; return sum; }`,
    `let total = 0;`,
    `for (let round = 0; round < 60; round++) { writeSync(1, 'ROUND ' + round + '\\n'); for (let call = 0; call < 100; call++) total += probedWork(call + round); }`,
    `writeSync(1, 'END ' + total + '\\n');`,
  ].join('\n');
  const { stdout } = await run(
    process.execPath,
    [...TYPESCRIPT_LOADER_ARGUMENTS, '--trace-opt', ...nodeOptions, '--input-type=module', '-e', script],
    { maxBuffer: 64 * 2 ** 20 },
  );
  let round: number | null = null;
  let marked: number | null = null;
  const said: string[] = [];
  for (const line of stdout.split('\n')) {
    const marker = /^ROUND (\d+)/.exec(line);
    if (marker) round = Number(marker[1]);
    if (marked === null && /marking .*<JSFunction probedWork /.test(line)) marked = round;
    const saying = /^SAID (.*)/.exec(line);
    if (saying) said.push(saying[1]!);
  }
  expect(stdout).toMatch(/^END \d+$/m);
  return { round: marked, said };
}

// the flag exists in V8 11 (Node 20) only; elsewhere raiseOptimizationBudget leaves V8 alone (tested below)
const onV8Eleven = process.versions.v8.startsWith('11.');

describe('raiseOptimizationBudget', () => {
  it.runIf(onV8Eleven)('makes V8 wait for about 8 times as much work before it optimizes a function', async () => {
    const own = await roundOfOptimization([], '');
    const raised = await roundOfOptimization(
      [],
      `writeSync(1, 'SAID ' + budget.raiseOptimizationBudget() + ' ' + budget.raisedOptimizationBudget() + '\\n');`,
    );
    expect(raised.said).toEqual([`true ${BUILD_INTERRUPT_BUDGET}`]);
    expect(own.round).not.toBeNull();
    expect(raised.round).not.toBeNull();
    // V8's own budget (67584) marks it within the first rounds, 8 times the budget at least 4 times later
    expect(raised.round!).toBeGreaterThanOrEqual(4 * Math.max(1, own.round!));
  });

  it.runIf(onV8Eleven)('keeps the budget the process was started with (node --interrupt-budget)', async () => {
    // twice V8's own: later than V8's own, earlier than the build's 8 times
    const setup = `writeSync(1, 'SAID ' + budget.raiseOptimizationBudget() + ' ' + budget.raisedOptimizationBudget() + '\\n');`;
    const kept = await roundOfOptimization([`--interrupt-budget=${2 * V8_DEFAULT_INTERRUPT_BUDGET}`], setup);
    const sameWithoutCall = await roundOfOptimization([`--interrupt-budget=${2 * V8_DEFAULT_INTERRUPT_BUDGET}`], '');
    expect(kept.said).toEqual(['false null']);
    expect(kept.round).toBe(sameWithoutCall.round);
  });

  it("recognizes the process's own flag in each form V8 takes, and not the other interrupt-budget flags", () => {
    for (const given of [
      '--interrupt-budget=5000',
      '--interrupt_budget=5000',
      '-interrupt-budget=5000',
      '--interrupt-budget',
    ]) {
      expect(
        raiseOptimizationBudget({ execArgv: [given], v8Version: '11.3.244.8', budget: V8_DEFAULT_INTERRUPT_BUDGET }),
        given,
      ).toBe(false);
    }
    // (sets the flag in this process, to V8's own value, so nothing changes for the other tests)
    if (onV8Eleven)
      expect(
        raiseOptimizationBudget({
          execArgv: ['--interrupt-budget-for-feedback-allocation=940'],
          budget: V8_DEFAULT_INTERRUPT_BUDGET,
        }),
      ).toBe(true);
  });

  it('leaves another V8 than 11 alone (V8 12, Node 22, has no --interrupt-budget)', () => {
    expect(raiseOptimizationBudget({ execArgv: [], v8Version: '12.4.254.21-node.33' })).toBe(false);
  });

  it('refuses a budget that is not a positive integer, before touching V8', () => {
    expect(() => raiseOptimizationBudget({ budget: 0, execArgv: [] })).toThrow(/positive integer, got 0/);
    expect(() => raiseOptimizationBudget({ budget: 1.5, execArgv: [] })).toThrow(RangeError);
  });
});
