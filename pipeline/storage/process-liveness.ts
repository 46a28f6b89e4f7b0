/**
 * Whether a process recorded by PID (the writer of a temporary file, the holder of a lock) still runs
 * on this host. On Linux the process start time (field 22 of `/proc/{pid}/stat`, clock ticks since
 * boot; proc(5)) is recorded too, so a PID reused by another process is not taken for the holder, and
 * a zombie (state `Z`) counts as ended.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import os from 'node:os';

/** A process as recorded by its writer: host, PID and (on Linux) start time. */
export interface ProcessIdentity {
  /** {@link hostIdentifier} of the host it runs on. */
  host: string;
  pid: number;
  /** Start time in clock ticks since boot (Linux), or null when unknown. */
  startTime: number | null;
}

/** 8 hex digits identifying this host (sha256 of its host name), safe in file names. */
export function hostIdentifier(): string {
  return createHash('sha256').update(os.hostname()).digest('hex').slice(0, 8);
}

/** `{state, startTime}` of a PID from /proc, or undefined when /proc has no such process or cannot be read. */
function procStat(pid: number): { state: string; startTime: number } | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // the command name (field 2) is in parentheses and may hold spaces: split after the last ')'
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return { state: fields[0]!, startTime: Number(fields[19]) };
  } catch {
    return undefined;
  }
}

/** This process's identity. */
export function currentProcess(): ProcessIdentity {
  return { host: hostIdentifier(), pid: process.pid, startTime: procStat(process.pid)?.startTime ?? null };
}

/**
 * Whether the recorded process runs. Only answerable for this host: for another host's process
 * the answer is `undefined` (unknown).
 * @param identity host, PID and start time as recorded
 */
export function isProcessRunning(identity: ProcessIdentity): boolean | undefined {
  if (identity.host !== hostIdentifier()) return undefined;
  if (identity.pid === process.pid)
    return identity.startTime === null || identity.startTime === currentProcess().startTime;
  try {
    process.kill(identity.pid, 0);
  } catch (error) {
    // EPERM: it exists but belongs to another user
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  const stat = procStat(identity.pid);
  if (stat === undefined) return true; // no /proc (not Linux): kill(0) is all we know
  if (stat.state === 'Z' || stat.state === 'X') return false;
  return identity.startTime === null || stat.startTime === identity.startTime;
}
