/**
 * Simulated machines for the bench: a CPU-quota cgroup per process, so that one host shows how a
 * build scales over many machines, each "machine" a fraction of a core. cgroup v1 (`cpu` and
 * `cpuacct` hierarchies: `cpu.cfs_quota_us` over `cpu.cfs_period_us`, `cpuacct.usage`) or cgroup v2
 * (`cpu.max`, `cpu.stat` `usage_usec`), whichever the host mounts; root needed. Every group made is
 * removed by {@link CgroupMachines.removeAll} (its processes moved back to the root group first), or
 * by {@link CgroupMachines.removeAllNow} in a stop handler, which cannot wait.
 */
import { existsSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { mkdir, readFile, rmdir, writeFile } from 'node:fs/promises';
import path from 'node:path';

/** The quota period, microseconds (the kernel's default). */
export const CFS_PERIOD_MICROSECONDS = 100_000;

/** Where the host's cgroups are, or why none can be made. */
export type CgroupLayout =
  { version: 1; cpu: string; cpuacct: string } | { version: 2; root: string } | { version: null; reason: string };

/**
 * The cgroup layout of this host, checked writable.
 * @param root the cgroup mount (default /sys/fs/cgroup)
 */
export function cgroupLayout(root = '/sys/fs/cgroup'): CgroupLayout {
  if (process.getuid?.() !== 0) return { version: null, reason: 'not root (CPU quotas need root)' };
  const cpu = path.join(root, 'cpu');
  const cpuacct = path.join(root, 'cpuacct');
  if (existsSync(path.join(cpu, 'cpu.cfs_quota_us')) && existsSync(path.join(cpuacct, 'cpuacct.usage')))
    return { version: 1, cpu, cpuacct };
  if (existsSync(path.join(root, 'cgroup.controllers'))) return { version: 2, root };
  return { version: null, reason: `no cgroup v1 cpu/cpuacct or cgroup v2 at ${root}` };
}

/** The quota of a machine of `cores` cores: microseconds per {@link CFS_PERIOD_MICROSECONDS}. @throws RangeError when `cores` is not positive */
export function quotaMicroseconds(cores: number): number {
  if (!(cores > 0)) throw new RangeError(`a machine needs a positive number of cores, got ${cores}`);
  return Math.max(1000, Math.round(cores * CFS_PERIOD_MICROSECONDS));
}

/** One simulated machine: a cgroup with a CPU quota. */
export interface CgroupMachine {
  name: string;
  /** The `cgroup.procs` files a process writes its pid into to join the machine. */
  procsFiles: string[];
  /** Put a process (all its threads; its later children too) into the machine. */
  add(pid: number): Promise<void>;
  /** CPU seconds used by the machine's processes so far (all threads, terminated children included). */
  cpuSeconds(): Promise<number>;
}

/** The machines of one bench run. */
export class CgroupMachines {
  private readonly made: string[] = [];

  constructor(
    private readonly layout: Exclude<CgroupLayout, { version: null }>,
    private readonly prefix: string,
  ) {}

  /**
   * Make a machine of `cores` cores.
   * @throws the file-system error when the group cannot be made or limited
   */
  async machine(name: string, cores: number): Promise<CgroupMachine> {
    const group = `${this.prefix}-${name}`;
    const quota = quotaMicroseconds(cores);
    if (this.layout.version === 1) {
      const cpu = path.join(this.layout.cpu, group);
      const cpuacct = path.join(this.layout.cpuacct, group);
      await mkdir(cpu, { recursive: true });
      this.made.push(cpu);
      await mkdir(cpuacct, { recursive: true });
      this.made.push(cpuacct);
      await writeFile(path.join(cpu, 'cpu.cfs_period_us'), String(CFS_PERIOD_MICROSECONDS));
      await writeFile(path.join(cpu, 'cpu.cfs_quota_us'), String(quota));
      return {
        name,
        procsFiles: [path.join(cpu, 'cgroup.procs'), path.join(cpuacct, 'cgroup.procs')],
        add: async (pid) => {
          await writeFile(path.join(cpu, 'cgroup.procs'), String(pid));
          await writeFile(path.join(cpuacct, 'cgroup.procs'), String(pid));
        },
        cpuSeconds: async () => Number((await readFile(path.join(cpuacct, 'cpuacct.usage'), 'utf8')).trim()) / 1e9,
      };
    }
    const directory = path.join(this.layout.root, group);
    await writeFile(path.join(this.layout.root, 'cgroup.subtree_control'), '+cpu').catch(() => {});
    await mkdir(directory, { recursive: true });
    this.made.push(directory);
    await writeFile(path.join(directory, 'cpu.max'), `${quota} ${CFS_PERIOD_MICROSECONDS}`);
    return {
      name,
      procsFiles: [path.join(directory, 'cgroup.procs')],
      add: (pid) => writeFile(path.join(directory, 'cgroup.procs'), String(pid)),
      cpuSeconds: async () => {
        const stat = await readFile(path.join(directory, 'cpu.stat'), 'utf8');
        return Number(/usage_usec (\d+)/.exec(stat)?.[1] ?? 0) / 1e6;
      },
    };
  }

  /** Remove every group made (processes still in one are moved to the root group first); never throws. */
  async removeAll(): Promise<void> {
    for (const group of this.made.reverse()) {
      const root = path.dirname(group);
      const procs = await readFile(path.join(group, 'cgroup.procs'), 'utf8').catch(() => '');
      for (const pid of procs.split('\n').filter(Boolean))
        await writeFile(path.join(root, 'cgroup.procs'), pid).catch(() => {});
      await rmdir(group).catch(() => {});
    }
    this.made.length = 0;
  }

  /**
   * {@link removeAll} without waiting on promises, for a stop handler (the process exits right after):
   * a group whose processes are still ending is tried again for up to `patienceMilliseconds`; never throws.
   */
  removeAllNow(patienceMilliseconds = 2000): void {
    const until = Date.now() + patienceMilliseconds;
    for (const group of this.made.reverse()) {
      for (;;) {
        let procs = '';
        try {
          procs = readFileSync(path.join(group, 'cgroup.procs'), 'utf8');
        } catch {
          // gone already
        }
        for (const pid of procs.split('\n').filter(Boolean))
          try {
            writeFileSync(path.join(path.dirname(group), 'cgroup.procs'), pid);
          } catch {
            // the process ended meanwhile
          }
        try {
          rmdirSync(group);
          break;
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== 'EBUSY' || Date.now() > until) break;
          Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50);
        }
      }
    }
    this.made.length = 0;
  }
}
