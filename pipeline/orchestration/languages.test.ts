/**
 * Languages as data: a Spanish corpus in the TopiOCQA layout built without translation, a
 * language the code has never heard of (Italian) added by a YAML language pack alone, Mandarin from
 * the demo corpus (hand-written recorded translations) with segmenter words in txt_align; and the bad
 * input refused before any service is called. The builds run once each (beforeAll) and are shared.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify as toYaml } from 'yaml';
import { DEFAULT_CONFIG_FILE, loadConfigFile, PROJECT_ROOT, resolveConfig, type BuildConfig } from '../config.ts';
import { parseEventsLine } from '../events/index.ts';
import { benchmarkLoaderSettings, evaluableEventsReport, evaluableShare } from '../events/evaluable-events.ts';
import { readLanguagePackFile } from '../model/language-pack.ts';
import { splitSegmenterWords } from '../alignment/spoken-words.ts';
import { ingestCorpus } from '../../stages/ingest-corpus.ts';
import { checkBuildIsPossible, runBuild, type BuildReport } from './build.ts';
import { TEST_CLI } from '../../scripts/testing/cli-command.ts';

const SPANISH_CORPUS = path.join(PROJECT_ROOT, 'corpora', 'fixtures', 'spanish_topiocqa.json');
const BUILD_TIMEOUT = 1_200_000;

let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(path.join(os.tmpdir(), 'duplexsynth-languages-test-'));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

/** A config of its own folder in the scratch space: no scoring, the given settings. */
async function configIn(name: string, value: Record<string, unknown>): Promise<BuildConfig> {
  const file = path.join(scratch, `${name}.yaml`);
  await writeFile(
    file,
    toYaml({
      name,
      output: { directory: `${name}/out`, cacheDirectory: `${name}/cache` },
      quality: { enabled: false },
      ...value,
    }),
  );
  return loadConfigFile(file);
}

/** The events lines of a written dataset, and what the benchmark's loader rules keep of them (task data, with context). */
async function loaderView(directory: string) {
  const lines = (await readFile(path.join(directory, 'all.jsonl'), 'utf8')).trim().split('\n');
  const dialogues = lines.map((line, index) => parseEventsLine(line, `all.jsonl:${index + 1}`));
  const [, withContext] = benchmarkLoaderSettings('task');
  return evaluableEventsReport('task, with context', withContext!.settings, dialogues);
}

describe('a Spanish corpus in the TopiOCQA layout (corpus.language es, translate none)', () => {
  let report: BuildReport;
  let config: BuildConfig;
  beforeAll(async () => {
    config = await configIn('spanish', {
      languages: ['es'],
      corpus: { path: SPANISH_CORPUS, language: 'es' },
      llm: { rewrite: { backend: 'rules' }, translate: { backend: 'none' } },
    });
    report = await runBuild(config);
  }, BUILD_TIMEOUT);

  it('builds topiocqa_es from the written Spanish text, and the loader rules keep every TURN_SHIFT, TURN_HOLD and BC', async () => {
    expect(report.failedDialogues).toBe(0);
    expect(report.datasets.map((dataset) => [dataset.dataset, dataset.dialogues])).toEqual([
      ['topiocqa_es', 3],
      ['topiocqa_es_bargein', 3],
    ]);
    const directory = path.join(config.output.directory, 'data', 'es', 'task', 'topiocqa_es');
    const [first] = (await readdir(path.join(directory, 'metadata'))).sort();
    const metadata = JSON.parse(await readFile(path.join(directory, 'metadata', first!), 'utf8'));
    expect(metadata.language).toBe('es');
    expect(JSON.stringify(metadata)).toContain('¿Dónde está el Museo del Prado?');
    const view = await loaderView(directory);
    for (const type of ['TURN_SHIFT', 'TURN_HOLD', 'BC'] as const) {
      const share = evaluableShare(view, type);
      expect(share.samples, type).toBe(share.candidates);
    }
    expect(evaluableShare(view, 'TURN_SHIFT').samples).toBeGreaterThan(0);
    // Spanish has no measured statistics: the cross-language prior, said in the summary
    expect(await readFile(report.summaryMarkdownPath, 'utf8')).toMatch(
      /es: no measured timing statistics.*cross-language prior/,
    );
  });
});

