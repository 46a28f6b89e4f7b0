/**
 * The pure parts of the simulated-machines bench section: quotas, the layout check, the GPU estimate,
 * the tables and the scale-out block, the synthetic scale corpus, the run configs.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cgroupLayout, CgroupMachines, quotaMicroseconds } from './bench-cgroups.ts';
import { machineRunConfig, peakResidentFromLog } from './bench-machines-run.ts';
import {
  flatAtScale,
  formatScaleRuns,
  repeatedConversations,
  scaleSentence,
  scaleSizes,
  type RawTopiocqaRecord,
} from './bench-machines-scale.ts';
import {
  formatMachineRuns,
  gpusPerCoordinator,
  machinesBlock,
  machinesPlan,
  replaceMeasuredBlock,
  type MachineRun,
} from './bench-simulated-machines.ts';

let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(path.join(os.tmpdir(), 'duplexsynth-machines-test-'));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

describe('simulated machines', () => {
  it('a machine of c cores gets c × the period as its quota; no cores is refused', () => {
    expect(quotaMicroseconds(0.35)).toBe(35_000);
    expect(quotaMicroseconds(2)).toBe(200_000);
    expect(() => quotaMicroseconds(0)).toThrow(RangeError);
  });

  it('finds a cgroup v1 layout only where both cpu and cpuacct are, and a v2 one by cgroup.controllers', async () => {
    const v1 = path.join(scratch, 'v1');
    await mkdir(path.join(v1, 'cpu'), { recursive: true });
    await writeFile(path.join(v1, 'cpu', 'cpu.cfs_quota_us'), '-1');
    const expected = process.getuid?.() === 0;
    expect(cgroupLayout(v1).version).toBe(null); // no cpuacct
    await mkdir(path.join(v1, 'cpuacct'), { recursive: true });
    await writeFile(path.join(v1, 'cpuacct', 'cpuacct.usage'), '0');
    expect(cgroupLayout(v1).version).toBe(expected ? 1 : null);
    const v2 = path.join(scratch, 'v2');
    await mkdir(v2, { recursive: true });
    await writeFile(path.join(v2, 'cgroup.controllers'), 'cpu');
    expect(cgroupLayout(v2).version).toBe(expected ? 2 : null);
  });

  it('a v2 machine writes its cpu.max, reads its usage, and is removed with its group', async () => {
    const root = path.join(scratch, 'v2-machine');
    await mkdir(root, { recursive: true });
    const machines = new CgroupMachines({ version: 2, root }, 'bench');
    const machine = await machine2(machines);
    const group = path.join(root, 'bench-w1');
    const { readFile } = await import('node:fs/promises');
    expect(await readFile(path.join(group, 'cpu.max'), 'utf8')).toBe('30000 100000');
    await writeFile(path.join(group, 'cpu.stat'), 'usage_usec 2500000\nuser_usec 1\n');
    expect(await machine.cpuSeconds()).toBe(2.5);
    expect(machine.procsFiles).toEqual([path.join(group, 'cgroup.procs')]);
    // a real cgroup folder has only kernel files; here the files written stand in for them
    await rm(path.join(group, 'cpu.max'));
    await rm(path.join(group, 'cpu.stat'));
    await machines.removeAll();
    const { existsSync } = await import('node:fs');
    expect(existsSync(group)).toBe(false);
  });

  it('removeAllNow removes the groups without waiting, in a stop handler', async () => {
    const root = path.join(scratch, 'v2-now');
    await mkdir(root, { recursive: true });
    const machines = new CgroupMachines({ version: 2, root }, 'bench');
    await machines.machine('w1', 0.3);
    await machines.machine('w2', 0.3);
    for (const name of ['bench-w1', 'bench-w2']) await rm(path.join(root, name, 'cpu.max'));
    machines.removeAllNow();
    const { existsSync } = await import('node:fs');
    expect(existsSync(path.join(root, 'bench-w1')) || existsSync(path.join(root, 'bench-w2'))).toBe(false);
  });

  it('rewrites only the measured block of the scale-out page, and names the page without one', () => {
    const page = 'intro\n<!-- bench:machines -->\nold\n<!-- /bench:machines -->\nrest\n';
    expect(replaceMeasuredBlock(page, 'new figures\n')).toBe(
      'intro\n<!-- bench:machines -->\nnew figures\n<!-- /bench:machines -->\nrest\n',
    );
    expect(() => replaceMeasuredBlock('no block', 'x', 'docs/scale-out.md')).toThrow(/docs\/scale-out\.md/);
  });

  it('GPUs per coordinator: speech seconds × RTF over the coordinator seconds per dialogue', () => {
    // 88 s of speech at RTF 0.03 is 2.64 GPU s; a coordinator at 10 ms a dialogue serves 264 GPUs
    expect(gpusPerCoordinator(0.01, 88, 0.03)).toBeCloseTo(264, 6);
    expect(() => gpusPerCoordinator(0, 88)).toThrow(RangeError);
  });

  it('the table puts each run beside the one-machine run of the same scoring', () => {
    const table = formatMachineRuns([run(0, 100), run(2, 50), run(0, 300, true), run(3, 100, true)]);
    const rows = table.split('\n').slice(2);
    expect(rows[1]).toContain('| 2.00 × |');
    expect(rows[3]).toContain('| 3.00 × |');
    expect(rows[1]).toContain('| 100 | 50 | 1.0 |'); // coordinator ms per dialogue, commands and KiB per dialogue
  });

  it('a GPU stand-in run is set beside the one-process GPU run, not the espeak-ng one', () => {
    const table = formatMachineRuns([run(0, 100), run(0, 40, false, true), run(2, 20, false, true)]);
    const rows = table.split('\n').slice(2);
    expect(rows[2]).toContain('| unscored, GPU stand-in | coordinator + 2 workers |');
    expect(rows[2]).toContain('| 2.00 × |');
  });

  it('the block states the GPUs, every ratio, Redis per dialogue per N and the scale sentence', () => {
    const runs = [
      run(0, 100),
      run(1, 100),
      run(2, 50),
      run(0, 300, true),
      run(3, 100, true),
      run(0, 40, false, true),
      run(2, 20, false, true),
    ];
    const block = machinesBlock({
      marginalMilliseconds: 10,
      gpus: 264,
      baseDialogueSeconds: 88,
      runs,
      scale: 'SCALE',
      scaleRuns: [{ ...run(4, 10), dialogues: 1000, redisCommands: 30_000 }],
    });
    expect(block).toContain('**about 264 GPUs**');
    expect(block).toContain(
      'Throughput against one machine: 1 worker 1.00 ×, 2 workers 2.00 ×; scored, 3 workers 3.00 ×;',
    );
    expect(block).toContain('RTF 0.03), 2 workers 2.00 ×.');
    expect(block).toContain(
      '1 worker 50 commands and 1.0 KiB; 2 workers 50 commands and 1.0 KiB; 1,000 short dialogues on 4 workers 30 commands',
    );
    expect(block.split('\n').at(-1)).toBe('SCALE');
  });

  it('the plan has the unscored, scored and GPU runs, each kind with its one-machine baseline', () => {
    const plan = machinesPlan(8);
    expect(plan.map((entry) => entry.label)).toEqual([
      'one',
      'n1',
      'n2',
      'n4',
      'half',
      'scored-one',
      'scored-n3',
      'gpu-one',
      'gpu-n1',
      'gpu-n2',
      'gpu-n4',
    ]);
    expect(plan.find((entry) => entry.label === 'scored-n3')!.dialogues).toBe(3);
    expect(plan.filter((entry) => entry.gpu).map((entry) => entry.workers)).toEqual([0, 1, 2, 4]);
  });
});

describe('flat at scale', () => {
  const record = (conversation: number, turn: number): RawTopiocqaRecord => ({
    Conversation_no: conversation,
    Turn_no: turn,
    Question: `q${conversation}.${turn}`,
  });
  // conversation 3 listed first and its turns out of order: the order comes from the numbers
  const source = [record(3, 2), record(3, 1), record(1, 1), record(1, 2), record(1, 3), record(3, 3)];

  it('repeats the conversations in order of number, cut to the first turns, numbered anew from 1', () => {
    const out = repeatedConversations(source, 3, 2);
    expect(out.map((entry) => [entry.Conversation_no, entry.Question])).toEqual([
      [1, 'q1.1'],
      [1, 'q1.2'],
      [2, 'q3.1'],
      [2, 'q3.2'],
      [3, 'q1.1'],
      [3, 'q1.2'],
    ]);
    expect(source[0]!.Conversation_no).toBe(3); // the source records are not changed
    expect(() => repeatedConversations([], 3, 2)).toThrow(RangeError);
    expect(() => repeatedConversations(source, 0, 2)).toThrow(RangeError);
  });

  it('takes two different sizes, smaller first, default 100 and 1,000', () => {
    expect(scaleSizes(undefined)).toEqual([100, 1000]);
    expect(scaleSizes([60, 20])).toEqual([20, 60]);
    expect(() => scaleSizes([20])).toThrow(/--scale-dialogues/);
    expect(() => scaleSizes([20, 20])).toThrow(RangeError);
  });

  it('per dialogue, marginal and peak-memory ratios of the coordinator at two sizes', () => {
    const small = {
      ...run(4, 10),
      dialogues: 100,
      coordinatorCpuSeconds: 4,
      coordinatorPeakResidentKibibytes: 204_800,
    };
    const large = {
      ...run(4, 10),
      dialogues: 1000,
      coordinatorCpuSeconds: 13,
      coordinatorPeakResidentKibibytes: 225_280,
    };
    const flat = flatAtScale(small, large);
    expect(flat.cpuMillisecondsPerDialogue).toEqual([40, 13]);
    expect(flat.cpuPerDialogueRatio).toBeCloseTo(0.325, 6);
    expect(flat.marginalCpuMilliseconds).toBeCloseTo(10, 6);
    expect(flat.peakResidentMebibytes).toEqual([200, 220]);
    expect(flat.peakResidentRatio).toBeCloseTo(1.1, 6);
    expect(flatAtScale(small, { ...large, coordinatorPeakResidentKibibytes: null }).peakResidentRatio).toBe(null);
    expect(() => flatAtScale(large, small)).toThrow(RangeError);
    expect(scaleSentence(flat, [100, 1000])).toContain(
      '40.0 CPU ms per dialogue at 100 dialogues and 13.0 at 1,000 (0.33 ×',
    );
    expect(formatScaleRuns([small, large]).split('\n')[3]).toBe('| 1000 | 4 | 10.0 | 13.00 | 13.0 | 220 | 1 | 0.0 |');
  });
});

describe('a run', () => {
  it("reads GNU time's peak resident set from the coordinator's output", () => {
    expect(peakResidentFromLog('done\nbench-machines peak resident KiB 123456\n')).toBe(123456);
    expect(peakResidentFromLog('done\n')).toBe(null);
  });

  it('writes the config with the given speech settings, and quality scoring only when scored', () => {
    const config = machineRunConfig(
      { corpus: '/c.json', dialogues: 5, scored: false },
      { output: '/o', cache: '/k' },
      { backend: 'cosyvoice2', service: { urls: ['http://127.0.0.1:1'] } },
    );
    expect(config).toContain('corpus: {"path":"/c.json","limit":5}');
    expect(config).toContain('tts: {"en":{"backend":"cosyvoice2","service":{"urls":["http://127.0.0.1:1"]}}}');
    expect(config).toContain('quality: { enabled: false }');
    expect(
      machineRunConfig({ corpus: '/c.json', dialogues: 5, scored: true }, { output: '/o', cache: '/k' }),
    ).toContain('tts: {"en":{"backend":"espeak-ng"}}');
  });
});

/** A run of 10 dialogues with `workers` workers (0: one process). */
function run(workers: number, wallSeconds: number, scored = false, gpu = false): MachineRun {
  return {
    label: `n${workers}`,
    scored,
    ...(gpu ? { gpu: true, speechServerCpuSeconds: 1 } : {}),
    workers,
    dialogues: 10,
    wallSeconds,
    coordinatorCpuSeconds: 1,
    workerCpuSeconds: workers ? [2] : [],
    redisCpuSeconds: 0.5,
    redisCommands: 500,
    redisBytes: 10240,
    baseDialogueSeconds: 88,
  };
}

/** One machine of 0.3 core named w1. */
function machine2(machines: CgroupMachines) {
  return machines.machine('w1', 0.3);
}
