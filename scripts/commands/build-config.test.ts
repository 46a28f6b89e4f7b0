/**
 * The build config of `build` and `demo` (./build-config.ts): scoring follows the config (the
 * `--config` file's `quality.enabled`, on for `--corpus` without `--config`), `--no-score` turns it off
 * in every case, `--language` sets the languages, `--corpus-language` the corpus language, `--corpus`
 * the corpus path (also when the file gives none), and the `llm` shorthands `translate: none` and
 * `rewrite: rules` resolve to their backends.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configModules, loadBuildConfig } from './build-config.ts';

let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(path.join(os.tmpdir(), 'duplexsynth-build-config-'));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

/** A build config file with quality scoring on or off. */
async function configFile(enabled: boolean): Promise<string> {
  const file = path.join(scratch, `quality-${enabled}.yaml`);
  await writeFile(
    file,
    [
      `corpus: { path: ${path.join(scratch, 'corpus.json')} }`,
      `output: { directory: ${path.join(scratch, 'out')} }`,
      'languages: [en]',
      `quality: { enabled: ${enabled} }`,
      '',
    ].join('\n'),
  );
  return file;
}

describe('build options: scoring', () => {
  it('a --config file that scores is scored (the CLI does not turn it off); --no-score turns it off', async () => {
    const modules = await configModules();
    const config = await configFile(true);
    expect((await loadBuildConfig({ config }, modules)).quality.enabled).toBe(true);
    expect((await loadBuildConfig({ config, corpus: path.join(scratch, 'other.json') }, modules)).quality.enabled).toBe(
      true,
    );
    expect((await loadBuildConfig({ config, score: false }, modules)).quality.enabled).toBe(false);
  });

  it('a --config file that does not score stays unscored', async () => {
    const modules = await configModules();
    expect((await loadBuildConfig({ config: await configFile(false) }, modules)).quality.enabled).toBe(false);
  });

  it('--corpus without --config is scored and split; --no-score turns it off', async () => {
    const modules = await configModules();
    const corpus = path.join(scratch, 'topiocqa_dev.json');
    const out = path.join(scratch, 'real');
    expect((await loadBuildConfig({ corpus, out }, modules)).quality).toMatchObject({ enabled: true, testHours: 1 });
    expect((await loadBuildConfig({ corpus, out, score: false }, modules)).quality.enabled).toBe(false);
  });

  it('--language sets the languages built', async () => {
    const modules = await configModules();
    const config = await loadBuildConfig({ config: await configFile(true), language: ['en', 'zh'] }, modules);
    expect(config.languages).toEqual(['en', 'zh']);
  });
});

describe('build options: a corpus in another language', () => {
  it('--corpus-language sets corpus.language, with or without --config', async () => {
    const modules = await configModules();
    const corpus = path.join(scratch, 'nl_corpus.json');
    expect(
      (await loadBuildConfig({ corpus, out: path.join(scratch, 'nl'), corpusLanguage: 'nl' }, modules)).corpus.language,
    ).toBe('nl');
    const config = await configFile(true);
    expect((await loadBuildConfig({ config, corpusLanguage: 'hi' }, modules)).corpus.language).toBe('hi');
  });

  it('--corpus fills a config file that gives no corpus.path, and overrides one that does', async () => {
    const modules = await configModules();
    const file = path.join(scratch, 'no-corpus-path.yaml');
    await writeFile(
      file,
      ['corpus: { language: en }', `output: { directory: ${path.join(scratch, 'out2')} }`, 'languages: [en]', ''].join(
        '\n',
      ),
    );
    const corpus = path.join(scratch, 'th_corpus.json');
    expect((await loadBuildConfig({ config: file, corpus }, modules)).corpus.path).toBe(corpus);
    expect((await loadBuildConfig({ config: await configFile(true), corpus }, modules)).corpus.path).toBe(corpus);
  });

  it('takes the shorthands llm.translate: none and llm.rewrite: rules', async () => {
    const modules = await configModules();
    const file = path.join(scratch, 'shorthands.yaml');
    await writeFile(
      file,
      [
        `corpus: { path: ${path.join(scratch, 'corpus.json')}, language: nl }`,
        `output: { directory: ${path.join(scratch, 'out3')} }`,
        'languages: [en]',
        'llm: { translate: none, rewrite: rules }',
        '',
      ].join('\n'),
    );
    const config = await loadBuildConfig({ config: file }, modules);
    expect(JSON.stringify(config.llm)).toMatch(/"translate":\{"backend":"none"/);
    expect(JSON.stringify(config.llm)).toMatch(/"rewrite":\{"backend":"rules"/);
  });
});