describe('a language the code has never heard of, added by a YAML language pack alone (Italian)', () => {
  let report: BuildReport;
  let config: BuildConfig;
  beforeAll(async () => {
    const italian = readLanguagePackFile(path.join(PROJECT_ROOT, 'pipeline', 'model', 'language-packs', 'es.yaml'));
    const pack = {
      ...italian,
      code: 'it',
      name: 'Italian',
      offlineVoice: { engine: 'espeak-ng', voice: 'it' },
      phrases: {
        backchannels: ['sì', 'certo', 'ecco'],
        padding: {
          question: ['E, {text}', 'Mi può dire, {text}'],
          answer: ['Allora, {text}', 'Allora, {text} Questo è quanto so.'],
        },
      },
    };
    await writeFile(path.join(scratch, 'it.yaml'), toYaml(pack));
    const corpus = [1, 2].flatMap((conversation) =>
      [
        ['Dove si trova il Colosseo?', 'Il Colosseo si trova nel centro di Roma, vicino al Foro Romano.'],
        ['Quando fu costruito?', 'Fu costruito nel primo secolo dopo Cristo, sotto gli imperatori Vespasiano e Tito.'],
        ['Quante persone poteva contenere?', 'Poteva contenere circa cinquantamila spettatori seduti sulle gradinate.'],
      ].map(([question, answer], index) => ({
        Context: [],
        Conversation_no: conversation,
        Turn_no: index + 1,
        Question: question,
        is_nq: false,
        Answer: answer,
        Topic: 'Colosseo',
        Topic_section: 'Introduzione',
        Rationale: answer,
        Additional_answers: [],
        Gold_passage: { id: 'it:1', title: 'Colosseo', text: answer },
      })),
    );
    await writeFile(path.join(scratch, 'italiano.json'), JSON.stringify(corpus));
    config = await configIn('italian', {
      languages: ['it'],
      languagePacks: ['it.yaml'],
      corpus: { path: 'italiano.json', language: 'it' },
    });
    report = await runBuild(config);
  }, BUILD_TIMEOUT);

  it('builds topiocqa_it with espeak-ng it voices, the timing prior, and no code change', async () => {
    expect(report.failedDialogues).toBe(0);
    expect(report.datasets[0]).toMatchObject({ dataset: 'topiocqa_it', language: 'it', dialogues: 2 });
    const directory = path.join(config.output.directory, 'data', 'it', 'task', 'topiocqa_it');
    const metadataFiles = await readdir(path.join(directory, 'metadata'));
    const metadata = JSON.parse(await readFile(path.join(directory, 'metadata', metadataFiles[0]!), 'utf8'));
    expect(JSON.stringify(metadata.speakers)).toMatch(/espeak-ng:it\+/);
    const view = await loaderView(directory);
    expect(evaluableShare(view, 'TURN_SHIFT').samples).toBe(evaluableShare(view, 'TURN_SHIFT').candidates);
    expect(await readFile(report.summaryMarkdownPath, 'utf8')).toContain('## Timing statistics assumed, not measured');
  });
});

