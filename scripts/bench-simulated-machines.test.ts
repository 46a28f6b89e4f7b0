/** The pure parts of the simulated-machines bench section: quotas, the layout check, the GPU estimate, the table. */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cgroupLayout, CgroupMachines, quotaMicroseconds } from './bench-cgroups.ts';
import {
  formatMachineRuns,
  gpusPerCoordinator,
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
    const run = (workers: number, wallSeconds: number, scored = false): MachineRun => ({
      label: `n${workers}`,
      scored,
      workers,
      dialogues: 10,
      wallSeconds,
      coordinatorCpuSeconds: 1,
      workerCpuSeconds: workers ? [2] : [],
      redisCpuSeconds: 0.5,
      redisCommands: 500,
      redisBytes: 10240,
      baseDialogueSeconds: 88,
    });
    const table = formatMachineRuns([run(0, 100), run(2, 50), run(0, 300, true), run(3, 100, true)]);
    const rows = table.split('\n').slice(2);
    expect(rows[1]).toContain('| 2.00 × |');
    expect(rows[3]).toContain('| 3.00 × |');
    expect(rows[1]).toContain('| 100 | 50 | 1.0 |'); // coordinator ms per dialogue, commands and KiB per dialogue
  });
});

/** One machine of 0.3 core named w1. */
function machine2(machines: CgroupMachines) {
  return machines.machine('w1', 0.3);
}
