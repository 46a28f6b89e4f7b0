/**
 * The output folder's lock records its holder; a killed holder on this host is
 * taken over at once (it used to cost 60 s); a holder that still runs is never taken over, however
 * long it is paused; a build that loses its lock learns it with a one-line error and commits nothing.
 * Holders are real child processes (paused with SIGSTOP, killed with SIGKILL).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rename, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import lockfile from 'proper-lockfile';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DatasetWriter } from '../../stages/render-dataset.ts';
import { LockLostError, OutputLockedError } from '../model/build-errors.ts';
import { assertOutputLockHeld, LOCK_NAME, LOCK_OWNER_NAME, lockOutputDirectory } from './build-lock.ts';

const HOLDER = path.join(path.dirname(new URL(import.meta.url).pathname), 'testing', 'hold-output-lock.ts');

let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(path.join(os.tmpdir(), 'duplexsynth-lock-'));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

/** Start a child holding the lock on `directory`; resolves once it printed `locked`. */
async function startHolder(
  directory: string,
  staleMilliseconds: number,
  updateMilliseconds: number,
): Promise<{ child: ChildProcess; output: () => string }> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', HOLDER, directory, String(staleMilliseconds), String(updateMilliseconds)],
    { stdio: ['pipe', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr!.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  for (let waited = 0; !output.includes('locked'); waited += 50) {
    if (child.exitCode !== null || waited > 60_000) throw new Error(`the lock holder did not start: ${output}`);
    await sleep(50);
  }
  return { child, output: () => output };
}

function exited(child: ChildProcess): Promise<void> {
  return child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve()
    : new Promise((resolve) => child.once('exit', () => resolve()));
}

describe('output folder lock', () => {
  it('records host, PID and start time of its holder, and removes the record on release', async () => {
    const directory = path.join(scratch, 'record');
    await mkdir(directory);
    const lock = await lockOutputDirectory(directory);
    const owner = JSON.parse(await readFile(path.join(directory, LOCK_OWNER_NAME), 'utf8'));
    expect(owner).toMatchObject({ pid: process.pid, host: expect.stringMatching(/^[0-9a-f]{8}$/) });
    expect(typeof owner.startTime).toBe('number');
    await expect(lockOutputDirectory(directory)).rejects.toThrow(OutputLockedError);
    await lock.release();
    expect(existsSync(path.join(directory, LOCK_NAME))).toBe(false);
    expect(existsSync(path.join(directory, LOCK_OWNER_NAME))).toBe(false);
  });

  it('a holder killed with SIGKILL on this host: the next build takes the lock over at once', async () => {
    const directory = path.join(scratch, 'killed');
    await mkdir(directory);
    // the default timing: a lock of another host would count as stale only after 60 s
    const holder = await startHolder(directory, 60_000, 10_000);
    holder.child.kill('SIGKILL');
    await exited(holder.child);
    expect(existsSync(path.join(directory, LOCK_NAME))).toBe(true); // left behind, fresh
    const logged: string[] = [];
    const lock = await lockOutputDirectory(directory, { log: (line) => logged.push(line) });
    expect(logged).toEqual([
      `lock: ${directory}: the build that held it (PID ${holder.child.pid}) no longer runs; taking it over`,
    ]);
    await lock.release();
  });

  it('a holder killed after taking the lock but before renaming its candidate record: taken over at once; a live one in that moment is refused', async () => {
    // the state such a kill leaves: the lock folder, the candidate record, no owner record (the
    // kill -9 trial of build-failures.test.ts once landed there under load and waited for the stale time)
    const inTheGap = async (name: string) => {
      const directory = path.join(scratch, name);
      await mkdir(directory);
      const holder = await startHolder(directory, 60_000, 10_000);
      await rename(
        path.join(directory, LOCK_OWNER_NAME),
        path.join(directory, `.duplexsynth.lock.candidate.${holder.child.pid}.json`),
      );
      return { directory, holder };
    };
    const live = await inTheGap('gap-live');
    await expect(lockOutputDirectory(live.directory)).rejects.toThrow(
      new RegExp(`another duplexsynth build \\(PID ${live.holder.child.pid}, since `),
    );
    live.holder.child.kill('SIGKILL');
    await exited(live.holder.child);

    const killed = await inTheGap('gap-killed');
    killed.holder.child.kill('SIGKILL');
    await exited(killed.holder.child);
    const logged: string[] = [];
    const lock = await lockOutputDirectory(killed.directory, { log: (line) => logged.push(line) });
    expect(logged).toEqual([
      `lock: ${killed.directory}: the build that held it (PID ${killed.holder.child.pid}) no longer runs; taking it over`,
    ]);
    // the dead build's candidate record is gone, ours became the owner record
    expect((await readdir(killed.directory)).filter((name) => name.startsWith('.duplexsynth.lock')).sort()).toEqual(
      [LOCK_NAME, LOCK_OWNER_NAME].sort(),
    );
    expect(JSON.parse(await readFile(path.join(killed.directory, LOCK_OWNER_NAME), 'utf8')).pid).toBe(process.pid);
    await lock.release();
    expect((await readdir(killed.directory)).filter((name) => name.startsWith('.duplexsynth.lock'))).toEqual([]);
  });

  it('a holder paused (SIGSTOP) longer than the stale time keeps its lock: it still runs on this host', async () => {
    const directory = path.join(scratch, 'paused');
    await mkdir(directory);
    const holder = await startHolder(directory, 2000, 1000);
    holder.child.kill('SIGSTOP');
    try {
      await sleep(3500); // past the stale time with no update
      const error = await lockOutputDirectory(directory, { staleMilliseconds: 2000, updateMilliseconds: 1000 }).then(
        () => undefined,
        (caught: unknown) => caught,
      );
      expect(error).toBeInstanceOf(OutputLockedError);
      expect((error as Error).message).toMatch(
        new RegExp(
          `^${directory}: another duplexsynth build \\(PID ${holder.child.pid}, since .*\\) is writing into this folder; .*it is running on this host\\)$`,
        ),
      );
    } finally {
      holder.child.kill('SIGCONT');
    }
    holder.child.stdin!.end();
    await exited(holder.child);
    // resumed, it still held its lock (nobody took it) and released it normally
    expect(holder.output()).toContain('released');
  });

  it('a lock taken away while the build runs: a one-line LockLostError, and no dataset is committed into the folder', async () => {
    const directory = path.join(scratch, 'lost');
    await mkdir(directory);
    const lock = await lockOutputDirectory(directory, { staleMilliseconds: 2000, updateMilliseconds: 1000 });
    const dataset = path.join(directory, 'data/en/task/topiocqa');
    const writer = await DatasetWriter.open(dataset);
    await writer.addDialogue({
      id: 'd1',
      tracks: [new Float32Array(1600), new Float32Array(1600)],
      sampleRate: 16000,
      eventsLine: '{"id": "d1"}',
      words: [],
      metadata: { id: 'd1', speakers: {}, durationSeconds: 0.01, utterances: [] },
    });
    // another build (on another host, say) removes the lock and takes it
    await rm(path.join(directory, LOCK_NAME), { recursive: true, force: true });
    const release = await lockfile.lock(directory, { lockfilePath: path.join(directory, LOCK_NAME), realpath: false });
    try {
      const error = await lock.lost.then(
        () => undefined,
        (caught: unknown) => caught,
      );
      expect(error).toBeInstanceOf(LockLostError);
      const message = (error as Error).message;
      expect(message.split('\n')).toHaveLength(1);
      expect(message).toMatch(
        new RegExp(
          `^${directory}: this build lost its lock on the folder \\(.*\\); another build may be writing into it, so it stopped without committing`,
        ),
      );
      expect(() => lock.assertHeld()).toThrow(LockLostError);
      expect(() => assertOutputLockHeld(dataset)).toThrow(LockLostError);
      await expect(writer.commit({ language: 'en', dataset: 'topiocqa', domain: 'task' })).rejects.toThrow(
        LockLostError,
      );
      expect(existsSync(dataset)).toBe(false);
      await lock.release(); // nothing to give back: no error
    } finally {
      await release();
    }
  });
});
