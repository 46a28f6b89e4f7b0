/**
 * The queued build (`build --queue`, `worker`) against a real redis-server this file starts on a free
 * loopback port, with real worker and coordinator processes (the CLI from the sources). Every build
 * here makes the same 6 short dialogues (offline engine, rules rewrite) and is compared, file by
 * file under data/, with one local build made once in beforeAll.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createServer } from 'node:net';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { loadConfigFile } from '../config.ts';
import { runBuild } from './build.ts';
import { runRecordFile } from './build-status.ts';
import { Queue } from 'bullmq';
import { connectQueue, DIALOGUES_QUEUE, parseQueueUrl, WORKERS_KEY } from './build-queue.ts';
import { formatQueueCounts, readQueueCounts, settledWorkerCounts } from './queued-build.ts';
import { freePort } from './queued-build.bench.ts';
import { readRedisCommandCounts, resetRedisCommandCounts, type RedisCommandCounts } from './redis-command-count.ts';
import { TEST_CLI } from '../../scripts/testing/cli-command.ts';

const CLI = TEST_CLI; // the compiled command when dist/ is a build of these sources, else the sources through tsx (scripts/testing/cli-command.ts)

/** A process with its output collected, and a way to wait for a line. */
interface Running {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
  waitFor: (pattern: RegExp, seconds?: number) => Promise<void>;
}

