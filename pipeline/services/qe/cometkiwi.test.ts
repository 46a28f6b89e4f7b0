import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CometKiwiError,
  COMETKIWI_MODEL,
  extractCometScores,
  findExecutable,
  parseCometScoreOutput,
  scoreTranslations,
  toSegmentLine,
} from './cometkiwi.ts';
import { FakeTranslationQualityEstimator } from './fake-translation-quality.ts';
import { cometKiwiEstimator } from './translation-quality.ts';
import { startCometKiwiLoopbackServer } from './testing/cometkiwi-loopback-server.ts';

/** Standard error of a real unbabel-comet 2.2 run on a CPU machine (log noise the client must ignore). */
const REAL_STDERR_NOISE = [
  'Seed set to 1',
  'Fetching 5 files: 100%|██████████| 5/5 [00:00<00:00, 31068.92it/s]',
  'Lightning automatically upgraded your loaded checkpoint from v1.8.3.post1 to v2.1.3. To apply the upgrade to your files permanently, run `python -m pytorch_lightning.utilities.upgrade_checkpoint ../.cache/huggingface/hub/models--Unbabel--wmt22-cometkiwi-da/snapshots/b3a8aea5a5fc22db68a554b92b3d96eb6ea75cc9/checkpoints/model.ckpt`',
  'Encoder model frozen.',
  "/usr/local/lib/python3.10/dist-packages/pytorch_lightning/core/saving.py:188: Found keys that are not in the model state dict but in the checkpoint: ['encoder.model.embeddings.position_ids']",
  'GPU available: False, used: False',
  'TPU available: False, using: 0 TPU cores',
  'IPU available: False, using: 0 IPUs',
  'HPU available: False, using: 0 HPUs',
  'Predicting DataLoader 0:   0%|          | 0/1 [00:00<?, ?it/s]\rPredicting DataLoader 0: 100%|██████████| 1/1 [00:01<00:00,  1.32s/it]',
].join('\n');

/**
 * A fake `comet-score`: checks its arguments like the real one, reads the two files as UTF-8, prints
 * the log noise to standard error and, per segment, `{mt}\tSegment {i}\tscore: {x:.4f}`, then the
 * system line. Score of a segment: 0.5 + (characters of mt mod 40) / 100, so tests can predict it.
 */
function fakeCometScoreScript(): string {
  return `#!${process.execPath}
const fs = require('node:fs');
const args = process.argv.slice(2);
const value = (flag) => { const i = args.indexOf(flag); return i >= 0 ? args[i + 1] : undefined; };
const src = value('-s'), mt = value('-t'), model = value('--model');
if (!src || !mt) { process.stderr.write('usage: comet-score [-h] -s SOURCES -t TRANSLATIONS\\n'); process.exit(2); }
fs.writeFileSync(process.env.FAKE_COMET_ARGS_FILE, JSON.stringify({ args, model, source: fs.readFileSync(src, 'utf8'), translation: fs.readFileSync(mt, 'utf8'), utf8: process.env.PYTHONUTF8 }));
process.stderr.write(${JSON.stringify(REAL_STDERR_NOISE)} + '\\n');
const sources = fs.readFileSync(src, 'utf8').split('\\n'); sources.pop();
const translations = fs.readFileSync(mt, 'utf8').split('\\n'); translations.pop();
if (sources.length !== translations.length) { process.stderr.write('length mismatch\\n'); process.exit(1); }
const scores = translations.map((line) => 0.5 + ([...line].length % 40) / 100);
scores.forEach((score, i) => console.log(mt + '\\tSegment ' + i + '\\tscore: ' + score.toFixed(4)));
console.log(mt + '\\tscore: ' + (scores.reduce((a, b) => a + b, 0) / scores.length).toFixed(4));
`;
}

/** A failing `comet-score`: the gated-model error a missing Hugging Face token gives. */
function failingCometScoreScript(): string {
  return `#!${process.execPath}
process.stderr.write(${JSON.stringify(REAL_STDERR_NOISE.split('\n').slice(0, 1).join('\n'))} + '\\n');
process.stderr.write('Traceback (most recent call last):\\n  File "/usr/local/bin/comet-score", line 8, in <module>\\n    sys.exit(score_command())\\n');
process.stderr.write("huggingface_hub.errors.GatedRepoError: 401 Client Error. Cannot access gated repo for url https://huggingface.co/Unbabel/wmt22-cometkiwi-da/resolve/main/checkpoints/model.ckpt.\\n");
process.exit(1);
`;
}

