import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DiskFullError } from '../model/build-errors.ts';
import { ContentCache } from '../storage/content-cache.ts';
import type { ProgressEvent } from './progress.ts';
import { cachedJson, type Stage } from './stage.ts';
import { StageRunner, stageStep, type StageStep } from './stage-runner.ts';

let directory: string;
beforeEach(async () => {
  directory = await mkdtemp(path.join(os.tmpdir(), 'duplexsynth-stage-runner-'));
});
afterEach(async () => {
  await rm(directory, { recursive: true, force: true });
});

interface Work {
  id: string;
  doubled?: number;
  written?: string;
}

/** A cached stage: doubles the number in the id; fails for ids given. */
function doubling(failFor: Set<string>, calls: string[]): Stage<{ id: string }, { factor: number }, number> {
  const key = (input: { id: string }, parameters: { factor: number }) => ({
    stage: 'double',
    keyMaterial: { id: input.id, factor: parameters.factor },
  });
  return {
    name: 'double',
    inputs: ['id'],
    parameters: ['factor'],
    cacheStages: ['double'],
    cacheKeys: async (input, parameters) => [key(input, parameters)],
    run: (input, parameters, context) =>
      cachedJson(context.cache, key(input, parameters), async () => {
        calls.push(`double ${input.id}`);
        if (failFor.has(input.id)) throw new Error(`cannot double ${input.id}\nsecond line`);
        return Number(input.id.slice(1)) * parameters.factor;
      }),
  };
}

/** An uncached stage that records the order it runs in; throws `error` for `failId`. */
function writing(
  calls: string[],
  failId?: string,
  error: Error = new Error('disk trouble'),
): Stage<{ id: string; value: number }, Record<string, never>, string> {
  return {
    name: 'write',
    inputs: ['id', 'value'],
    parameters: [],
    cacheStages: [],
    cacheKeys: async () => [],
    run: async (input) => {
      calls.push(`write ${input.id}`);
      if (input.id === failId) throw error;
      return `${input.id}=${input.value}`;
    },
  };
}

function steps(
  calls: string[],
  options: { failDouble?: Set<string>; failWrite?: string; writeError?: Error } = {},
): StageStep<Work>[] {
  return [
    stageStep(doubling(options.failDouble ?? new Set(), calls), {
      startAhead: 'all',
      progress: 'prepare-text',
      input: (work: Work) => ({ id: work.id }),
      parameters: { factor: 2 },
      output: (work, doubled) => ({ ...work, doubled }),
    }),
    stageStep(writing(calls, options.failWrite, options.writeError), {
      progress: 'render-dataset',
      input: (work: Work) => ({ id: work.id, value: work.doubled! }),
      parameters: {},
      output: (work, written) => ({ ...work, written }),
    }),
  ];
}

describe('StageRunner.runSteps', () => {
  it('runs the steps in order, times each under its name, and stops at the first failure with its stage name', async () => {
    const runner = new StageRunner(['double', 'write'], { cache: new ContentCache(directory) });
    const calls: string[] = [];
    const ok = await runner.runSteps(steps(calls), { id: 'd3' });
    expect(ok).toEqual({ ok: true, state: { id: 'd3', doubled: 6, written: 'd3=6' } });
    const failed = await runner.runSteps(steps(calls, { failDouble: new Set(['d4']) }), { id: 'd4' });
    expect(failed.ok).toBe(false);
    expect(failed.ok ? null : failed.stage).toBe('double');
    expect(calls).toEqual(['double d3', 'write d3', 'double d4']);
    expect(Object.keys(runner.stageSeconds)).toEqual(['double', 'write']);
    expect(runner.stageSeconds.double).toBeGreaterThan(0);
  });
});

