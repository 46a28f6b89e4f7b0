/**
 * Runs lists of stages (./stage.ts) over the items of a dataset, one item's stages in order, with
 * - timings: wall-clock seconds per stage name, summed over items (`stageSeconds`; overlapping items
 *   add up, so a stage's sum can exceed the run's length);
 * - quarantine: the first stage that throws ends that item's list; the item is reported with that
 *   stage's name and the first line of the error, and the other items go on. An error that ends the
 *   build (`endsTheBuild`: disk full, lock lost) is thrown instead;
 * - scheduling: the first steps of a list can be started ahead of the item being finished (for all
 *   items at once, or a few items ahead), so services work in parallel while later steps run one item
 *   at a time in order;
 * - progress events (./progress.ts): `stage-start` per reporting step, then one `item` event per item
 *   and reporting step: `cached` when the step's cache folders counted no miss while it ran, `done`
 *   otherwise, `failed` with the reason.
 */
import { performance } from 'node:perf_hooks';
import type { Language } from '../model/types.ts';
import { endsTheBuild } from '../model/build-errors.ts';
import type { LogLevel, ProgressListener, ProgressStage } from './progress.ts';
import type { Stage, StageContext } from './stage.ts';

/** How far ahead of the item being finished a step starts: for every item at once (`all`), or a number of items ahead. */
export type StartAhead = 'all' | number;

/** A stage wired into a list over a per-item state: reads its input from the state, adds its output to it. */
export interface StageStep<State> {
  /** The stage's name (timings and failures). */
  readonly name: string;
  /** The stage's cache folders (for the `cached` progress status). */
  readonly cacheStages: readonly string[];
  /** When the step starts (default 0: when its item is reached, in order). Steps must not start later than the steps after them. */
  readonly startAhead: StartAhead;
  /** The progress bar the step reports its items to, if any. */
  readonly progress: ProgressStage | null;
  /** Run the stage on the state; returns the state with its output. */
  run(state: State, context: StageContext): Promise<State>;
}

/**
 * Wire `stage` into a list over `State`.
 * @param wiring `input` picks the stage's input from the state, `output` returns the state with the
 *   stage's output; `parameters` are the dataset's; `startAhead` and `progress` as in {@link StageStep}
 */
export function stageStep<State, Input, Parameters, Output>(
  stage: Stage<Input, Parameters, Output>,
  wiring: {
    input: (state: State) => Input;
    parameters: Parameters;
    output: (state: State, output: Output) => State;
    startAhead?: StartAhead;
    progress?: ProgressStage;
  },
): StageStep<State> {
  return {
    name: stage.name,
    cacheStages: stage.cacheStages,
    startAhead: wiring.startAhead ?? 0,
    progress: wiring.progress ?? null,
    run: async (state, context) =>
      wiring.output(state, await stage.run(wiring.input(state), wiring.parameters, context)),
  };
}

/** How a list of steps ended for one item: its final state, or the stage that failed and its error. */
export type StepsOutcome<State> = { ok: true; state: State } | { ok: false; stage: string; error: unknown };

/** An item's failure as recorded: the stage's name and the first line of its error. */
export interface StageFailure {
  stage: string;
  reason: string;
}

/** The items of one dataset and what to do with them. */
export interface DatasetRun<Item, State> {
  /** The dataset's language (progress events and log lines `[{language}] …`). */
  language: Language;
  items: readonly Item[];
  /** The item's id (progress events, log lines). */
  id: (item: Item) => string;
  /** The state the first step starts from. */
  initial: (item: Item) => State;
  steps: readonly StageStep<State>[];
  /**
   * An item passed every step: record it; returns the rest of its log line
   * (`[{language}] {position}/{total} {id}: {returned}`), logged before its in-order progress events.
   */
  completed: (item: Item, state: State) => string;
  /** After a completed item's log line and progress events (e.g. a variant built from its state). */
  afterCompleted?: (item: Item, state: State, position: number) => Promise<void>;
  /** An item failed (not an error that ends the build): record it; logged `… {id}: FAILED at {stage}: {reason}` afterwards. */
  failed: (item: Item, failure: StageFailure) => void;
  /** Log lines; a failed item's line is a warning. */
  log: (line: string, level?: LogLevel) => void;
  progress: ProgressListener;
}

/** The first line of an error's message (what failure lists and log lines show). */
export function firstLine(error: unknown): string {
  return error instanceof Error ? error.message.split('\n')[0]! : String(error);
}

