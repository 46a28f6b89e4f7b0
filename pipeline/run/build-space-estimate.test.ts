/**
 * The up-front disk-space estimate against the bytes a small real build writes: two two-turn
 * dialogues (offline espeak-ng, rules rewrite), both datasets (base and barge-in), the full-band
 * masters, the cache and the report. Every file under the output and cache folders is counted once
 * (a dataset WAV is a link to its cache entry). The estimate must cover the build and stay within
 * twice it.
 */
import { lstat, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfigFile } from '../config.ts';
import { runBuild } from '../orchestration/build.ts';
import { ingestCorpus } from '../../stages/ingest-corpus.ts';
import { estimateBuildBytes } from './build-space-estimate.ts';
import { estimatePlannedAudioBytes } from './output-checks.ts';

let scratch: string;

beforeAll(async () => {
  scratch = await mkdtemp(path.join(os.tmpdir(), 'duplexsynth-space-'));
});

afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

/** Two two-turn conversations in the TopiOCQA raw-release layout. */
function corpus(): unknown[] {
  return ['Eiffel Tower', 'Mount Fuji'].flatMap((topic, index) =>
    [
      [`where is the ${topic.toLowerCase()}?`, `The ${topic} is a famous place visited by many people every year.`],
      ['how old is it?', 'It is very old, older than most buildings in the region around it.'],
    ].map(([question, answer], turn) => ({
      Context: [],
      Conversation_no: index + 1,
      Turn_no: turn + 1,
      Question: question,
      Answer: answer,
      Topic: topic,
      Topic_section: 'Introduction',
      Rationale: '',
      Additional_answers: [],
      is_nq: false,
      Gold_passage: { id: `q:${index}:${turn}`, title: topic, text: topic },
    })),
  );
}

/** Bytes of every file under `folders`, a file with several links counted once. */
async function bytesOnDisk(folders: string[]): Promise<number> {
  const seen = new Set<string>();
  let total = 0;
  for (const folder of folders)
    for (const entry of await readdir(folder, { recursive: true, withFileTypes: true })) {
      if (!entry.isFile()) continue;
      const info = await lstat(path.join(entry.parentPath, entry.name));
      const key = `${info.dev}:${info.ino}`;
      if (seen.has(key)) continue;
      seen.add(key);
      total += info.size;
    }
  return total;
}

describe('the disk-space estimate', () => {
  it('covers every byte a small real build writes, within twice it', { timeout: 600_000 }, async () => {
    await writeFile(path.join(scratch, 'two.json'), JSON.stringify(corpus()));
    const file = path.join(scratch, 'build.yaml');
    const out = path.join(scratch, 'out');
    const cache = path.join(scratch, 'cache');
    await writeFile(
      file,
      [
        'name: space',
        'seed: 7',
        'languages: [en]',
        `corpus: { path: ${path.join(scratch, 'two.json')} }`,
        `output: { directory: ${out}, cacheDirectory: ${cache} }`,
        'datasets: { en: two, bargeIn: true }',
        'llm: { rewrite: { backend: rules }, translate: { backend: none } }',
        'tts: { en: { backend: espeak-ng } }',
        'quality: { enabled: false }',
        '',
      ].join('\n'),
    );
    const config = await loadConfigFile(file);
    const { conversations } = await ingestCorpus(config);
    const estimate = estimateBuildBytes(config, conversations);
    await runBuild(config);
    const written = await bytesOnDisk([out, cache]);
    expect(estimate.totalBytes).toBeGreaterThanOrEqual(written);
    expect(estimate.totalBytes).toBeLessThanOrEqual(2 * written);
    // the dataset WAVs alone (what the check counted without the full-band masters, the cache and the pages)
    expect(estimatePlannedAudioBytes(conversations, 2, config.audio.sampleRate)).toBeLessThan(written / 2);
  });
});
