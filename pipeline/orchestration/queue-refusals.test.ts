/**
 * A queued build whose only worker refuses it (another config): the worker records the refusal in
 * Redis (an event on the dialogues queue's events stream) and the coordinator prints it at once; with jobs waiting and no worker taking one for
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
import { Queue } from 'bullmq';
import { DIALOGUES_QUEUE, parseQueueUrl } from './build-queue.ts';
import { QueueIdleError, QueueIdleWatch, REFUSAL_EVENT, publishRefusal } from './queue-refusals.ts';
import { lastEventId, subscribeQueueEvents } from './queue-job-events.ts';
import { readRedisCommandCounts, resetRedisCommandCounts } from './redis-command-count.ts';
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

describe('refusals on the events stream', () => {
  it("reach a QueueEvents reader with the build token, and only this build's are printed", async () => {
    const client = await connectQueue(queueUrl());
    const dialogues = new Queue(DIALOGUES_QUEUE, { connection: parseQueueUrl(queueUrl()) });
    const events = subscribeQueueEvents(dialogues, await lastEventId(client, dialogues));
    const lines: string[] = [];
    const watch = new QueueIdleWatch({
      dialogues,
      stamp: { markerToken: 'token-a', name: 'b' },
      log: (line) => lines.push(line),
      described: 'here',
      idleSeconds: 3600,
      redisDown: () => false,
      giveUp: () => {},
    });
    try {
      let seen = 0;
      const both = new Promise<void>((resolve) =>
        events.on(REFUSAL_EVENT as 'active', (fields: unknown) => {
          watch.refused(fields as Record<string, unknown>);
          if (++seen === 2) resolve();
        }),
      );
      await events.waitUntilReady();
      await publishRefusal(client, { markerToken: 'token-b' }, { worker: 'w0', reason: 'an earlier build' });
      await publishRefusal(client, { markerToken: 'token-a' }, { worker: 'w1', reason: 'another config\nsecond line' });
      await both;
      expect(lines).toEqual(['queue: worker w1 refused the build b on here: another config']);
    } finally {
      watch.end();
      await events.close();
      await dialogues.close();
      client.disconnect();
    }
  });

  it('costs no Redis command while jobs move, and one reading of the counts once nothing moved', async () => {
    const client = await connectQueue(queueUrl());
    const dialogues = new Queue('idle-watch-test', { connection: parseQueueUrl(queueUrl()) });
    await dialogues.waitUntilReady();
    const lines: string[] = [];
    const stopped: Error[] = [];
    await dialogues.add('dialogue', {});
    await resetRedisCommandCounts(client);
    const before = await readRedisCommandCounts(client);
    const watch = new QueueIdleWatch({
      dialogues,
      stamp: { markerToken: 't', name: 'b' },
      log: (line) => lines.push(line),
      described: 'here',
      idleSeconds: 1,
      giveUpSeconds: 1,
      noticeSeconds: 60,
      redisDown: () => false,
      giveUp: (error) => stopped.push(error),
    });
    try {
      // a job event every 200 ms for 2 s keeps it quiet
      for (let tick = 0; tick < 10; tick += 1) {
        watch.moved();
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      const during = await readRedisCommandCounts(client);
      // only the two INFO replies of the first reading (and this reading's own two) ran
      expect(during.commands - before.commands).toBeLessThanOrEqual(2);
      expect(lines).toEqual([]);
      await new Promise((resolve) => setTimeout(resolve, 2600));
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(
        /^queue: 1 jobs waiting on here and no worker has taken one for 1 s; the build stops in 1 s/,
      );
      expect(stopped.map((error) => error.message)).toEqual([
        expect.stringMatching(/^queue: no worker took a job on here for 2 s; stopped, nothing was written/),
      ]);
      expect(stopped[0]).toBeInstanceOf(QueueIdleError);
    } finally {
      watch.end();
      await dialogues.obliterate({ force: true });
      await dialogues.close();
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