describe('Mandarin from the demo corpus (hand-written recorded translations)', () => {
  let config: BuildConfig;
  let report: BuildReport;
  beforeAll(async () => {
    const base = await loadConfigFile(DEFAULT_CONFIG_FILE);
    config = {
      ...base,
      languages: ['zh'],
      corpus: { ...base.corpus, limit: 1 },
      datasets: { ...base.datasets, bargeIn: false, zh: 'topiocqa_zh' },
      tts: { ...base.tts, zh: { backend: 'espeak-ng' } },
      output: {
        directory: path.join(scratch, 'mandarin', 'out'),
        cacheDirectory: path.join(scratch, 'mandarin', 'cache'),
      },
      quality: { ...base.quality, enabled: false },
    };
    report = await runBuild(config);
  }, BUILD_TIMEOUT);

  it('txt_align has one line per segmenter word, inside its utterance, and the words joined are the spoken text', async () => {
    expect(report.failedDialogues).toBe(0);
    const directory = path.join(config.output.directory, 'data', 'zh', 'task', 'topiocqa_zh');
    const metadata = JSON.parse(await readFile(path.join(directory, 'metadata', 'demo_topiocqa_0001.json'), 'utf8'));
    const [file] = await readdir(path.join(directory, 'txt_align'));
    const alignment = (await readFile(path.join(directory, 'txt_align', file!), 'utf8'))
      .trim()
      .split('\n')
      .map((line) => line.split('\t'))
      .map(([channel, start, end, word]) => ({
        channel: Number(channel),
        start: Number(start),
        end: Number(end),
        word: word!,
      }));
    const utterances = metadata.utterances as {
      channel: number;
      start: number;
      end: number;
      text: { final?: string | null; synthesized?: string | null };
    }[];
    expect(utterances.length).toBeGreaterThan(4);
    let checked = 0;
    for (const utterance of utterances) {
      const spoken = utterance.text.synthesized ?? utterance.text.final;
      if (!spoken) continue;
      const words = alignment.filter(
        (word) =>
          word.channel === utterance.channel &&
          word.start >= utterance.start - 1e-9 &&
          word.end <= utterance.end + 1e-9,
      );
      expect(words.map((word) => word.word)).toEqual(splitSegmenterWords(spoken, 'zh').map((word) => word.text));
      expect(words.map((word) => word.word).join('')).toBe(spoken.replace(/[\p{P}\p{Z}\s]+/gu, ''));
      checked += 1;
    }
    expect(checked).toBeGreaterThan(4);
    expect(alignment.some((word) => /^[\p{Script=Han}]{2,}$/u.test(word.word))).toBe(true); // dictionary words, not single characters only
  });
});