function run(command: string, args: string[]): Running {
  const child = spawn(command, args, {
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
    child,
    output: () => text,
    exited,
    waitFor: (pattern, seconds = 240) =>
      new Promise<void>((resolve, reject) => {
        if (pattern.test(text)) return resolve();
        const timer = setTimeout(
          () => reject(new Error(`no ${pattern} within ${seconds} s; output:\n${text}`)),
          seconds * 1000,
        );
        waiters.push({ pattern, resolve: () => (clearTimeout(timer), resolve()) });
        void exited.then(() => setTimeout(() => reject(new Error(`exited before ${pattern}; output:\n${text}`)), 100));
      }),
  };
}

function cli(args: string[]): Running {
  return run(process.execPath, [CLI, ...args]);
}

/** Every file under `directory`, relative path → sha256 of its bytes (a deep comparison of the bytes themselves takes minutes). */
async function filesUnder(directory: string): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  for (const entry of await readdir(directory, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const file = path.join(entry.parentPath, entry.name);
    files.set(
      path.relative(directory, file),
      createHash('sha256')
        .update(await readFile(file))
        .digest('hex'),
    );
  }
  return files;
}

/** Six two-turn conversations in the TopiOCQA raw-release layout. */
function corpus(): unknown[] {
  const topics = ['Eiffel Tower', 'Mount Fuji', 'River Thames', 'Great Wall', 'Lake Baikal', 'Sahara'];
  return topics.flatMap((topic, index) => [
    {
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
    },
    {
      Context: [],
      Conversation_no: index + 1,
      Turn_no: 2,
      Question: 'how old is it?',
      Answer: 'It is very old, older than most buildings in the region around it.',
      Topic: topic,
      Topic_section: 'History',
      Rationale: '',
      Additional_answers: [],
      is_nq: false,
      Gold_passage: { id: `q:${index}b`, title: topic, text: topic },
    },
  ]);
}

let scratch: string;
let redisPort: number;
let redis: ChildProcess | null = null;
let reference: Map<string, string>;
let serial = 0;

async function startRedis(): Promise<void> {
  redis = spawn(
    'redis-server',
    [
      '--port',
      String(redisPort),
      '--bind',
      '127.0.0.1',
      '--dir',
      scratch,
      '--appendonly',
      'yes',
      '--appendfsync',
      'always',
      '--save',
      '',
    ],
    { stdio: 'ignore' },
  );
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

async function stopRedis(): Promise<void> {
  if (!redis) return;
  const exited = new Promise((resolve) => redis!.on('exit', resolve));
  redis.kill('SIGTERM');
  await exited;
  redis = null;
}

async function redisCommand(...args: string[]): Promise<void> {
  const child = spawn('redis-cli', ['-p', String(redisPort), ...args], { stdio: 'ignore' });
  await new Promise((resolve) => child.on('exit', resolve));
}

/** A build config of the six dialogues with its own output and cache folders; returns its file. */
async function writeConfig(
  label: string,
  changes: { seed?: number; cache?: string; queue?: string; scored?: boolean } = {},
): Promise<{ file: string; out: string; cache: string }> {
  serial += 1;
  const out = path.join(scratch, `${label}-out`);
  const cache = changes.cache ?? path.join(scratch, `${label}-cache`);
  const file = path.join(scratch, `${label}-${serial}.yaml`);
  await writeFile(
    file,
    [
      'name: queued',
      `seed: ${changes.seed ?? 7}`,
      'languages: [en]',
      `corpus: { path: ${path.join(scratch, 'six.json')} }`,
      `output: { directory: ${out}, cacheDirectory: ${cache} }`,
      'datasets: { en: six, bargeIn: true }',
      'llm: { rewrite: { backend: rules }, translate: { backend: none } }',
      'tts: { en: { backend: espeak-ng } }',
      'synthesis: { concurrency: 1 }',
      // scored: DNSMOS every 9.01 s (an eighth of the reference's model runs), the rest as the default
      changes.scored ? 'quality: { enabled: true, dnsmos: { hopSeconds: 9.01 } }' : 'quality: { enabled: false }',
      ...(changes.queue ? [`queue: ${changes.queue}`] : []),
      '',
    ].join('\n'),
  );
  return { file, out, cache };
}

const queueUrl = () => `redis://127.0.0.1:${redisPort}/0`;

describe('a build queued on Redis (BullMQ) and run by worker processes', () => {
  beforeAll(async () => {
    scratch = await mkdtemp(path.join(os.tmpdir(), 'duplexsynth-queue-'));
    await writeFile(path.join(scratch, 'six.json'), JSON.stringify(corpus()));
    redisPort = await freePort();
    await startRedis();
    // the one-machine build every queued build must equal
    const local = await writeConfig('local');
    await runBuild(await loadConfigFile(local.file));
    reference = await filesUnder(path.join(local.out, 'data'));
    expect(
      [...reference.keys()].filter((file) => file.endsWith('.wav') && file.split(/[\\/]/).includes('audio')),
    ).toHaveLength(12); // 6 dialogues, base and barge-in (the full-band masters are in audio_fullband/)
  }, 600_000);

  afterAll(async () => {
    await stopRedis();
    await rm(scratch, { recursive: true, force: true });
  });

  beforeEach(async () => {
    if (!redis) await startRedis();
    await redisCommand('flushall');
  });

  it(
    '3 workers build the same dialogues as one machine: every file under data/ byte-identical; the progress names each worker with its counts; a rate limit holds across the workers',
    { timeout: 600_000 },
    async () => {
      const { file, out, cache } = await writeConfig('three');
      // at most 1 dialogue job started per 2 s over all three workers (BullMQ's limiter, kept in Redis),
      // although each could take 2 at once: 6 jobs start over at least 5 windows
      const workers = ['a', 'b', 'c'].map((name) =>
        cli([
          'worker',
          '--queue',
          queueUrl(),
          '--config',
          file,
          '--name',
          name,
          '--concurrency',
          '2',
          '--rate-limit',
          '1/2',
        ]),
      );
      // when each worker said it took a dialogue job (it says so as the job starts)
      const tookAt: number[] = [];
      for (const worker of workers)
        worker.child.stderr!.on('data', (chunk: Buffer) =>
          tookAt.push(...(chunk.toString().match(/took dialogue/g) ?? []).map(() => Date.now())),
        );
      // every worker is ready before the jobs exist, so without the limit the 6 jobs would start at once
      await Promise.all(workers.map((worker) => worker.waitFor(/waiting for a build/)));
      const coordinator = cli(['build', '--queue', queueUrl(), '--config', file]);
      expect(await coordinator.exited, coordinator.output()).toBe(0);
      for (const worker of workers) worker.child.kill('SIGTERM');
      await Promise.all(workers.map((worker) => worker.exited));
      // what each process said, for the message of any check below that fails (so that a rare failure is explained by its message)
      const said = () =>
        [
          `coordinator:\n${coordinator.output()}`,
          ...workers.map((worker, index) => `worker ${'abc'[index]}:\n${worker.output()}`),
        ].join('\n');
      expect(await filesUnder(path.join(out, 'data')), said()).toEqual(reference);
      // every dialogue job was taken by some worker. Which one is BullMQ's race: under the shared rate
      // limit every worker waits for the next window and the first to ask gets its job, so one worker can
      // take all six when the others are slow to ask; that another
      // worker takes over a job is the kill -9 test's check
      const took = workers.map((worker) => (worker.output().match(/took dialogue/g) ?? []).length);
      expect(
        took.reduce((a, b) => a + b, 0),
        said(),
      ).toBeGreaterThanOrEqual(6);
      expect(coordinator.output()).toMatch(/queue: jobs: 0 waiting, 0 active, 6 done, 0 failed/);
      // the coordinator's last count names each worker that took jobs, with the jobs it says it built
      const counts = coordinator
        .output()
        .split('\n')
        .filter((line) => line.includes('queue: jobs:'))
        .at(-1)!;
      for (const [index, name] of ['a', 'b', 'c'].entries()) {
        const built = (workers[index]!.output().match(/built en\//g) ?? []).length;
        if (built > 0) expect(counts, said()).toContain(`${name} 0 active ${built} done`);
      }
      // the 6 starts span at least 5 windows of 2 s (8 s allowed for the lines' delivery)
      tookAt.sort((a, b) => a - b);
      expect(tookAt.length, said()).toBeGreaterThanOrEqual(6);
      expect(
        tookAt.at(-1)! - tookAt[0]!,
        `job starts at ${tookAt.map((time) => time - tookAt[0]!).join(', ')} ms\n${said()}`,
      ).toBeGreaterThanOrEqual(8000);
      // the coordinator wrote every dialogue from the workers' records: it placed, rendered and synthesized nothing
      const record = JSON.parse(await readFile(runRecordFile(cache, 'queued', path.resolve(out)), 'utf8')) as {
        cache: Record<string, { hits: number; misses: number }>;
      };
      expect(record.cache['dialogue-record'], said()).toEqual({ hits: 6, misses: 0, corrupt: 0 });
      expect(record.cache['place-timeline'], said()).toBeUndefined();
      expect(record.cache['synthesize-speech'], said()).toBeUndefined();
      // and wrote every report page the workers drew
      expect(record.cache['dialogue-pages'], said()).toEqual({ hits: 12, misses: 0, corrupt: 0 });
      expect(coordinator.output(), said()).toMatch(/12 of 12 dialogue pages made during the build/);
    },
  );

  it("the final count waits for the workers' own counts to catch up with the queue's (a worker counts on BullMQ's completed and failed events, a moment after the queue marks the job), done and failed alike, and gives up after 2 s on a count that never comes", async () => {
    const client = await connectQueue(queueUrl());
    const queue = new Queue(DIALOGUES_QUEUE, { connection: parseQueueUrl(queueUrl()) });
    const worker = `${WORKERS_KEY}:b`;
    try {
      await client.multi().sadd(WORKERS_KEY, 'b').hset(worker, 'started', '4', 'done', '3').exec();
      // what the coordinator read when the queue said 4 jobs done: worker b's 4th not counted yet
      const seen = { ...(await readQueueCounts(queue, client)), done: 4 };
      expect(formatQueueCounts(seen)).toContain('b 1 active 3 done');
      let started = Date.now();
      setTimeout(() => void client.hincrby(worker, 'done', 1), 300);
      const settled = await settledWorkerCounts(queue, client, seen);
      expect(Date.now() - started).toBeGreaterThanOrEqual(250);
      expect(formatQueueCounts(settled)).toContain('b 0 active 4 done');
      // a job that failed its last attempt: the queue counts it failed before the worker does
      await client.hincrby(worker, 'started', 1);
      const failedSeen = { ...(await readQueueCounts(queue, client)), done: 4, failed: 1 };
      started = Date.now();
      setTimeout(() => void client.multi().hincrby(worker, 'failed', 1).hincrby(worker, 'gaveUp', 1).exec(), 300);
      const failedSettled = await settledWorkerCounts(queue, client, failedSeen);
      expect(Date.now() - started).toBeGreaterThanOrEqual(250);
      expect(formatQueueCounts(failedSettled)).toContain('b 0 active 4 done 1 failed');
      // settled at once: no wait
      started = Date.now();
      await settledWorkerCounts(queue, client, failedSettled);
      expect(Date.now() - started).toBeLessThan(1500); // not the 2 s of a count that never comes
      // a count that never comes (a worker killed between the queue's mark and its own count): the last reading, after about 2 s
      started = Date.now();
      const given = await settledWorkerCounts(queue, client, { ...failedSettled, done: 5 });
      expect(Date.now() - started).toBeGreaterThanOrEqual(1900);
      expect(formatQueueCounts(given)).toContain('b 0 active 4 done 1 failed');
    } finally {
      await queue.close();
      client.disconnect();
    }
  });

  it(
    'scored: the workers score both WAVs of every dialogue; the coordinator writes, scores, splits and reports from their records and reads no audio; data and pages byte-identical to a scored local build',
    { timeout: 900_000 },
    async () => {
      const local = await writeConfig('scored-local', { scored: true });
      await runBuild(await loadConfigFile(local.file));
      const scoredReference = await filesUnder(path.join(local.out, 'data'));
      expect([...scoredReference.keys()].filter((file) => file.endsWith('quality.json'))).toHaveLength(2);
      const { file, out, cache } = await writeConfig('scored', { scored: true });
      const workers = ['a', 'b'].map((name) =>
        cli(['worker', '--queue', queueUrl(), '--config', file, '--name', name]),
      );
      const coordinator = cli(['build', '--queue', queueUrl(), '--config', file]);
      expect(await coordinator.exited, coordinator.output()).toBe(0);
      for (const worker of workers) worker.child.kill('SIGTERM');
      await Promise.all(workers.map((worker) => worker.exited));
      const said = () =>
        [coordinator, ...workers]
          .map((running, index) => `${['coordinator', 'a', 'b'][index]}:\n${running.output()}`)
          .join('\n');
      expect(await filesUnder(path.join(out, 'data')), said()).toEqual(scoredReference);
      // the dialogue pages (waveforms from the cache) are those of the local build
      expect(await filesUnder(path.join(out, 'report', 'dialogues')), said()).toEqual(
        await filesUnder(path.join(local.out, 'report', 'dialogues')),
      );
      const record = JSON.parse(await readFile(runRecordFile(cache, 'queued', path.resolve(out)), 'utf8')) as {
        cache: Record<string, { hits: number; misses: number }>;
      };
      // 6 records read; 12 WAVs (base and barge-in) scored and drawn by the workers: hits only; no stage ran
      expect(record.cache['dialogue-record'], said()).toEqual({ hits: 6, misses: 0, corrupt: 0 });
      expect(record.cache['dnsmos'], said()).toEqual({ hits: 12, misses: 0, corrupt: 0 });
      expect(record.cache['signal-checks'], said()).toEqual({ hits: 12, misses: 0, corrupt: 0 });
      // the pages were drawn by the workers: the coordinator only filled in each page's split
      expect(record.cache['dialogue-pages'], said()).toEqual({ hits: 12, misses: 0, corrupt: 0 });
      expect(record.cache['waveform-envelopes'], said()).toBeUndefined();
      for (const stage of ['prepare-text', 'synthesize-speech', 'place-timeline'])
        expect(record.cache[stage], `${stage}\n${said()}`).toBeUndefined();
    },
  );

  it(
    'the local pass runs alongside the workers: a dialogue whose job is done is written while other jobs still wait',
    { timeout: 600_000 },
    async () => {
      const { file, out } = await writeConfig('alongside');
      const coordinator = cli(['build', '--queue', queueUrl(), '--config', file]);
      // a worker that stops after two jobs: the other dialogues' jobs wait, with no worker to take them
      const early = cli(['worker', '--queue', queueUrl(), '--config', file, '--name', 'early', '--max-jobs', '2']);
      expect(await early.exited, early.output()).toBe(0);
      const built = (early.output().match(/built en\//g) ?? []).length;
      expect(built).toBeLessThan(6);
      // the first dialogues (jobs are taken first in, first out) are placed, rendered and written by the coordinator now
      await coordinator.waitFor(/\[en\] 1\/6 \S+: /, 120);
      expect(coordinator.output()).not.toMatch(/queue: every job is done/);
      const late = cli(['worker', '--queue', queueUrl(), '--config', file, '--name', 'late']);
      expect(await coordinator.exited, coordinator.output()).toBe(0);
      late.child.kill('SIGTERM');
      await late.exited;
      expect((late.output().match(/built en\//g) ?? []).length).toBe(6 - built);
      // the first dialogue's line came before the last job was done
      const output = coordinator.output();
      expect(output.indexOf('[en] 1/6 ')).toBeLessThan(output.indexOf('queue: every job is done'));
      expect(await filesUnder(path.join(out, 'data'))).toEqual(reference);
    },
  );

  it(
    "Redis commands per dialogue over the whole build (coordinator and worker) are bounded and do not grow with the build's length: a build whose worker starts 10 s late and takes one job per 4 s costs at most 20 commands per dialogue more than one whose worker takes them at once",
    { timeout: 600_000 },
    async () => {
      const client = await connectQueue(queueUrl());
      try {
        /** The whole build's commands, from the coordinator's start to its end. */
        const measure = async (label: string, slow: boolean): Promise<RedisCommandCounts> => {
          await redisCommand('flushall');
          const { file } = await writeConfig(label);
          const workerArgs = ['worker', '--queue', queueUrl(), '--config', file, '--name', label];
          let worker = slow ? null : cli(workerArgs);
          await worker?.waitFor(/waiting for a build/);
          await resetRedisCommandCounts(client);
          const coordinator = cli(['build', '--queue', queueUrl(), '--config', file]);
          if (slow) {
            await coordinator.waitFor(/waiting for the workers/);
            await new Promise((resolve) => setTimeout(resolve, 10_000));
            worker = cli([...workerArgs, '--rate-limit', '1/4']);
          }
          expect(await coordinator.exited, coordinator.output()).toBe(0);
          const counts = await readRedisCommandCounts(client);
          worker!.child.kill('SIGTERM');
          await worker!.exited;
          return counts;
        };
        const fast = await measure('fast', false);
        const slow = await measure('slow', true);
        const perDialogue = (counts: RedisCommandCounts) => ({
          commands: Math.round(counts.commands / 6),
          calls: Math.round(counts.calls / 6),
        });
        const said = `Redis commands per dialogue (INFO stats, INFO commandstats): fast ${JSON.stringify(perDialogue(fast))}, slow ${JSON.stringify(perDialogue(slow))}`;
        console.log(said);
        expect(fast.commands / 6, said).toBeLessThanOrEqual(120);
        expect(slow.commands / 6, said).toBeLessThanOrEqual(fast.commands / 6 + 20);
      } finally {
        client.disconnect();
      }
    },
  );

  it(
    'kill -9 of a worker in the middle of a job: the job completes on another worker, output byte-identical',
    { timeout: 600_000 },
    async () => {
      const { file, out } = await writeConfig('killed');
      const coordinator = cli(['build', '--queue', queueUrl(), '--config', file]);
      const doomed = cli([
        'worker',
        '--queue',
        queueUrl(),
        '--config',
        file,
        '--name',
        'doomed',
        '--stalled-seconds',
        '4',
      ]);
      await doomed.waitFor(/took dialogue en\/(\S+)/);
      const killedId = /took dialogue en\/(\S+)/.exec(doomed.output())![1]!;
      doomed.child.kill('SIGKILL');
      await doomed.exited;
      expect(doomed.output()).not.toMatch(new RegExp(`built en/${killedId}`));
      const rescuer = cli([
        'worker',
        '--queue',
        queueUrl(),
        '--config',
        file,
        '--name',
        'rescuer',
        '--stalled-seconds',
        '4',
      ]);
      expect(await coordinator.exited, coordinator.output()).toBe(0);
      rescuer.child.kill('SIGTERM');
      await rescuer.exited;
      expect(rescuer.output()).toMatch(new RegExp(`built en/${killedId}`));
      expect(await filesUnder(path.join(out, 'data'))).toEqual(reference);
    },
  );

  it(
    'Redis stopped mid-build and started again: one line each from coordinator and worker, and the build goes on',
    { timeout: 600_000 },
    async () => {
      const { file, out } = await writeConfig('restarted');
      const coordinator = cli(['build', '--queue', queueUrl(), '--config', file]);
      const worker = cli(['worker', '--queue', queueUrl(), '--config', file, '--name', 'steady']);
      await worker.waitFor(/built en\//);
      await stopRedis();
      await coordinator.waitFor(/lost Redis/);
      await worker.waitFor(/lost Redis/);
      await new Promise((resolve) => setTimeout(resolve, 2000));
      await startRedis();
      expect(await coordinator.exited, coordinator.output()).toBe(0);
      await worker.waitFor(/Redis at .* is back/);
      worker.child.kill('SIGTERM');
      await worker.exited;
      for (const running of [coordinator, worker]) {
        expect(running.output().match(/lost Redis/g)).toHaveLength(1);
        expect(running.output().match(/is back/g)).toHaveLength(1);
      }
      expect(await filesUnder(path.join(out, 'data'))).toEqual(reference);
    },
  );

  it(
    'Redis gone for good: the coordinator ends with one line and exit code 4, and no dataset is written',
    { timeout: 300_000 },
    async () => {
      const { file, out } = await writeConfig('abandoned');
      const coordinator = cli(['build', '--queue', queueUrl(), '--config', file, '--give-up-seconds', '3']);
      await coordinator.waitFor(/waiting for the workers/);
      await stopRedis();
      expect(await coordinator.exited).toBe(4);
      const lines = coordinator.output().trim().split('\n');
      expect(lines.at(-1)).toMatch(
        /^duplexsynth: queue: Redis at redis:\/\/127\.0\.0\.1:\d+\/0 gone for 3 s; nothing was written/,
      );
      expect(existsSync(path.join(out, 'data'))).toBe(false);
    },
  );

  it(
    'refuses, in one line each: a worker with another config, a worker that cannot see the cache, a --queue that is not Redis; Ctrl-C on the coordinator, then build again (queue: from the config) finishes the same jobs',
    { timeout: 600_000 },
    async () => {
      const { file } = await writeConfig('refusals');
      const coordinator = cli(['build', '--queue', queueUrl(), '--config', file]);
      await coordinator.waitFor(/waiting for the workers/);

      const otherSeed = await writeConfig('refusals', { seed: 8 });
      const wrongConfig = cli(['worker', '--queue', queueUrl(), '--config', otherSeed.file]);
      expect(await wrongConfig.exited).toBe(2);
      expect(wrongConfig.output().trim().split('\n').at(-1)).toMatch(
        /^duplexsynth: worker refused the build \S+ on \S+: this worker's config \(hash \w+\) differs from the build's/,
      );

      const blind = await writeConfig('refusals', { cache: path.join(scratch, 'elsewhere-cache') });
      const blindWorker = cli(['worker', '--queue', queueUrl(), '--config', blind.file]);
      expect(await blindWorker.exited).toBe(2);
      expect(blindWorker.output().trim().split('\n').at(-1)).toMatch(
        /^duplexsynth: worker refused the build \S+ on \S+: the cache .*elsewhere-cache is not the coordinator's/,
      );

      // answers like an HTTP server: a 400 to what it cannot parse, then closes (once: a client that
      // sends its next command before the close arrives must not make the test write after the end)
      const httpServer = createServer((socket) => {
        socket.on('error', () => {});
        socket.once('data', () => socket.end('HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n'));
      });
      await new Promise<void>((resolve) => httpServer.listen(0, '127.0.0.1', resolve));
      const httpPort = (httpServer.address() as { port: number }).port;
      for (const url of [`http://127.0.0.1:${httpPort}/`, `redis://127.0.0.1:${httpPort}/0`]) {
        const notRedis = cli(['worker', '--queue', url, '--config', file]);
        expect(await notRedis.exited).toBe(2);
        const output = notRedis.output().trim().split('\n');
        expect(output).toHaveLength(1);
        expect(output[0]).toMatch(/^duplexsynth: --queue .*: (not a Redis URL \(http\)|the server there is not Redis)/);
      }
      httpServer.close();
      // no queue on the command line or in the config
      const nowhere = cli(['worker', '--config', file]);
      expect(await nowhere.exited).toBe(2);
      expect(nowhere.output().trim().split('\n')).toEqual([
        expect.stringMatching(
          /^duplexsynth: worker: no queue to serve: pass --queue redis:\/\/HOST:PORT\/DB or set queue: in /,
        ),
      ]);

      coordinator.child.kill('SIGINT');
      expect(await coordinator.exited).toBe(130);
      expect(coordinator.output().trim().split('\n').at(-1)).toMatch(
        /^duplexsynth: build stopped by SIGINT; nothing committed; the jobs stay queued on .*; run the same build again to continue/,
      );

      // the jobs stayed queued: the same build again (its Redis named by `queue:` in the config this time) continues them
      const again = await writeConfig('refusals', { queue: queueUrl() });
      const resumed = cli(['build', '--config', again.file]);
      await resumed.waitFor(/waiting for the workers/);
      const worker = cli(['worker', '--config', again.file, '--name', 'late']);
      expect(await resumed.exited, resumed.output()).toBe(0);
      worker.child.kill('SIGTERM');
      await worker.exited;
      expect(resumed.output()).toMatch(/queue: \[en\] continuing the queued dataset/);
      expect(resumed.output()).toMatch(/queue: jobs: 0 waiting, 0 active, 6 done, 0 failed/);
      expect(await filesUnder(path.join(again.out, 'data'))).toEqual(reference);
    },
  );
});
