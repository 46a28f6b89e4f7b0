/**
 * The speech recognition check in a whole build (`quality.speechRecognition`): CosyVoice2 on a
 * loopback server, a loopback transcription service that returns what the loopback really spoke (the
 * two share a record of each reply's words; one utterance is synthesized at a time, so the last reply
 * is the one being transcribed). A server that speaks the language tag before one utterance gets its
 * dialogue quarantined with the error rate and what was heard; the summaries carry the error rate of
 * the dataset's dialogues, also when they are built again from the synthesis cache.
 */
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTranscriptionLoopbackServer } from '../services/asr/testing/transcription-loopback-server.ts';
import { startCosyVoiceLoopbackServer } from '../services/tts/testing/cosyvoice-loopback-server.ts';
import type { FaultScript } from '../services/tts/testing/loopback-speech.ts';
import { writePromptManifest } from '../services/tts/testing/prompt-fixtures.ts';
import { runBuild } from './build.ts';
import { loopbackCosyVoiceConfig, readBuildSummaries } from './testing/loopback-cosyvoice-config.ts';

let scratch: string;
let manifest: string;

beforeAll(async () => {
  scratch = await mkdtemp(path.join(os.tmpdir(), 'duplexsynth-recognition-'));
  const prompts = path.join(scratch, 'prompts');
  await mkdir(prompts, { recursive: true });
  manifest = await writePromptManifest(prompts);
});

afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

/**
 * Builds the first two demo dialogues in English with CosyVoice2 on a loopback server whose replies
 * start with `leading(text)` (nothing when null), checked by a loopback transcription service.
 */
async function buildWith(name: string, leading: (text: string) => string | null) {
  const spoken: string[] = [];
  const faults: FaultScript = ({ text }) => {
    const extra = leading(text);
    spoken.push(extra === null ? text : `${extra} ${text}`);
    return extra === null ? null : { kind: 'leading-speech', text: extra };
  };
  const cosyvoice = await startCosyVoiceLoopbackServer({ faults });
  const asr = await startTranscriptionLoopbackServer({ responder: () => spoken[spoken.length - 1] ?? '' });
  try {
    const config = await loopbackCosyVoiceConfig({
      name,
      scratch,
      url: cosyvoice.url,
      voices: { speakerPrompts: { manifest } },
      quality: { enabled: false, speechRecognition: { baseUrl: `${asr.url}/v1` } },
    });
    const report = await runBuild(config);
    const { summary, markdown } = await readBuildSummaries(config.output.directory);
    return { report, summary, markdown, cosyvoice, asr };
  } finally {
    await cosyvoice.close();
    await asr.close();
  }
}

describe('the speech recognition check in a build', () => {
  it('quarantines the dialogue whose utterance is spoken after the language tag', async () => {
    let tagged: string | null = null;
    const { report, summary, markdown, asr } = await buildWith('tagged', (text) => {
      // the first utterance of at most three words synthesized (one inserted word is above 0.25), every time it is asked for
      if (tagged === null && text.split(/\s+/).length <= 3) tagged = text;
      return text === tagged ? 'en' : null;
    });
    const dataset = report.datasets.find((entry) => entry.variant === 'default')!;
    expect(dataset.dialogues).toBe(1);
    expect(dataset.failed).toHaveLength(1);
    expect(dataset.failed[0]!.reason).toMatch(/word error rate \d\.\d\d above 0\.25/);
    expect(dataset.failed[0]!.reason).toContain(`heard "en ${tagged}"`);
    const recognition = summary.datasets[0].speechRecognition;
    expect(recognition).toMatchObject({ unit: 'word', edits: 0, errorRate: 0 });
    expect(recognition.utterances).toBeGreaterThan(5);
    // the tagged utterance three times (first attempt and two retries), then every accepted one
    expect(asr.requests.length).toBeGreaterThanOrEqual(recognition.utterances + 3);
    expect(markdown).toContain('speech recognition of the utterances of this dataset: word error rate 0.000');
  });

  it('writes the error rate 0 of a clean build into the summaries', async () => {
    const { report, summary, markdown, cosyvoice, asr } = await buildWith('clean', () => null);
    expect(report.datasets[0]!.failed).toEqual([]);
    const recognition = summary.datasets[0].speechRecognition;
    expect(recognition).toMatchObject({ unit: 'word', edits: 0, errorRate: 0 });
    // every clip transcribed; the dialogues' utterances counted (the backchannel clips are not)
    expect(asr.requests).toHaveLength(cosyvoice.requests.length);
    expect(recognition.utterances).toBeGreaterThan(10);
    expect(recognition.utterances).toBeLessThanOrEqual(cosyvoice.requests.length);
    expect(recognition.referenceTokens).toBeGreaterThan(recognition.utterances);
    expect(markdown).toMatch(/word error rate 0\.000 \(0 edits in \d+ words, \d+ utterances\)/);
    const datasetSummary = JSON.parse(
      await readFile(path.join(report.outputDirectory, 'data/en/task/topiocqa/summary.json'), 'utf8'),
    );
    expect(datasetSummary.speechRecognition).toEqual(recognition);

    // the same build again: every clip comes from the synthesis cache and is not transcribed again,
    // and its counts come with it
    const again = await buildWith('clean', () => null);
    expect(again.cosyvoice.requests).toHaveLength(0);
    expect(again.asr.requests).toHaveLength(0);
    expect(again.summary.datasets[0].speechRecognition).toEqual(recognition);
    expect(again.markdown).toBe(markdown);
  });
});