let folder: string;
let goodBin: string;
let badBin: string;
let argsFile: string;

beforeAll(async () => {
  folder = await mkdtemp(path.join(os.tmpdir(), 'cometkiwi-test-'));
  goodBin = path.join(folder, 'good');
  badBin = path.join(folder, 'bad');
  argsFile = path.join(folder, 'args.json');
  for (const [bin, script] of [
    [goodBin, fakeCometScoreScript()],
    [badBin, failingCometScoreScript()],
  ] as const) {
    await mkdir(bin, { recursive: true });
    await writeFile(path.join(bin, 'comet-score'), script);
    await chmod(path.join(bin, 'comet-score'), 0o755);
  }
});

afterAll(async () => {
  await rm(folder, { recursive: true, force: true });
});

const pairs = [
  { src: 'When was the Eiffel Tower built?', mt: 'エッフェル塔はいつ建てられたのですか？' },
  {
    src: 'It was built between 1887 and 1889.',
    mt: 'エッフェル塔は千八百八十七年から\n千八百八十九年にかけて建てられました。',
  },
  { src: 'Who designed it?', mt: '誰が設計したのですか？' },
];

const expectedScore = (mt: string) => Number((0.5 + ([...toSegmentLine(mt)].length % 40) / 100).toFixed(4));

describe('parseCometScoreOutput', () => {
  it('reads segment and system lines of the real format and keeps other lines aside', () => {
    const stdout =
      '/tmp/x/mt.txt\tSegment 0\tscore: 0.8123\n/tmp/x/mt.txt\tSegment 1\tscore: 0.7857\n/tmp/x/mt.txt\tscore: 0.7990\nPredictions saved in: out.json.\n';
    const output = parseCometScoreOutput(stdout);
    expect(output.segments).toEqual([
      { path: '/tmp/x/mt.txt', index: 0, score: 0.8123 },
      { path: '/tmp/x/mt.txt', index: 1, score: 0.7857 },
    ]);
    expect(output.system).toEqual({ path: '/tmp/x/mt.txt', score: 0.799 });
    expect(output.otherLines).toEqual(['Predictions saved in: out.json.']);
    expect(extractCometScores(output, '/tmp/x/mt.txt', 2)).toEqual({
      segmentScores: [0.8123, 0.7857],
      systemScore: 0.799,
    });
  });

  it('rejects missing, duplicated and non-numeric segments, and a missing system line', () => {
    const twoOfThree = parseCometScoreOutput('m\tSegment 0\tscore: 0.1\nm\tSegment 2\tscore: 0.2\nm\tscore: 0.15\n');
    expect(() => extractCometScores(twoOfThree, 'm', 3)).toThrow(/2 of 3 segment scores \(first missing: segment 1\)/);
    expect(() =>
      extractCometScores(
        parseCometScoreOutput('m\tSegment 0\tscore: 0.1\nm\tSegment 0\tscore: 0.1\nm\tscore: 0.1\n'),
        'm',
        1,
      ),
    ).toThrow(/twice/);
    expect(() => parseCometScoreOutput('m\tSegment 0\tscore: nan\n')).toThrow(CometKiwiError);
    expect(() => extractCometScores(parseCometScoreOutput('m\tSegment 0\tscore: 0.1\n'), 'm', 1)).toThrow(
      /no system score/,
    );
    expect(() =>
      extractCometScores(parseCometScoreOutput('other\tSegment 0\tscore: 0.1\nother\tscore: 0.1\n'), 'm', 1),
    ).toThrow(/expected "m"/);
  });
});

