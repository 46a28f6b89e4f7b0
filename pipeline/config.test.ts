import { access, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import {
  ConfigError,
  configJsonSchema,
  DEFAULT_CONFIG_FILE,
  loadConfigFile,
  PROJECT_ROOT,
  resolveConfig,
} from './config.ts';

/** Temporary folders the tests below create; a later test checks that they were removed. */
const createdDirectories: string[] = [];

describe('build configuration', () => {
  it('the built-in default resolves completely, with absolute paths and the channel mapping of docs/dataset-format.md', async () => {
    const config = await loadConfigFile(DEFAULT_CONFIG_FILE);
    expect(config.channels).toEqual({ user: 1, system: 0 });
    expect(path.isAbsolute(config.corpus.path)).toBe(true);
    expect(config.corpus.path).toBe(path.join(PROJECT_ROOT, 'corpora/demo/demo_topiocqa.json'));
    expect(config.languages).toEqual(['en', 'ja']);
    expect(config.tts.en!.backend).toBe('espeak-ng');
    expect(config.tts.ja!.backend).toBe('open-jtalk');
    expect(config.synthesis.minimumUtteranceSeconds).toBeGreaterThan(0.8);
  });

  it('timeline profile: benchmark by default (barge-in variants on, the rest also as test_other with a dev alias); natural on request; others refused', () => {
    const defaults = resolveConfig({ corpus: { path: 'x.json' } }, 'my.yaml', '/tmp');
    expect(defaults.timeline.profile).toBe('benchmark');
    expect(defaults.timeline.turnHoldShare).toBeNull();
    expect(defaults.timeline.bargeIn.systemYields).toBe('next-word-boundary');
    expect(defaults.datasets).toEqual({ en: 'topiocqa', ja: 'topiocqa_ja', bargeIn: true });
    expect(defaults.quality.devAlias).toBe(true);
    const natural = resolveConfig(
      {
        corpus: { path: 'x.json' },
        timeline: { profile: 'natural', turnHoldShare: 0.3, bargeIn: { systemYields: 'runs-on' } },
        datasets: { bargeIn: false },
      },
      'my.yaml',
      '/tmp',
    );
    expect(natural.timeline).toMatchObject({
      profile: 'natural',
      turnHoldShare: 0.3,
      bargeIn: { systemYields: 'runs-on' },
    });
    expect(natural.datasets.bargeIn).toBe(false);
    expect(() =>
      resolveConfig({ corpus: { path: 'x.json' }, timeline: { profile: 'fast' } }, 'my.yaml', '/tmp'),
    ).toThrow(/timeline\.profile/);
    expect(() =>
      resolveConfig({ corpus: { path: 'x.json' }, timeline: { turnHoldShare: 2 } }, 'my.yaml', '/tmp'),
    ).toThrow(/timeline\.turnHoldShare/);
    // a dataset name per language code, any language; a key that is no language code is refused
    expect(
      resolveConfig({ corpus: { path: 'x.json' }, languages: ['de'], datasets: { de: 'x' } }, 'my.yaml', '/tmp')
        .datasets,
    ).toEqual({ en: 'topiocqa', ja: 'topiocqa_ja', de: 'x', bargeIn: true });
    expect(resolveConfig({ corpus: { path: 'x.json' }, languages: ['zh'] }, 'my.yaml', '/tmp').datasets.zh).toBe(
      'topiocqa_zh',
    );
    expect(() => resolveConfig({ corpus: { path: 'x.json' }, datasets: { German: 'x' } }, 'my.yaml', '/tmp')).toThrow(
      /datasets\.German: not a language code/,
    );
    expect(() => resolveConfig({ corpus: { path: 'x.json' }, datasets: { de: true } }, 'my.yaml', '/tmp')).toThrow(
      /datasets\.de: a dataset folder name/,
    );
    expect(() => resolveConfig({ corpus: { path: 'x.json' }, languages: ['Deutsch'] }, 'my.yaml', '/tmp')).toThrow(
      /languages\.0/,
    );
  });

  it('output.linkAudioToCache: unset by default (the build links), false kept with the resolved folders, a non-boolean refused', () => {
    expect(resolveConfig({ corpus: { path: 'x.json' } }, 'my.yaml', '/tmp').output.linkAudioToCache).toBeUndefined();
    const copying = resolveConfig(
      { corpus: { path: 'x.json' }, output: { directory: 'out', linkAudioToCache: false } },
      'my.yaml',
      '/tmp',
    );
    expect(copying.output).toEqual({
      directory: '/tmp/out',
      cacheDirectory: '/tmp/outputs/.cache',
      linkAudioToCache: false,
    });
    expect(() =>
      resolveConfig({ corpus: { path: 'x.json' }, output: { linkAudioToCache: 'no' } }, 'my.yaml', '/tmp'),
    ).toThrow(/output\.linkAudioToCache/);
  });

  it('errors name the file and the YAML path of each bad value', () => {
    const bad = { corpus: { path: 'x.json' }, audio: { sampleRate: 22050 }, channels: { user: 0, system: 0 } };
    expect(() => resolveConfig(bad, 'my.yaml', '/tmp')).toThrow(ConfigError);
    try {
      resolveConfig(bad, 'my.yaml', '/tmp');
    } catch (error) {
      const message = (error as Error).message;
      expect(message).toMatch(/^my\.yaml: /);
      expect(message).toMatch(/audio\.sampleRate: must be a multiple of 100/);
      expect(message).toMatch(/channels: user and system must be on different channels/);
    }
    expect(() => resolveConfig({ corpus: { path: 'x' }, surprise: 1 }, 'my.yaml', '/tmp')).toThrow(
      /Unrecognized key.*surprise|surprise/,
    );
    expect(() => resolveConfig({}, 'my.yaml', '/tmp')).toThrow(/corpus/);
  });

  it('a file that is not YAML gets a one-line reason naming it', async () => {
    const directory = await mkdtemp(path.join(os.tmpdir(), 'duplexsynth-config-'));
    createdDirectories.push(directory);
    onTestFinished(() => rm(directory, { recursive: true, force: true }));
    const file = path.join(directory, 'broken.yaml');
    await writeFile(file, 'corpus: [unclosed\n');
    await expect(loadConfigFile(file)).rejects.toThrow(/broken\.yaml: not valid YAML/);
    // the yaml error's position, not its snippet, and no colon left that announced the snippet
    await writeFile(file, 'name: x\n[a, b\nseed: 1\n');
    const error = (await loadConfigFile(file).catch((caught: unknown) => caught)) as Error;
    expect(error.message).toBe(
      `${file}: not valid YAML: Implicit keys need to be on a single line at line 2, column 1`,
    );
    await expect(loadConfigFile(path.join(directory, 'missing.yaml'))).rejects.toThrow(
      /missing\.yaml: configuration file: does not exist \(ENOENT\); check the path$/,
    );
  });

  it('the not-YAML test leaves no temporary folder behind', async () => {
    for (const directory of createdDirectories) await expect(access(directory)).rejects.toThrow(/ENOENT/);
  });

  it('the committed JSON Schema is the one the code generates (run `duplexsynth schema` after a change)', async () => {
    const committed = JSON.parse(await readFile(path.join(PROJECT_ROOT, 'pipeline/config.schema.json'), 'utf8'));
    expect(committed).toEqual(JSON.parse(JSON.stringify(configJsonSchema())));
  });
});
