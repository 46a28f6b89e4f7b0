/**
 * The speech recognition check (`quality.speechRecognition`) in a queued build: CosyVoice2 on a
 * loopback server, a loopback transcription service that hears each clip with its last word dropped
 * when it holds eight words or more (an error rate of at most 1/8, accepted), a real redis-server this
 * file starts on a free loopback port, and a worker in this process. The workers synthesize and
 * count; the coordinator adds up the counts their dialogue records carry, so the queued build's
 * summaries hold the same word error rate as a local build of the same config.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTranscriptionLoopbackServer } from '../services/asr/testing/transcription-loopback-server.ts';
import { startCosyVoiceLoopbackServer } from '../services/tts/testing/cosyvoice-loopback-server.ts';
import type { FaultScript } from '../services/tts/testing/loopback-speech.ts';
import { writePromptManifest } from '../services/tts/testing/prompt-fixtures.ts';
import { runBuild } from './build.ts';
import { freePort } from './queued-build.bench.ts';
import { runQueuedBuild } from './queued-build.ts';
import { runQueueWorker } from './queue-worker.ts';
import { loopbackCosyVoiceConfig, readBuildSummaries } from './testing/loopback-cosyvoice-config.ts';

let scratch: string;
let manifest: string;
let redis: ChildProcess;
let queue: string;

beforeAll(async () => {
  scratch = await mkdtemp(path.join(os.tmpdir(), 'duplexsynth-queued-recognition-'));
  const prompts = path.join(scratch, 'prompts');
  await mkdir(prompts, { recursive: true });
  manifest = await writePromptManifest(prompts);
  const port = await freePort();
  redis = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--dir', scratch, '--save', ''], {
    stdio: 'ignore',
  });
  queue = `redis://127.0.0.1:${port}/0`;
  for (let tries = 0; ; tries += 1) {
    const client = new Redis({ port, lazyConnect: true, retryStrategy: () => null });
    client.on('error', () => {});
    try {
      await client.connect();
      client.disconnect();
      break;
    } catch {
      if (tries === 100) throw new Error('redis-server did not start');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
});

afterAll(async () => {
  const exited = new Promise((resolve) => redis.on('exit', resolve));
  redis.kill('SIGTERM');
  await exited;
  await rm(scratch, { recursive: true, force: true });
});

/** Words heard for `spoken`: its last word dropped when it holds eight or more. */
function heard(spoken: string): string {
  const words = spoken.split(/\s+/);
  return words.length >= 8 ? words.slice(0, -1).join(' ') : spoken;
}

/** Builds the first two demo dialogues in English, locally or through the queue with one worker in this process. */
async function buildWith(name: string, queued: boolean) {
  const spoken: string[] = [];
  const faults: FaultScript = ({ text }) => {
    spoken.push(text);
    return null;
  };
  const cosyvoice = await startCosyVoiceLoopbackServer({ faults });
  // one utterance is synthesized at a time (one worker, one job, synthesis concurrency 1): the last reply is the one heard
  const asr = await startTranscriptionLoopbackServer({ responder: () => heard(spoken[spoken.length - 1] ?? '') });
  try {
    const config = await loopbackCosyVoiceConfig({
      name,
      scratch,
      url: cosyvoice.url,
      voices: { speakerPrompts: { manifest } },
      quality: { enabled: false, speechRecognition: { baseUrl: `${asr.url}/v1` } },
    });
    let report;
    if (!queued) report = await runBuild(config);
    else {
      const stop = new AbortController();
      const worker = runQueueWorker(config, { queue, signal: stop.signal });
      try {
        report = await runQueuedBuild(config, { queue });
      } finally {
        stop.abort();
        await worker;
      }
    }
    const { summary, markdown } = await readBuildSummaries(config.output.directory);
    return { report, summary, markdown, cosyvoice, asr };
  } finally {
    await cosyvoice.close();
    await asr.close();
  }
}

describe('the speech recognition check in a queued build', () => {
  it(
    "writes the local build's word error rate into the summaries, from the counts the workers' records carry",
    { timeout: 600_000 },
    async () => {
      const local = await buildWith('local', false);
      const queued = await buildWith('queued', true);
      expect(queued.report.datasets[0]!.failed).toEqual([]);
      const expected = local.summary.datasets[0].speechRecognition;
      expect(expected.utterances).toBe(local.cosyvoice.requests.length);
      expect(expected.edits).toBeGreaterThan(0);
      expect(expected.errorRate).toBeGreaterThan(0);
      // the worker synthesized and transcribed every clip, the coordinator none
      expect(queued.cosyvoice.requests).toHaveLength(local.cosyvoice.requests.length);
      expect(queued.asr.requests).toHaveLength(local.asr.requests.length);
      expect(queued.summary.datasets[0].speechRecognition).toEqual(expected);
      const rate = `word error rate ${expected.errorRate.toFixed(3)} (${expected.edits} edits in ${expected.referenceTokens} words, ${expected.utterances} utterances)`;
      expect(local.markdown).toContain(rate);
      expect(queued.markdown).toContain(rate);
      const datasetSummary = JSON.parse(
        await readFile(path.join(queued.report.outputDirectory, 'data/en/task/topiocqa/summary.json'), 'utf8'),
      );
      expect(datasetSummary.speechRecognition).toEqual(expected);
    },
  );
});
