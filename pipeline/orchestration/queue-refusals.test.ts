/**
 * A queued build whose only worker refuses it (another config): the worker records the refusal in
 * Redis and the coordinator prints it at once; with jobs waiting and no worker taking one for
 * `--idle-seconds` the coordinator says so naming the queue, and after `--give-up-seconds` more it
 * stops with exit code 4, leaving no `.partial` in its output folder. A real redis-server on a free
 * loopback port, the worker and the coordinator as CLI processes (the CLI from the sources).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectQueue } from './build-queue.ts';
import { freePort } from './queued-build.bench.ts';
import { readRefusals, recordRefusal, refusalsKey } from './queue-refusals.ts';
import { TEST_CLI } from '../../scripts/testing/cli-command.ts';

/** A process with its output collected, and a way to wait for a line. */
interface Running {
  output: () => string;
  exited: Promise<number | null>;
  waitFor: (pattern: RegExp) => Promise<void>;
}

function cli(args: string[]): Running {
  const child = spawn(process.execPath, [TEST_CLI, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, DUPLEXSYNTH_SHARED: process.env.DUPLEXSYNTH_SHARED ?? '/work/shared' },
  });
  let text = '';
  const waiters: { pattern: RegExp; resolve: () => void }[] = [];
  const take = (chunk: Buffer) => {
    text += chunk.toString();
    for (const waiter of [...waiters])
      if (waiter.pattern.test(text)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve();
      }
  };
  child.stdout!.on('data', take);
  child.stderr!.on('data', take);
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return {
    output: () => text,
    exited,
    waitFor: (pattern) =>
      new Promise<void>((resolve, reject) => {
        if (pattern.test(text)) return resolve();
        waiters.push({ pattern, resolve });
        void exited.then(() =>
          setTimeout(
            () => (pattern.test(text) ? resolve() : reject(new Error(`exited before ${pattern}:\n${text}`))),
            100,
          ),
        );
      }),
  };
}

let scratch: string;
let redisPort: number;
let redis: ChildProcess;
const queueUrl = () => `redis://127.0.0.1:${redisPort}/0`;