describe('StageRunner.runDataset', () => {
  async function run(items: string[], options: Parameters<typeof steps>[1], cache = new ContentCache(directory)) {
    const runner = new StageRunner(['double', 'write'], { cache });
    const calls: string[] = [];
    const lines: string[] = [];
    const events: ProgressEvent[] = [];
    const failed: string[] = [];
    const completed: string[] = [];
    const promise = runner.runDataset<string, Work>({
      language: 'en',
      items,
      id: (item) => item,
      initial: (item) => ({ id: item }),
      steps: steps(calls, options),
      completed: (item, work) => {
        completed.push(work.written!);
        return `wrote ${work.written}`;
      },
      afterCompleted: async (item) => {
        lines.push(`after ${item}`);
      },
      failed: (item, failure) => failed.push(`${item} ${failure.stage} ${failure.reason}`),
      log: (line) => lines.push(line),
      progress: (event) => events.push(event),
    });
    return { promise, calls, lines, events, failed, completed, cache };
  }

  it('starts the up-front step for every item first, then finishes items in order; a failed item is reported with its stage and the others go on', async () => {
    const { promise, calls, lines, events, failed, completed } = await run(['d1', 'd2', 'd3'], {
      failDouble: new Set(['d2']),
    });
    await promise;
    // every item's first step ran before the first in-order step
    expect(calls.indexOf('write d1')).toBeGreaterThan(
      Math.max(calls.indexOf('double d1'), calls.indexOf('double d2'), calls.indexOf('double d3')),
    );
    expect(calls.filter((call) => call.startsWith('write'))).toEqual(['write d1', 'write d3']);
    expect(completed).toEqual(['d1=2', 'd3=6']);
    expect(failed).toEqual(['d2 double cannot double d2']);
    expect(lines).toEqual([
      '[en] 1/3 d1: wrote d1=2',
      'after d1',
      '[en] 2/3 d2: FAILED at double: cannot double d2',
      '[en] 3/3 d3: wrote d3=6',
      'after d3',
    ]);
    expect(events.filter((event) => event.type === 'stage-start')).toEqual([
      { type: 'stage-start', language: 'en', stage: 'prepare-text', total: 3 },
      { type: 'stage-start', language: 'en', stage: 'render-dataset', total: 3 },
    ]);
    const items = events.filter((event) => event.type === 'item');
    expect(
      items
        .filter((event) => event.stage === 'prepare-text')
        .map((event) => `${event.id} ${event.status}`)
        .sort(),
    ).toEqual(['d1 done', 'd2 failed', 'd3 done']);
    expect(
      items.filter((event) => event.stage === 'render-dataset').map((event) => `${event.id} ${event.status}`),
    ).toEqual(['d1 done', 'd2 failed', 'd3 done']);
  });

  it('reports an item cached when its step counted no cache miss, done otherwise', async () => {
    await (
      await run(['d1', 'd2'], {})
    ).promise;
    const second = await run(['d1', 'd2'], {}, new ContentCache(directory));
    await second.promise;
    const third = await run(['d5'], {}, new ContentCache(directory));
    await third.promise;
    const statuses = (events: ProgressEvent[]) =>
      events
        .flatMap((event) =>
          event.type === 'item' && event.stage === 'prepare-text' ? [`${event.id} ${event.status}`] : [],
        )
        .sort();
    expect(statuses(second.events)).toEqual(['d1 cached', 'd2 cached']);
    expect(second.calls.filter((call) => call.startsWith('double'))).toEqual([]);
    expect(statuses(third.events)).toEqual(['d5 done']);
    // an in-order step without cache folders is always done
    expect(
      second.events.flatMap((event) =>
        event.type === 'item' && event.stage === 'render-dataset' ? [event.status] : [],
      ),
    ).toEqual(['done', 'done']);
  });

  it('throws an error that ends the build instead of recording it, and finishes no later item', async () => {
    const { promise, lines, failed } = await run(['d1', 'd2', 'd3'], {
      failWrite: 'd2',
      writeError: new DiskFullError('disk full writing d2', 'd2.wav', 100, 0),
    });
    await expect(promise).rejects.toBeInstanceOf(DiskFullError);
    expect(failed).toEqual([]);
    expect(lines).toEqual(['[en] 1/3 d1: wrote d1=2', 'after d1']);
  });

  /** runDataset over d1, d2 with the {@link steps}, an afterCompleted given by the test, and what each callback saw. */
  async function runWithAfterCompleted(afterCompleted: (item: string, calls: string[]) => Promise<void>) {
    const runner = new StageRunner(['double', 'write'], { cache: new ContentCache(directory) });
    const calls: string[] = [];
    const lines: string[] = [];
    const completed: string[] = [];
    const promise = runner.runDataset<string, Work>({
      language: 'en',
      items: ['d1', 'd2'],
      id: (item) => item,
      initial: (item) => ({ id: item }),
      steps: steps(calls),
      completed: (item, work) => {
        calls.push(`completed ${item}`);
        completed.push(work.written!);
        return `wrote ${work.written}`;
      },
      afterCompleted: (item) => afterCompleted(item, calls),
      failed: () => {},
      log: (line) => lines.push(line),
      progress: () => {},
    });
    return { promise, calls, lines, completed };
  }

  it("runs an item's afterCompleted while the next item's in-order steps run, and logs and records in the one-by-one order", async () => {
    // d1's afterCompleted waits for d2's in-order step (or 3 s): one by one, it would end first
    let release!: () => void;
    const d2Written = new Promise<void>((resolve) => (release = resolve));
    const { promise, calls, lines } = await runWithAfterCompleted(async (item, calls) => {
      calls.push(`after ${item} start`);
      if (item === 'd1') await Promise.race([d2Written, new Promise((resolve) => setTimeout(resolve, 3000))]);
      calls.push(`after ${item} end`);
    });
    const watch = setInterval(() => calls.includes('write d2') && release(), 1);
    try {
      await promise;
    } finally {
      clearInterval(watch);
    }
    const order = calls.filter((call) => !call.startsWith('double'));
    expect(order).toEqual([
      'write d1',
      'completed d1',
      'after d1 start',
      'write d2',
      'after d1 end',
      'completed d2',
      'after d2 start',
      'after d2 end',
    ]);
    expect(lines).toEqual(['[en] 1/2 d1: wrote d1=2', '[en] 2/2 d2: wrote d2=4']);
  });

  it("throws an afterCompleted's error before the next item is completed, and returns only when it has ended", async () => {
    let ended = false;
    const { promise, calls, completed } = await runWithAfterCompleted(async (item) => {
      await new Promise((resolve) => setTimeout(resolve, 50));
      ended = true;
      if (item === 'd1') throw new DiskFullError('disk full writing the variant of d1', 'd1.wav', 100, 0);
    });
    await expect(promise).rejects.toBeInstanceOf(DiskFullError);
    expect(ended).toBe(true);
    expect(completed).toEqual(['d1=2']);
    // d2's in-order step ran beside d1's afterCompleted, but d2 was neither completed nor handed on
    expect(calls).toContain('write d2');
    expect(calls).not.toContain('completed d2');
  });

  it('refuses a list whose step starts further ahead than the one before it', async () => {
    const runner = new StageRunner([], { cache: new ContentCache(directory) });
    const [first, second] = steps([]);
    const list = [second!, first!];
    await expect(
      runner.runDataset<string, Work>({
        language: 'en',
        items: ['d1'],
        id: (item) => item,
        initial: (item) => ({ id: item }),
        steps: list,
        completed: () => '',
        failed: () => {},
        log: () => {},
        progress: () => {},
      }),
    ).rejects.toThrow(/starts further ahead/);
  });
});
