/**
 * The speech recognition check (`quality.speechRecognition`) in local and queued builds: CosyVoice2
 * on a loopback server, a loopback transcription service that hears each clip with its last word
 * dropped when it holds eight words or more (an error rate of at most 1/8, accepted), a real
 * redis-server this file starts on a free loopback port, and a worker in this process. The counts are
 * stored with each clip's synthesis cache entry and summed over the dataset's dialogues, so a cold
 * local build, a local rebuild from the warm cache (nothing transcribed), a cold queued build and a
 * queued rebuild write the same summaries.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
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

/**
 * Builds the first two demo dialogues in English into `root` (its output and cache folders), locally
 * or through the queue with one worker in this process; built again into the same `root`, every clip
 * comes from its cache. A text `tagged` says is spoken after the language tag `en`.
 */
async function buildWith(root: string, queued: boolean, tagged: (text: string) => boolean = () => false) {
  const spoken: string[] = [];
  const faults: FaultScript = ({ text }) => {
    if (!tagged(text)) {
      spoken.push(text);
      return null;
    }
    spoken.push(`en ${text}`);
    return { kind: 'leading-speech', text: 'en' };
  };
  const cosyvoice = await startCosyVoiceLoopbackServer({ faults });
  // one utterance is synthesized at a time (one worker, one job, synthesis concurrency 1): the last reply is the one heard
  const asr = await startTranscriptionLoopbackServer({ responder: () => heard(spoken[spoken.length - 1] ?? '') });
  try {
    const config = await loopbackCosyVoiceConfig({
      name: 'recognized',
      scratch: path.join(scratch, root),
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
    const summaryText = await readFile(path.join(config.output.directory, 'summary.json'), 'utf8');
    const datasetSummary = JSON.parse(
      await readFile(path.join(report.outputDirectory, 'data/en/task/topiocqa/summary.json'), 'utf8'),
    );
    // the utterances of the dataset's dialogues, as their metadata lists them (backchannels apart)
    const metadata = path.join(report.outputDirectory, 'data/en/task/topiocqa/metadata');
    let utterances = 0;
    for (const file of await readdir(metadata))
      utterances += JSON.parse(await readFile(path.join(metadata, file), 'utf8')).utterances.length;
    return { report, summary, summaryText, markdown, datasetSummary, utterances, cosyvoice, asr };
  } finally {
    await cosyvoice.close();
    await asr.close();
  }
}

/** The cold local build, which the others are compared with, and the local rebuild from its cache. */
let local: Awaited<ReturnType<typeof buildWith>>;
let localWarm: Awaited<ReturnType<typeof buildWith>>;

describe('the speech recognition check in local and queued builds', () => {
  it(
    'writes the same word error rate when a local build is built again from its cache',
    { timeout: 600_000 },
    async () => {
      local = await buildWith('local', false);
      // every clip from the synthesis cache, none transcribed: the counts come from the cache entries
      localWarm = await buildWith('local', false);
      expect(local.report.datasets[0]!.failed).toEqual([]);
      const expected = local.summary.datasets[0].speechRecognition;
      expect(expected.utterances).toBe(local.utterances);
      expect(expected.utterances).toBeGreaterThan(10);
      expect(expected.edits).toBeGreaterThan(0);
      expect(expected.errorRate).toBeGreaterThan(0);
      expect(local.datasetSummary.speechRecognition).toEqual(expected);
      const rate = `word error rate ${expected.errorRate.toFixed(3)} (${expected.edits} edits in ${expected.referenceTokens} words, ${expected.utterances} utterances)`;
      expect(local.markdown).toContain(rate);

      const warm = localWarm;
      expect(warm.cosyvoice.requests).toHaveLength(0);
      expect(warm.asr.requests).toHaveLength(0);
      expect(warm.summary.datasets[0].speechRecognition).toEqual(expected);
      expect(warm.summaryText).toBe(local.summaryText);
      expect(warm.markdown).toBe(local.markdown);
    },
  );

  it(
    "writes the local build's word error rate in a queued build and in its rebuild",
    { timeout: 600_000 },
    async () => {
      const expected = local.summary.datasets[0].speechRecognition;
      const queued = await buildWith('queued', true);
      expect(queued.report.datasets[0]!.failed).toEqual([]);
      // the worker synthesized and transcribed every clip, the coordinator none
      expect(queued.cosyvoice.requests).toHaveLength(local.cosyvoice.requests.length);
      expect(queued.asr.requests).toHaveLength(local.asr.requests.length);
      expect(queued.summary.datasets[0].speechRecognition).toEqual(expected);
      expect(queued.datasetSummary.speechRecognition).toEqual(expected);
      expect(queued.summaryText).toBe(local.summaryText);
      expect(queued.summaryText).toBe(localWarm.summaryText);
      expect(queued.markdown).toBe(local.markdown);

      // the records and clips from the cache, nothing synthesized or transcribed
      const warm = await buildWith('queued', true);
      expect(warm.cosyvoice.requests).toHaveLength(0);
      expect(warm.asr.requests).toHaveLength(0);
      expect(warm.summaryText).toBe(local.summaryText);
      expect(warm.markdown).toBe(local.markdown);
    },
  );

  it(
    'counts the dialogues written, not the accepted clips of a dialogue that failed, locally and queued',
    { timeout: 600_000 },
    async () => {
      // the first utterance of at most three words synthesized (one inserted word is above 0.25), every time it is asked for
      let first: string | null = null;
      const tagged = (text: string) => {
        if (first === null && text.split(/\s+/).length <= 3) first = text;
        return text === first;
      };
      const localTagged = await buildWith('local-tagged', false, tagged);
      expect(localTagged.report.datasets[0]!.failed).toHaveLength(1);
      const expected = localTagged.summary.datasets[0].speechRecognition;
      expect(expected.utterances).toBe(localTagged.utterances);
      expect(expected.utterances).toBeGreaterThan(5);
      // its job fails on the worker and again here: neither counts its accepted clips
      const queued = await buildWith('queued-tagged', true, tagged);
      expect(queued.report.datasets[0]!.failed).toHaveLength(1);
      expect(queued.summary.datasets[0].speechRecognition).toEqual(expected);
      // (the failure reasons name each build's own loopback port)
      const rate = `word error rate ${expected.errorRate.toFixed(3)} (${expected.edits} edits in ${expected.referenceTokens} words, ${expected.utterances} utterances)`;
      expect(localTagged.markdown).toContain(rate);
      expect(queued.markdown).toContain(rate);
    },
  );
});