/** A log line about one item: `[{language}] {position}/{total} {label}: {text}` (position counts from 1). */
export function itemLogLine(language: Language, position: number, total: number, label: string, text: string): string {
  return `[${language}] ${position}/${total} ${label}: ${text}`;
}

/** The text of a failed item's log line: `FAILED at {stage}: {reason}`. */
export function failureText(failure: StageFailure): string {
  return `FAILED at ${failure.stage}: ${failure.reason}`;
}

/** Runs stages with one timer and one context (cache) for a whole build. */
export class StageRunner {
  /** Wall-clock seconds per stage name, summed over items; every name given to the constructor starts at 0. */
  readonly stageSeconds: Record<string, number>;

  /**
   * @param stageNames the names timed, in the order `stageSeconds` lists them (others are added when run)
   * @param context what every stage's `run` receives
   */
  constructor(
    stageNames: readonly string[],
    readonly context: StageContext,
  ) {
    this.stageSeconds = Object.fromEntries(stageNames.map((name) => [name, 0]));
  }

  /** Time `work` under `name` (added to `stageSeconds` whether it returns or throws). */
  async timed<T>(name: string, work: () => Promise<T> | T): Promise<T> {
    const started = performance.now();
    try {
      return await work();
    } finally {
      this.stageSeconds[name] = (this.stageSeconds[name] ?? 0) + (performance.now() - started) / 1000;
    }
  }

  /** Run one stage, timed under its name. @throws what the stage throws */
  runStage<Input, Parameters, Output>(
    stage: Stage<Input, Parameters, Output>,
    input: Input,
    parameters: Parameters,
  ): Promise<Output> {
    return this.timed(stage.name, () => stage.run(input, parameters, this.context));
  }

  /**
   * Run `steps` in order on `state`, each timed under its stage's name. Never throws: the first failure
   * ends the list and is returned with the stage's name (the caller decides what ends the build).
   */
  async runSteps<State>(steps: readonly StageStep<State>[], state: State): Promise<StepsOutcome<State>> {
    let current = state;
    for (const step of steps) {
      try {
        current = await this.timed(step.name, () => step.run(current, this.context));
      } catch (error) {
        return { ok: false, stage: step.name, error };
      }
    }
    return { ok: true, state: current };
  }