async function startRedis(): Promise<void> {
  redis = spawn('redis-server', ['--port', String(redisPort), '--bind', '127.0.0.1', '--save', ''], {
    stdio: 'ignore',
  });
  for (let tries = 0; tries < 100; tries += 1) {
    const ping = spawn('redis-cli', ['-p', String(redisPort), 'ping'], { stdio: ['ignore', 'pipe', 'ignore'] });
    const answer = await new Promise<string>((resolve) => {
      let out = '';
      ping.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
      ping.on('exit', () => resolve(out));
    });
    if (answer.includes('PONG')) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('redis-server did not start');
}

/** A build config of two short dialogues (offline engine, rules rewrite); returns its file and output folder. */
async function writeConfig(label: string, seed: number): Promise<{ file: string; out: string }> {
  const out = path.join(scratch, `${label}-out`);
  const file = path.join(scratch, `${label}.yaml`);
  await writeFile(
    file,
    [
      'name: refused',
      `seed: ${seed}`,
      'languages: [en]',
      `corpus: { path: ${path.join(scratch, 'two.json')} }`,
      `output: { directory: ${out}, cacheDirectory: ${path.join(scratch, 'cache')} }`,
      'datasets: { en: two, bargeIn: true }',
      'llm: { rewrite: { backend: rules }, translate: { backend: none } }',
      'tts: { en: { backend: espeak-ng } }',
      'quality: { enabled: false }',
      '',
    ].join('\n'),
  );
  return { file, out };
}

/** Two one-turn conversations in the TopiOCQA raw-release layout. */
function corpus(): unknown[] {
  return ['Eiffel Tower', 'Mount Fuji'].map((topic, index) => ({
    Context: [],
    Conversation_no: index + 1,
    Turn_no: 1,
    Question: `where is the ${topic.toLowerCase()}`,
    Answer: `The ${topic} is a famous place visited by many people every year.`,
    Topic: topic,
    Topic_section: 'Introduction',
    Rationale: '',
    Additional_answers: [],
    is_nq: false,
    Gold_passage: { id: `q:${index}`, title: topic, text: topic },
  }));
}

beforeAll(async () => {
  scratch = await mkdtemp(path.join(os.tmpdir(), 'duplexsynth-refusals-'));
  await writeFile(path.join(scratch, 'two.json'), JSON.stringify(corpus()));
  redisPort = await freePort();
  await startRedis();
});

afterAll(async () => {
  const exited = new Promise((resolve) => redis.on('exit', resolve));
  redis.kill('SIGTERM');
  await exited;
  await rm(scratch, { recursive: true, force: true });
});

describe('refusals in Redis', () => {
  it('are kept per build (the stamp marker token) and read after the last one read', async () => {
    const client = await connectQueue(queueUrl());
    try {
      const stamp = { configHash: 'h', version: '0', markerToken: 'token-a', name: 'b' };
      await recordRefusal(client, stamp, { worker: 'w1', reason: 'first' });
      await recordRefusal(client, stamp, { worker: 'w2', reason: 'second' });
      await recordRefusal(client, { ...stamp, markerToken: 'token-b' }, { worker: 'w3', reason: 'other build' });
      const all = await readRefusals(client, stamp);
      expect(all.map(({ worker, reason }) => [worker, reason])).toEqual([
        ['w1', 'first'],
        ['w2', 'second'],
      ]);
      expect((await readRefusals(client, stamp, all[0]!.id)).map((entry) => entry.worker)).toEqual(['w2']);
      expect(await client.ttl(refusalsKey(stamp))).toBeGreaterThan(0);
    } finally {
      client.disconnect();
    }
  });
});

describe('a queued build whose only worker refuses it', () => {
  it(
    'prints the refusal, says no worker takes a job naming the queue, and stops with exit code 4 and no .partial',
    { timeout: 600_000 },
    async () => {
      const build = await writeConfig('build', 7);
      const other = await writeConfig('other', 8);
      // the worker is up before the build exists: it refuses as soon as the build is stamped
      const worker = cli(['worker', '--queue', queueUrl(), '--config', other.file, '--name', 'elsewhere']);
      await worker.waitFor(/waiting for a build/);
      const coordinator = cli([
        'build',
        '--queue',
        queueUrl(),
        '--config',
        build.file,
        '--idle-seconds',
        '4',
        '--give-up-seconds',
        '4',
      ]);
      expect(await worker.exited).toBe(2);
      expect(await coordinator.exited, coordinator.output()).toBe(4);
      const lines = coordinator.output().trim().split('\n');
      const described = '127.0.0.1:' + String(redisPort);
      const refusal = lines.findIndex((line) =>
        /queue: worker elsewhere refused the build refused on .*: this worker's config \(hash \w+\) differs from the build's/.test(
          line,
        ),
      );
      const idle = lines.findIndex((line) =>
        /queue: 2 jobs waiting on \S+ and no worker has taken one for \d+ s \(1 refused the build\); the build stops in \d+ s/.test(
          line,
        ),
      );
      expect(refusal, coordinator.output()).toBeGreaterThanOrEqual(0);
      expect(idle, coordinator.output()).toBeGreaterThan(refusal);
      expect(lines[idle]).toContain(described);
      expect(lines.at(-1)).toMatch(
        /^duplexsynth: queue: no worker took a job on \S+ for \d+ s \(1 refused the build\); stopped, nothing was written/,
      );
      const left = existsSync(build.out) ? await readdir(build.out, { recursive: true }) : [];
      expect(left.filter((entry) => entry.includes('.partial'))).toEqual([]);
      expect(existsSync(path.join(build.out, 'data'))).toBe(false);
    },
  );
});