describe('scoreTranslations with the comet-score command', () => {
  it('writes line-aligned UTF-8 files, passes the model and options, parses the scores', async () => {
    const environment = { PATH: `${goodBin}${path.delimiter}/usr/bin:/bin`, FAKE_COMET_ARGS_FILE: argsFile };
    const result = await scoreTranslations(pairs, { environment, gpus: 0, batchSize: 16 });
    expect(result.computed).toBe(true);
    if (!result.computed) return;
    expect(result.scorer).toBe('command');
    expect(result.model).toBe(COMETKIWI_MODEL);
    expect(result.segmentScores).toEqual(pairs.map((pair) => expectedScore(pair.mt)));
    const mean = pairs.map((pair) => expectedScore(pair.mt)).reduce((a, b) => a + b, 0) / pairs.length;
    expect(result.systemScore).toBeCloseTo(mean, 4);
    const seen = JSON.parse(await readFile(argsFile, 'utf8')) as {
      args: string[];
      model: string;
      source: string;
      translation: string;
      utf8: string;
    };
    expect(seen.model).toBe('Unbabel/wmt22-cometkiwi-da');
    expect(seen.args.slice(4)).toEqual(['--model', 'Unbabel/wmt22-cometkiwi-da', '--gpus', '0', '--batch_size', '16']);
    expect(seen.translation.split('\n')).toHaveLength(4);
    expect(seen.translation.split('\n')[1]).toBe(
      'エッフェル塔は千八百八十七年から 千八百八十九年にかけて建てられました。',
    );
    expect(seen.source.split('\n')[0]).toBe('When was the Eiffel Tower built?');
    expect(seen.utf8).toBe('1');
  });

  it('throws CometKiwiError with the exit code and the end of standard error when the command fails', async () => {
    const environment = { PATH: `${badBin}${path.delimiter}/usr/bin:/bin` };
    const failure = scoreTranslations(pairs, { environment });
    await expect(failure).rejects.toThrow(CometKiwiError);
    await expect(scoreTranslations(pairs, { environment })).rejects.toThrow(
      /exited with code 1: .*GatedRepoError: 401/,
    );
  });

  it('records not computed, with the reason, when no scorer is available', async () => {
    const result = await scoreTranslations(pairs, { environment: { PATH: folder } });
    expect(result).toEqual({
      computed: false,
      reason: expect.stringMatching(/"comet-score" is not on PATH.*no HTTP scorer is configured/),
    });
    expect(await scoreTranslations([], { environment: { PATH: goodBin } })).toEqual({
      computed: false,
      reason: 'no translated utterances to score',
    });
  });

  it('finds executables on PATH only when they are executable files', async () => {
    expect(await findExecutable('comet-score', { PATH: `${folder}${path.delimiter}${goodBin}` })).toBe(
      path.join(goodBin, 'comet-score'),
    );
    expect(await findExecutable('comet-score', { PATH: folder })).toBeNull();
    expect(await findExecutable('args.json', { PATH: folder })).toBeNull();
  });
});

describe('scoreTranslations with an HTTP scorer', () => {
  it('posts {model, data:[{src, mt}]} in batches and reads {scores}', async () => {
    const server = await startCometKiwiLoopbackServer({
      score: (item) => expectedScore(item.mt),
      fail: (request) =>
        request.data.some((item) => item.mt === 'FAIL') ? { status: 503, body: '{"detail":"model loading"}' } : null,
    });
    try {
      const result = await scoreTranslations(pairs, {
        httpUrl: server.url,
        httpBatchSize: 2,
        environment: { PATH: goodBin },
      });
      expect(result).toMatchObject({
        computed: true,
        scorer: 'http',
        segmentScores: pairs.map((pair) => expectedScore(pair.mt)),
      });
      expect(server.requests.map((body) => body.data.length)).toEqual([2, 1]);
      expect(server.requests[0]!.model).toBe(COMETKIWI_MODEL);
      await expect(scoreTranslations([{ src: 'x', mt: 'FAIL' }], { httpUrl: server.url })).rejects.toThrow(
        /HTTP 503: \{"detail":"model loading"\}/,
      );
      // the same through the QE seam
      expect(await cometKiwiEstimator({ httpUrl: server.url }).score(pairs.slice(0, 1))).toMatchObject({
        computed: true,
        segmentScores: [expectedScore(pairs[0]!.mt)],
      });
    } finally {
      await server.close();
    }
  });
});

describe('FakeTranslationQualityEstimator', () => {
  it('records the pairs of each call and scores them with its function', async () => {
    const fake = new FakeTranslationQualityEstimator((pair) => pair.mt.length / 100);
    expect(
      await fake.score([
        { src: 'a', mt: 'abcd' },
        { src: 'b', mt: 'ab' },
      ]),
    ).toEqual({ computed: true, scorer: 'http', model: 'fake-qe', segmentScores: [0.04, 0.02], systemScore: 0.03 });
    expect(await fake.score([])).toMatchObject({ computed: false });
    expect(fake.calls).toEqual([
      [
        { src: 'a', mt: 'abcd' },
        { src: 'b', mt: 'ab' },
      ],
      [],
    ]);
  });
});