  /**
   * Run a dataset's steps over its items: the steps that start ahead are started as their
   * `startAhead` says; the rest run item by item, in order. Each item ends with `completed` (then its
   * log line, then the progress of its in-order steps, then `afterCompleted`) or with `failed` (then
   * the progress `failed` of the reporting steps it did not pass, then its FAILED log line). An item's
   * `afterCompleted` runs while the next item's in-order steps run, and ends before that item's
   * `completed` or `failed` is called (at most one runs at a time).
   * @throws an error for which `endsTheBuild` holds (the items after it are not finished); whatever
   *   `completed`, `afterCompleted` or `failed` throw
   */
  async runDataset<Item, State>(run: DatasetRun<Item, State>): Promise<void> {
    const { items, steps, language, progress } = run;
    const phases = schedulePhases(steps);
    for (const step of steps)
      if (step.progress) progress({ type: 'stage-start', language, stage: step.progress, total: items.length });
    const reportItem = (step: StageStep<State>, item: Item, status: 'done' | 'cached') =>
      progress({ type: 'item', language, stage: step.progress!, id: run.id(item), status });
    const misses = (step: StageStep<State>) =>
      step.cacheStages.reduce((total, name) => total + (this.context.cache.statistics[name]?.misses ?? 0), 0);

    // one phase of one item: its steps in order; a step started ahead reports its own item when it ends
    const runPhase = async (phase: Phase<State>, item: Item, state: State): Promise<ItemOutcome<State>> => {
      let current = state;
      for (const [offset, step] of phase.steps.entries()) {
        const missesBefore = misses(step);
        try {
          current = await this.timed(step.name, () => step.run(current, this.context));
        } catch (error) {
          if (phase.startAhead === 'all') {
            // started for every item at once: the failure is reported now, not when the item is reached
            for (const later of phase.steps.slice(offset)) {
              if (later.progress)
                progress({
                  type: 'item',
                  language,
                  stage: later.progress,
                  id: run.id(item),
                  status: 'failed',
                  reason: firstLine(error),
                });
            }
          }
          return { ok: false, stage: step.name, error, failedStep: step };
        }
        if (step.progress && phase.startAhead !== 0)
          reportItem(step, item, step.cacheStages.length > 0 && misses(step) === missesBefore ? 'cached' : 'done');
      }
      return { ok: true, state: current };
    };

    // per item, the promise of the last phase started so far
    const pending: Promise<ItemOutcome<State>>[] = items.map((item) =>
      Promise.resolve({ ok: true as const, state: run.initial(item) }),
    );
    const FINISHED: Promise<ItemOutcome<State>> = Promise.reject(new Error('item already finished'));
    FINISHED.catch(() => {});
    const started = items.map(() => -1);
    const startThrough = (position: number, phaseIndex: number) => {
      for (let index = started[position]! + 1; index <= phaseIndex; index += 1) {
        const phase = phases[index]!;
        const item = items[position]!;
        pending[position] = pending[position]!.then((outcome) =>
          outcome.ok ? runPhase(phase, item, outcome.state) : outcome,
        );
        pending[position]!.catch(() => {}); // awaited (and reported) when the item is reached
        started[position] = index;
      }
    };
    phases.forEach((phase, index) => {
      if (phase.startAhead === 'all') for (const position of items.keys()) startThrough(position, index);
    });

    // The item before's afterCompleted (the barge-in variant built from its state) runs while this
    // item's in-order steps do, so one computes while the other waits on the disk; it is awaited before
    // this item is logged or recorded, so logs, progress and records keep the one-by-one order.
    let afterCompletedBefore: Promise<void> = Promise.resolve();
    try {
      for (const [position, item] of items.entries()) {
        phases.forEach((phase, index) => {
          if (typeof phase.startAhead === 'number' && phase.startAhead > 0) {
            for (let ahead = position; ahead < Math.min(items.length, position + 1 + phase.startAhead); ahead += 1)
              startThrough(ahead, index);
          }
        });
        startThrough(position, phases.length - 1);
        const outcome = await pending[position]!;
        pending[position] = FINISHED; // the item's state (its audio) is not kept once it is finished
        await afterCompletedBefore;
        const label = run.id(item);
        if (outcome.ok) {
          run.log(itemLogLine(language, position + 1, items.length, label, run.completed(item, outcome.state)));
          for (const step of phases.filter((phase) => phase.startAhead === 0).flatMap((phase) => phase.steps))
            if (step.progress) reportItem(step, item, 'done');
          afterCompletedBefore = Promise.resolve(run.afterCompleted?.(item, outcome.state, position));
          afterCompletedBefore.catch(() => {}); // its error is thrown where it is awaited: above, or after the loop
          continue;
        }
        if (endsTheBuild(outcome.error)) throw outcome.error; // disk full, lock lost: nothing is committed
        const failure = { stage: outcome.stage, reason: firstLine(outcome.error) };
        run.failed(item, failure);
        for (const step of steps.slice(steps.indexOf(outcome.failedStep))) {
          if (step.progress && step.startAhead !== 'all')
            progress({
              type: 'item',
              language,
              stage: step.progress,
              id: label,
              status: 'failed',
              reason: failure.reason,
            });
        }
        run.log(itemLogLine(language, position + 1, items.length, label, failureText(failure)), 'warn');
      }
      await afterCompletedBefore;
    } finally {
      // thrown out of the loop: the item before's afterCompleted is not left writing behind the caller
      await afterCompletedBefore.catch(() => {});
    }
  }
}

/** How an item's steps ended, with the step that failed. */
type ItemOutcome<State> =
  { ok: true; state: State } | { ok: false; stage: string; error: unknown; failedStep: StageStep<State> };

/** Consecutive steps with the same `startAhead`. */
interface Phase<State> {
  startAhead: StartAhead;
  steps: StageStep<State>[];
}

/** @throws Error when a step starts later than a step after it (a list the runner cannot schedule) */
function schedulePhases<State>(steps: readonly StageStep<State>[]): Phase<State>[] {
  const rank = (startAhead: StartAhead) => (startAhead === 'all' ? Number.POSITIVE_INFINITY : startAhead);
  const phases: Phase<State>[] = [];
  for (const step of steps) {
    const last = phases.at(-1);
    if (last && rank(step.startAhead) > rank(last.startAhead))
      throw new Error(
        `stage ${step.name} starts further ahead (${step.startAhead}) than the stage before it (${last.startAhead})`,
      );
    if (last && last.startAhead === step.startAhead) last.steps.push(step);
    else phases.push({ startAhead: step.startAhead, steps: [step] });
  }
  return phases;
}
