/**
 * How much a function must run before V8 optimizes it (TurboFan), raised in a process that builds
 * audio, set once when the command line starts.
 *
 * Why: V8 (Node 20's V8 11.3, src/execution/tiering-manager.cc) counts the bytecode a function runs
 * against an interrupt budget (`--interrupt-budget`, 67584 by default); each time the budget runs out
 * is a tick, and a function is marked for optimization after a number of ticks that grows with its
 * bytecode length (or at its first tick when it is small and its feedback is stable), so 8 times the
 * budget means about 8 times as much work before a function is optimized. A build compiles much of its code again and again: a
 * 20-dialogue saturation build made 848 optimizing compilations (3.3 CPU s on V8's background threads,
 * warm-up included; 10 dialogues 705, 40 dialogues 1266, `node --trace-opt
 * dist/pipeline/orchestration/build-saturation.bench.js N 4 0.02`), the compilations of anonymous
 * functions (closures) growing with the dialogues (227 at 10, 584 at 40), and no one function compiled
 * more than 12 times (`node --log-code`), so there is no one place in the code to change. With 8 times
 * the budget the same 20-dialogue build made 228 (1.0 CPU s). In 9 pairs of runs one after the other
 * the process's other threads used 0.4-1.7 CPU s less per build and its main thread
 * 0.5 s less to 0.8 s more (code optimized later runs slower until then); audio seconds per CPU second
 * rose in 7 of the 9 pairs (README, Throughput; `npm run bench`, section saturation, has the baseline
 * with V8's own budget).
 */
import v8 from 'node:v8';

/** V8's own interrupt budget in Node 20 (`node --v8-options`: `--interrupt-budget=67584`). */
export const V8_DEFAULT_INTERRUPT_BUDGET = 67584;

/** The interrupt budget the build's process uses: 8 times V8's own. */
export const BUILD_INTERRUPT_BUDGET = 8 * V8_DEFAULT_INTERRUPT_BUDGET;

/** The budget {@link raiseOptimizationBudget} set in this process, or null. */
let raised: number | null = null;

/**
 * Set V8's interrupt budget for this process to `budget`, unless the process was started with its
 * own `--interrupt-budget`, which is kept, or runs another V8 than 11 (Node 20): V8 12 (Node 22) has no
 * such flag (it counts invocations, `--invocation-count-for-turbofan`, and has Maglev on), and nothing
 * was measured there. V8 11 resets each function's budget from the flag at every tick, so setting it
 * after start affects what runs from then on. Process-wide: call it from a command's entry, never from
 * library code a host application imports.
 *
 * @param options.execArgv the Node options the process was started with (default `process.execArgv`)
 * @param options.budget the budget (default {@link BUILD_INTERRUPT_BUDGET}), a positive integer
 * @param options.v8Version the V8 version (default `process.versions.v8`)
 * @returns true when the budget was set, false when the process's own flag was kept or V8 is not 11
 * @throws RangeError when `budget` is not a positive integer
 */
export function raiseOptimizationBudget(
  options: { execArgv?: readonly string[]; budget?: number; v8Version?: string } = {},
): boolean {
  const { execArgv = process.execArgv, budget = BUILD_INTERRUPT_BUDGET, v8Version = process.versions.v8 } = options;
  if (!Number.isInteger(budget) || budget <= 0)
    throw new RangeError(`raiseOptimizationBudget: budget must be a positive integer, got ${budget}`);
  if (!v8Version.startsWith('11.')) return false;
  // `--interrupt-budget=N`, `--interrupt_budget=N`, `-interrupt-budget=N` (V8 takes one dash too), not `--interrupt-budget-for-…`
  if (execArgv.some((argument) => /^--?interrupt[-_]budget(=|$)/.test(argument))) return false;
  v8.setFlagsFromString(`--interrupt-budget=${budget}`);
  raised = budget;
  return true;
}

/** The interrupt budget {@link raiseOptimizationBudget} set in this process; null when it was not called, kept the process's own flag or found another V8 than 11. */
export function raisedOptimizationBudget(): number | null {
  return raised;
}