describe('bad input is refused before any service is called, with one line naming the file and field, exit code 2', () => {
  /** Runs `duplexsynth build --config FILE` from the sources; the output folder must not appear. */
  async function refusedBuild(name: string, value: Record<string, unknown>): Promise<string> {
    const file = path.join(scratch, `${name}.yaml`);
    await writeFile(
      file,
      toYaml({
        name,
        output: { directory: `${name}/out`, cacheDirectory: `${name}/cache` },
        quality: { enabled: false },
        ...value,
      }),
    );
    const result = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      execFile(
        process.execPath,
        [TEST_CLI, 'build', '--config', file, '--plain'],
        { cwd: scratch },
        (error, _stdout, stderr) => resolve({ code: error ? ((error as { code?: number }).code ?? null) : 0, stderr }),
      );
    });
    expect(result.code, result.stderr).toBe(2);
    const lines = result.stderr.trim().split('\n');
    expect(lines, result.stderr).toHaveLength(1);
    expect(existsSync(path.join(scratch, name, 'out', 'data'))).toBe(false);
    return lines[0]!;
  }

  it(
    'an unknown language code without a pack; a pack missing a required field; a Chinese pack segmenting at spaces; a voice espeak-ng does not have; a corpus not in its declared language; a CosyVoice model that does not speak the language',
    async () => {
      const zh = readLanguagePackFile(path.join(PROJECT_ROOT, 'pipeline', 'model', 'language-packs', 'zh.yaml'));
      const { speechRate: _dropped, ...missing } = { ...zh, code: 'yue' };
      await writeFile(path.join(scratch, 'pack-missing.yaml'), toYaml(missing));
      await writeFile(
        path.join(scratch, 'pack-spaces.yaml'),
        toYaml({ ...zh, code: 'wuu', script: { scripts: ['Han'], segmentation: 'spaces' } }),
      );
      await writeFile(
        path.join(scratch, 'pack-voice.yaml'),
        toYaml({
          ...zh,
          code: 'hak',
          offlineVoice: { engine: 'espeak-ng', voice: 'no-such-voice' },
          timing: { statistics: null },
        }),
      );
      // a CosyVoice2 server that counts the requests it gets (it must get none)
      let requests = 0;
      const server = createServer((_request, response) => {
        requests += 1;
        response.writeHead(500).end();
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      try {
        const spanish = { path: SPANISH_CORPUS, language: 'es' };
        const lines = await Promise.all([
          refusedBuild('unknown', { languages: ['xx'], corpus: spanish }),
          refusedBuild('missing', { languages: ['es'], languagePacks: ['pack-missing.yaml'], corpus: spanish }),
          refusedBuild('spaces', { languages: ['es'], languagePacks: ['pack-spaces.yaml'], corpus: spanish }),
          refusedBuild('voice', {
            languages: ['hak'],
            languagePacks: ['pack-voice.yaml'],
            corpus: { path: SPANISH_CORPUS, language: 'hak' },
          }),
          refusedBuild('not-chinese', { languages: ['zh'], corpus: { path: SPANISH_CORPUS, language: 'zh' } }),
          refusedBuild('cosyvoice', {
            languages: ['de'],
            corpus: { path: SPANISH_CORPUS, language: 'de' },
            tts: {
              de: {
                backend: 'cosyvoice2',
                service: { urls: [url] },
                voices: {
                  user: { mode: 'cross-lingual', promptWav: 'user.wav' },
                  system: { mode: 'cross-lingual', promptWav: 'system.wav' },
                },
              },
            },
          }),
        ]);
        expect(lines[0]).toMatch(/unknown\.yaml: languages\.0: no language pack for xx .*--language-pack/);
        expect(lines[1]).toMatch(/pack-missing\.yaml: invalid language pack: speechRate: /);
        expect(lines[2]).toMatch(
          /pack-spaces\.yaml: invalid language pack: script\.segmentation: "spaces" cannot segment Han/,
        );
        expect(lines[3]).toMatch(/pack-voice\.yaml: offlineVoice\.voice: espeak-ng has no voice "no-such-voice"/);
        expect(lines[4]).toMatch(
          /spanish_topiocqa\.json: corpus\.language: zh, but 100 % of the corpus's letters are outside Mandarin Chinese's script/,
        );
        expect(lines[5]).toMatch(
          /tts\.de\.service\.model: CosyVoice2-0\.5B \(CosyVoice2\) does not speak German \(.*de\.yaml cosyVoice\.cosyvoice2: false; CosyVoice2 speaks en, ja, ko, zh; CosyVoice3 does\)/,
        );
        expect(requests).toBe(0);
      } finally {
        await new Promise((resolve) => server.close(resolve));
      }
    },
    BUILD_TIMEOUT,
  );

  it('the same checks in the library: an unknown code, a corpus not in its language', async () => {
    const config = await configIn('unknown-library', { languages: ['xx'], corpus: { path: SPANISH_CORPUS } });
    expect(() => checkBuildIsPossible(config)).toThrow(
      /unknown-library\.yaml: languages\.0: no language pack for xx .*--language-pack/,
    );
    const chinese = resolveConfig(
      { languages: ['zh'], corpus: { path: SPANISH_CORPUS, language: 'zh' } },
      'zh.yaml',
      scratch,
    );
    await expect(ingestCorpus(chinese)).rejects.toThrow(
      /spanish_topiocqa\.json: corpus\.language: zh, but 100 % of the corpus's letters are outside Mandarin Chinese's script/,
    );
  });
});
