/**
 * The hostile-input suite: the CLI's entry point (`main`, in this process) against inputs
 * meant to break it. Each case asserts the exact one-line message and the exit code, and that nothing
 * was created or left behind; only the empty-final-answer case synthesizes (two short turns,
 * espeak-ng). Elsewhere: the tampered dataset and the corrupted cache in
 * pipeline/orchestration/build-integrity.test.ts (one tiny real build); the disk-full stop in
 * pipeline/orchestration/build-failures.test.ts; dead and silent services of every client, and keys
 * written into their URLs, in pipeline/services/service-failure-messages.test.ts; `--dry-run` memory
 * in `npm run bench -- --sections dryrun`; kills at random moments in scripts/chaos.ts, `npm run chaos`.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { sharedDirectory } from '../pipeline/config.ts';
import { main } from './cli.ts';
import { encodeWavPcm16 } from '../pipeline/audio/wav.ts';
import { copyExportFixture } from '../pipeline/export/testing/export-fixture.ts';

const TOPIOCQA_DEV = path.join(sharedDirectory(), 'corpora', 'topiocqa', 'topiocqa_dev.json');

/**
 * Run the CLI's `main` in this process, as `duplexsynth ARGS` would run (no child process: each would
 * start the TypeScript loader anew, seconds per case): exit code, standard output, the lines of standard
 * error. `environment` is set for the call; the Gemini key variables are unset unless given.
 */
async function cli(
  args: string[],
  environment: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string[] }> {
  const saved = { ...process.env };
  for (const name of ['GEMINI_API_KEY', 'GOOGLE_API_KEY']) delete process.env[name];
  Object.assign(process.env, environment);
  const listeners = {
    exception: process.listeners('uncaughtException'),
    rejection: process.listeners('unhandledRejection'),
  };
  const stderr: string[] = [];
  let stdout = '';
  const error = vi
    .spyOn(console, 'error')
    .mockImplementation((...parts: unknown[]) => void stderr.push(parts.join(' ')));
  const log = vi
    .spyOn(console, 'log')
    .mockImplementation((...parts: unknown[]) => void (stdout += `${parts.join(' ')}\n`));
  const write = vi
    .spyOn(process.stderr, 'write')
    .mockImplementation((chunk: string | Uint8Array) => (stderr.push(...String(chunk).trimEnd().split('\n')), true));
  const writeOut = vi
    .spyOn(process.stdout, 'write')
    .mockImplementation((chunk: string | Uint8Array) => ((stdout += String(chunk)), true));
  process.exitCode = 0;
  try {
    await main(['node', 'duplexsynth', ...args]);
    return { code: Number(process.exitCode ?? 0), stdout, stderr: stderr.filter(Boolean) };
  } finally {
    process.exitCode = 0;
    error.mockRestore();
    log.mockRestore();
    write.mockRestore();
    writeOut.mockRestore();
    for (const listener of process.listeners('uncaughtException'))
      if (!listeners.exception.includes(listener)) process.off('uncaughtException', listener);
    for (const listener of process.listeners('unhandledRejection'))
      if (!listeners.rejection.includes(listener)) process.off('unhandledRejection', listener);
    for (const name of Object.keys(process.env)) if (!(name in saved)) delete process.env[name];
    Object.assign(process.env, saved);
  }
}

let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(path.join(os.tmpdir(), 'duplexsynth-hostile-'));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

/** A build config (JSON is YAML) in the scratch folder; its output and cache under `{name}/`. */
async function config(
  name: string,
  settings: Record<string, unknown> = {},
): Promise<{ file: string; out: string; cache: string }> {
  const out = path.join(scratch, name, 'out');
  const cache = path.join(scratch, name, 'cache');
  const file = path.join(scratch, `${name}.yaml`);
  await writeFile(
    file,
    JSON.stringify({
      name,
      languages: ['en'],
      corpus: { path: TOPIOCQA_DEV, limit: 1 },
      output: { directory: out, cacheDirectory: cache },
      llm: { rewrite: { backend: 'rules' }, translate: { backend: 'none' } },
      quality: { enabled: false },
      ...settings,
    }),
  );
  return { file, out, cache };
}

describe('hostile configuration files', () => {
  it('a YAML alias bomb: refused, the file named', async () => {
    const bomb = path.join(scratch, 'bomb.yaml');
    const lines = ['a: &a [x, x, x, x, x, x, x, x, x, x]'];
    for (let level = 1; level < 9; level++) {
      const name = String.fromCharCode(97 + level);
      lines.push(
        `${name}: &${name} [${Array(10)
          .fill(`*${String.fromCharCode(96 + level)}`)
          .join(', ')}]`,
      );
    }
    await writeFile(bomb, `${lines.join('\n')}\n`);
    const result = await cli(['build', '--config', bomb]);
    expect(result.code).toBe(2);
    expect(result.stderr.at(-1)).toBe(
      `duplexsynth: ${bomb}: not usable YAML: Excessive alias count indicates a resource exhaustion attack`,
    );
  });

  it('a configuration file over the size limit: refused before it is read, the limit and its variable named', async () => {
    const { file } = await config('oversized');
    const result = await cli(['build', '--config', file], { DUPLEXSYNTH_MAXIMUM_CONFIG_BYTES: '100' });
    expect(result.code).toBe(2);
    expect(result.stderr.at(-1)).toMatch(
      new RegExp(
        `^duplexsynth: ${file}: \\d+ bytes, more than the 100 allowed for a configuration file \\(DUPLEXSYNTH_MAXIMUM_CONFIG_BYTES\\); a build config is a few kB$`,
      ),
    );
  });

  it('321 backchannel phrases: refused, the field, count and limit named', async () => {
    const phrases = Array.from({ length: 321 }, (_, index) => `uh-huh ${index}`);
    const { file, out } = await config('phrases', { timeline: { backchannels: { phrases: { en: phrases } } } });
    const result = await cli(['build', '--config', file]);
    expect(result.code).toBe(2);
    expect(result.stderr.at(-1)).toBe(
      `duplexsynth: ${file}: timeline.backchannels.phrases.en: 321 phrases, more than the 100 allowed (timeline.backchannels.maximumPhrases; each is synthesized in every user voice)`,
    );
    expect(existsSync(out)).toBe(false);
  });

  it('a folder given as the configuration: the errno in words', async () => {
    const folder = path.join(scratch, 'a-folder');
    await mkdir(folder, { recursive: true });
    const result = await cli(['build', '--config', folder]);
    expect(result.code).toBe(2);
    expect(result.stderr.at(-1)).toBe(
      `duplexsynth: ${folder}: configuration file: is a folder, where a file is needed (EISDIR); give the file inside it`,
    );
  });
});

describe('hostile corpora', () => {
  it('a corpus over corpus.maximumFileBytes: refused before it is read', async () => {
    const { file, out } = await config('big-corpus', {
      corpus: { path: TOPIOCQA_DEV, limit: 1, maximumFileBytes: 1000 },
    });
    const result = await cli(['build', '--config', file]);
    expect(result.code).toBe(2);
    expect(result.stderr.at(-1)).toMatch(
      /^duplexsynth: \/.*\/topiocqa_dev\.json: \d+ bytes, more than the 1000 allowed for a corpus file \(corpus\.maximumFileBytes\)$/,
    );
    expect(existsSync(out)).toBe(false);
  });

  it('a folder given as the corpus: the errno in words', async () => {
    const folder = path.join(scratch, 'corpus-folder.json');
    await mkdir(folder, { recursive: true });
    const result = await cli([
      'build',
      '--corpus',
      folder,
      '--out',
      path.join(scratch, 'corpus-folder-out'),
      '--dry-run',
    ]);
    expect(result.code).toBe(2);
    expect(result.stderr.at(-1)).toBe(
      `duplexsynth: ${folder}: cannot read: is a folder, where a file is needed (EISDIR); give the file inside it`,
    );
  });

  it('a 150-turn conversation: rejected before any service, naming file, conversation, field and limit; no folder left', async () => {
    const corpus = path.join(scratch, 'long.json');
    const turn = (index: number) => ({
      Conversation_no: 1,
      Turn_no: index + 1,
      Question: 'What is it?',
      is_nq: false,
      Answer: 'It is a pier.',
      Topic: 'Pier',
      Topic_section: 'Intro',
      Context: [],
      Rationale: '',
      Additional_answers: [],
      Gold_passage: { id: '1', title: 'Pier', text: 'x' },
    });
    await writeFile(corpus, JSON.stringify(Array.from({ length: 150 }, (_, index) => turn(index))));
    const out = path.join(scratch, 'long-out');
    const result = await cli(['build', '--corpus', corpus, '--out', out, '--quiet']);
    expect(result.code).toBe(4);
    expect(result.stderr.at(-1)).toBe(
      `duplexsynth: ${out}/data/en/task/topiocqa: no dialogue was built, so nothing was committed; 1 of 1 dialogues failed with: long.json: conversation 1: field "Turn_no": 150 turns, more than the 100 allowed per conversation (corpus.maximumTurnsPerConversation)`,
    );
    expect(existsSync(out)).toBe(false);
  });

  it('a corpus that is a FIFO: refused at once with one line, nothing created', async () => {
    const fifo = path.join(scratch, 'fifo.json');
    execFileSync('mkfifo', [fifo]);
    const out = path.join(scratch, 'fifo-out');
    const result = await cli(['build', '--corpus', fifo, '--out', out, '--dry-run']);
    expect(result.code).toBe(2);
    expect(result.stderr.at(-1)).toBe(`duplexsynth: ${fifo}: cannot read: is a FIFO, not a regular file`);
    expect(existsSync(out)).toBe(false);
  });

  it('a corpus that is a symbolic link to itself: the errno in words', async () => {
    const loop = path.join(scratch, 'loop.json');
    await symlink(loop, loop);
    const result = await cli(['build', '--corpus', loop, '--out', path.join(scratch, 'loop-out'), '--dry-run']);
    expect(result.code).toBe(2);
    expect(result.stderr.at(-1)).toBe(
      `duplexsynth: ${loop}: cannot read: too many symbolic links (a link that points back to itself) (ELOOP); fix or remove the link`,
    );
    expect(existsSync(path.join(scratch, 'loop-out'))).toBe(false);
  });

  it("an empty final Answer: the turn is dropped, the loader's warning printed and kept in summary.json", async () => {
    const corpus = path.join(scratch, 'no-last-answer.json');
    const turn = (index: number, question: string, answer: string, context: string[]) => ({
      Conversation_no: 1,
      Turn_no: index + 1,
      Question: question,
      is_nq: false,
      Answer: answer,
      Topic: 'Pier',
      Topic_section: 'Intro',
      Context: context,
    });
    await writeFile(
      corpus,
      JSON.stringify([
        turn(0, 'Where is the pier?', 'It is in Brighton.', []),
        turn(1, 'How long is it?', '', ['Where is the pier?', 'It is in Brighton.']),
      ]),
    );
    const { file, out } = await config('last-answer', {
      corpus: { path: corpus },
      datasets: { bargeIn: false },
      quality: { enabled: false },
    });
    const result = await cli(['build', '--config', file]);
    expect(result.code).toBe(0);
    const warning = '1 turns with an empty answer: answer null (1 final turns, 0 earlier turns)';
    expect(result.stderr.filter((line) => line.includes('empty'))).toEqual([`ingest: warning: ${warning}`]);
    const summary = JSON.parse(
      await readFile(path.join(out, 'data', 'en', 'task', 'topiocqa', 'summary.json'), 'utf8'),
    ) as { corpusWarnings: string[]; events: Record<string, number> };
    expect(summary.corpusWarnings).toEqual([warning]);
    const build = JSON.parse(await readFile(path.join(out, 'summary.json'), 'utf8')) as {
      datasets: { corpusWarnings: string[] }[];
    };
    expect(build.datasets.map((dataset) => dataset.corpusWarnings)).toEqual([[warning]]);
    expect(await readFile(path.join(out, 'data', 'en', 'task', 'topiocqa', 'summary.md'), 'utf8')).toContain(
      `- what the corpus loader did (its warnings): 1\n  - ${warning}\n`,
    );
    // --json: the warning is an event of level warn (it was info)
    const json = await cli(['build', '--config', file, '--json']);
    expect(json.code).toBe(0);
    const events = json.stderr
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { type: string; level: string; line?: string });
    expect(events.filter((event) => event.line?.includes('empty'))).toEqual([
      expect.objectContaining({ type: 'log', level: 'warn', line: `ingest: warning: ${warning}` }),
    ]);
    // status of a build made with --out finds its run record in the cache beside it ({out}/../.cache), without --cache-dir
    const beside = path.join(scratch, 'beside', 'out');
    expect((await cli(['build', '--corpus', corpus, '--out', beside, '--no-score', '--quiet'])).code).toBe(0);
    const status = await cli(['status', beside, '--json']);
    expect(status.code).toBe(0);
    const lastRun = (JSON.parse(status.stdout) as { lastRun: { file: string } | null }).lastRun;
    expect(lastRun?.file.startsWith(path.join(scratch, 'beside', '.cache'))).toBe(true);
  });
});

describe('services that cannot work', () => {
  it('a Gemini backend without its API key: refused before the lock, nothing created', async () => {
    const { file, out, cache } = await config('no-key', {
      llm: { rewrite: { backend: 'gemini', model: 'gemma-4-31b-it' }, translate: { backend: 'none' } },
    });
    const result = await cli(['build', '--config', file]);
    expect(result.code).toBe(2);
    expect(result.stderr.at(-1)).toBe(
      'duplexsynth: llm.rewrite: the gemini backend needs an API key: set the environment variable GEMINI_API_KEY or GOOGLE_API_KEY (the setting names the variable with apiKeyVariable, never the key)',
    );
    expect(existsSync(out)).toBe(false);
    expect(existsSync(cache)).toBe(false);
  });

  it('a dead LLM service: the message names its URL; the refused build leaves no empty folder', async () => {
    const { file, out, cache } = await config('dead-llm', {
      llm: {
        rewrite: {
          backend: 'openai-compatible',
          baseUrl: 'http://127.0.0.1:1/v1',
          model: 'm',
          retry: { maxRetries: 0 },
        },
        translate: { backend: 'none' },
      },
    });
    const result = await cli(['build', '--config', file, '--quiet']);
    expect(result.code).toBe(4);
    expect(result.stderr.at(-1)).toBe(
      `duplexsynth: ${out}/data/en/task/topiocqa: no dialogue was built, so nothing was committed; 1 of 1 dialogues failed with: OpenAI-compatible m: connection failed to http://127.0.0.1:1/v1 (Connection error.: fetch failed)`,
    );
    expect(existsSync(out)).toBe(false);
    expect(existsSync(cache)).toBe(false);
  }, 120_000);

  it('an API key written into the LLM URL (http://me:KEY@host/v1): every line says the service failed, none shows the key', async () => {
    const { file, out } = await config('key-in-url', {
      llm: {
        rewrite: {
          backend: 'openai-compatible',
          baseUrl: 'http://me:sk-LEAKED-0042@127.0.0.1:1/v1',
          model: 'm',
          retry: { maxRetries: 0 },
        },
        translate: { backend: 'none' },
      },
    });
    const result = await cli(['build', '--config', file, '--quiet']);
    expect(result.code).toBe(4);
    expect(result.stderr.at(-1)).toMatch(/^duplexsynth: .*no dialogue was built.*OpenAI-compatible m/);
    expect(result.stderr.join('\n')).not.toContain('sk-LEAKED-0042');
    expect(result.stderr.join('\n')).not.toContain(encodeURIComponent('sk-LEAKED-0042'));
    expect(existsSync(out)).toBe(false);
  }, 120_000);

  it('a truncated voice prompt (0.09 s, its manifest says 4.17 s): refused before any request', async () => {
    const prompts = path.join(scratch, 'prompts');
    await mkdir(prompts, { recursive: true });
    const clip = (seconds: number) =>
      encodeWavPcm16({
        channels: [Float32Array.from({ length: Math.round(seconds * 16000) }, (_, index) => 0.3 * Math.sin(index / 7))],
        sampleRate: 16000,
      });
    await writeFile(path.join(prompts, 'a.wav'), clip(0.09));
    await writeFile(path.join(prompts, 'b.wav'), clip(4.17));
    const text = 'I grew up near the sea and I still love the sound of waves every single morning.';
    await writeFile(
      path.join(prompts, 'manifest.jsonl'),
      `${JSON.stringify({ id: 'a', speaker: 'one', corpus: 'fixture', text, path: 'a.wav', durationSeconds: 4.17 })}\n${JSON.stringify({ id: 'b', speaker: 'two', corpus: 'fixture', text, path: 'b.wav', durationSeconds: 4.17 })}\n`,
    );
    const { file, out } = await config('truncated-prompt', {
      tts: {
        en: {
          backend: 'cosyvoice2',
          service: { urls: ['http://127.0.0.1:1'], sampleRate: 24000, probe: false },
          speakerPrompts: { manifest: path.join(prompts, 'manifest.jsonl') },
        },
      },
    });
    const result = await cli(['build', '--config', file, '--quiet']);
    expect(result.code).toBe(2);
    expect(result.stderr.at(-1)).toBe(
      `duplexsynth: ${path.join(prompts, 'manifest.jsonl')}: prompt a (${path.join(prompts, 'a.wav')}): field "durationSeconds": the WAV lasts 0.09 s, the manifest says 4.17 s ` +
        '(more than the 5 % allowed, tts.en.speakerPrompts.durationTolerance); the clip was cut or replaced: cut the pool again (duplexsynth prompts)',
    );
    expect(existsSync(out)).toBe(false);
  });

  it('a voice prompt as long as its manifest says, but far too short for its transcript: refused before any request', async () => {
    const prompts = path.join(scratch, 'prompts-transcript');
    await mkdir(prompts, { recursive: true });
    const clip = (seconds: number) =>
      encodeWavPcm16({
        channels: [Float32Array.from({ length: Math.round(seconds * 16000) }, (_, index) => 0.3 * Math.sin(index / 7))],
        sampleRate: 16000,
      });
    await writeFile(path.join(prompts, 'a.wav'), clip(0.6));
    await writeFile(path.join(prompts, 'b.wav'), clip(4.17));
    const text = 'I grew up near the sea and I still love the sound of waves every single morning.';
    await writeFile(
      path.join(prompts, 'manifest.jsonl'),
      `${JSON.stringify({ id: 'a', speaker: 'one', corpus: 'fixture', text, path: 'a.wav', durationSeconds: 0.6 })}\n${JSON.stringify({ id: 'b', speaker: 'two', corpus: 'fixture', text, path: 'b.wav', durationSeconds: 4.17 })}\n`,
    );
    const { file, out } = await config('short-for-transcript', {
      tts: {
        en: {
          backend: 'cosyvoice2',
          service: { urls: ['http://127.0.0.1:1'], sampleRate: 24000, probe: false },
          speakerPrompts: { manifest: path.join(prompts, 'manifest.jsonl') },
        },
      },
    });
    const result = await cli(['build', '--config', file, '--quiet']);
    expect(result.code).toBe(2);
    expect(result.stderr.at(-1)).toBe(
      `duplexsynth: ${path.join(prompts, 'manifest.jsonl')}: prompt a (${path.join(prompts, 'a.wav')}): field "text": 63 letters of transcript need 2.63-13.60 s of speech, the clip lasts 0.60 s; ` +
        "the transcript is not the clip's (fix the manifest line or cut the pool again)",
    );
    expect(existsSync(out)).toBe(false);
  });
});

describe('side commands on wrong paths', () => {
  let dataset: string;
  let file: string;
  beforeAll(async () => {
    dataset = path.join(scratch, 'build', 'data', 'en', 'task', 'tiny');
    await mkdir(dataset, { recursive: true });
    await writeFile(path.join(dataset, 'manifest.json'), '{"format": "m3-duplexbench", "files": {}');
    file = path.join(scratch, 'a-file');
    await writeFile(file, 'x');
  });

  it('report on a missing folder: exit 2, nothing created', async () => {
    const missing = path.join(scratch, 'no-such-build');
    const result = await cli(['report', missing]);
    expect(result.code).toBe(2);
    expect(result.stderr).toEqual([
      `duplexsynth: ${missing}: build output folder: does not exist (ENOENT); check the path; give the folder a build wrote (it holds data/ and summary.json)`,
    ]);
    expect(existsSync(missing)).toBe(false);
  });

  it('report on a dataset folder: exit 2, the committed dataset untouched', async () => {
    const result = await cli(['report', dataset]);
    expect(result.code).toBe(2);
    expect(result.stderr).toEqual([
      `duplexsynth: ${dataset}: a dataset folder, not a build output folder; report takes the build's folder (${path.join(scratch, 'build')})`,
    ]);
    expect(await readdir(dataset)).toEqual(['manifest.json']);
  });

  it('report on a folder inside a dataset, and on a folder with no data/: exit 2', async () => {
    await mkdir(path.join(dataset, 'audio'), { recursive: true });
    const inside = await cli(['report', path.join(dataset, 'audio')]);
    expect(inside.code).toBe(2);
    expect(inside.stderr).toEqual([
      `duplexsynth: ${path.join(dataset, 'audio')}: inside the dataset folder ${dataset}, not a build output folder; report takes the build's folder (${path.join(scratch, 'build')})`,
    ]);
    const empty = path.join(scratch, 'empty-build');
    await mkdir(empty, { recursive: true });
    const none = await cli(['report', empty]);
    expect(none.code).toBe(2);
    expect(none.stderr).toEqual([
      `duplexsynth: ${empty}: holds no data/ folder, so no dataset to report; give the folder a build wrote (duplexsynth build --out DIR)`,
    ]);
    expect(await readdir(empty)).toEqual([]);
  });

  it('report on a path through a file: the errno in words, exit 2', async () => {
    const through = path.join(file, 'build');
    const result = await cli(['report', through]);
    expect(result.code).toBe(2);
    expect(result.stderr).toEqual([
      `duplexsynth: ${through}: build output folder: a part of the path is a file, not a folder (ENOTDIR); check the path; give the folder a build wrote (it holds data/ and summary.json)`,
    ]);
  });

  it('report on a build whose WAV is a symbolic link to /dev/zero: one line naming it, exit 2, nothing written', async () => {
    const tiny = await copyExportFixture(path.join(scratch, 'zero-wav'));
    const build = path.join(scratch, 'zero-wav', 'build');
    const wav = path.join(tiny, 'audio', 'tiny_0001.wav');
    await rm(wav);
    await symlink('/dev/zero', wav);
    const before = (await readdir(build, { recursive: true })).sort();
    const result = await cli(['report', build]);
    expect(result.code).toBe(2);
    expect(result.stderr).toEqual([`duplexsynth: ${wav}: is a character device, not a regular file`]);
    expect((await readdir(build, { recursive: true })).sort()).toEqual(before);
  });

  it('report beside a folder named report.previous that no report left: one line naming it, exit 2, it and the report kept', async () => {
    await copyExportFixture(path.join(scratch, 'foreign-previous'));
    const build = path.join(scratch, 'foreign-previous', 'build');
    const first = await cli(['report', build]);
    expect(first.code).toBe(0);
    const foreign = path.join(build, 'report.previous');
    await mkdir(foreign);
    await writeFile(path.join(foreign, 'notes.txt'), 'mine');
    const index = await readFile(path.join(build, 'report', 'index.html'));
    const result = await cli(['report', build]);
    expect(result.code).toBe(2);
    expect(result.stderr).toEqual([
      `duplexsynth: ${foreign}: not a backup left by duplexsynth (no .duplexsynth-backup in it), and the report is kept under that name while its new version is swapped in; it was left as it is: rename or move it`,
    ]);
    expect(await readdir(foreign)).toEqual(['notes.txt']);
    expect(await readFile(path.join(foreign, 'notes.txt'), 'utf8')).toBe('mine');
    expect(await readFile(path.join(build, 'report', 'index.html'))).toEqual(index);
    expect(existsSync(path.join(build, 'report.partial'))).toBe(false);
  });

  it('status on a file: exit 2', async () => {
    const result = await cli(['status', file]);
    expect(result.code).toBe(2);
    expect(result.stderr).toEqual([
      `duplexsynth: ${file}: a file, not a build output folder; give the folder a build wrote (it holds data/ and summary.json)`,
    ]);
  });

  it('export of a missing dataset: exit 2, no export folder created', async () => {
    const missing = path.join(scratch, 'gone', 'data', 'en', 'task', 'x');
    const result = await cli(['export', missing, '--to', 'rttm']);
    expect(result.code).toBe(2);
    expect(result.stderr).toEqual([`duplexsynth: ${missing}: dataset folder: does not exist (ENOENT); check the path`]);
    expect(existsSync(path.join(scratch, 'gone'))).toBe(false);
  });

  it('export of a dataset it cannot read into a new folder: refused, the folder it made removed', async () => {
    const unreadable = path.join(scratch, 'build', 'data', 'en', 'task', 'shapeless');
    await mkdir(unreadable, { recursive: true });
    await writeFile(path.join(unreadable, 'manifest.json'), '{}');
    const out = path.join(scratch, 'exports', 'deep', 'rttm');
    const result = await cli(['export', unreadable, '--to', 'rttm', '--out', out]);
    expect(result.code).toBe(2);
    expect(result.stderr).toEqual([
      `duplexsynth: ${path.join(unreadable, 'all.jsonl')}: cannot be read: does not exist (ENOENT); check the path`,
    ]);
    expect(existsSync(path.join(scratch, 'exports'))).toBe(false);
  });

  it('verify on a broken manifest: the file named', async () => {
    const result = await cli(['verify', dataset]);
    expect(result.code).toBe(2);
    expect(result.stderr).toEqual([
      expect.stringMatching(
        new RegExp(
          `^duplexsynth: ${path.join(dataset, 'manifest.json')}: not valid JSON \\(.+\\); the dataset cannot be checked: rebuild it$`,
        ),
      ),
    ]);
  });

  it('measure --out an existing folder: the errno in words, nothing written', async () => {
    const recordings = path.join(scratch, 'one-recording');
    await mkdir(recordings, { recursive: true });
    await writeFile(
      path.join(recordings, 'call.rttm'),
      [
        'SPEAKER call 1 0.00 2.00 <NA> <NA> A <NA> <NA>',
        'SPEAKER call 1 2.30 1.50 <NA> <NA> B <NA> <NA>',
        'SPEAKER call 1 4.00 2.00 <NA> <NA> A <NA> <NA>',
      ].join('\n') + '\n',
    );
    const folder = path.join(scratch, 'stats-folder');
    await mkdir(folder, { recursive: true });
    const result = await cli(['measure', '--format', 'rttm', '--language', 'en', '--out', folder, recordings]);
    expect(result.code).toBe(2);
    expect(result.stderr.at(-1)).toBe(
      `duplexsynth: ${folder}: is a folder, where a file is needed (EISDIR); give the file inside it`,
    );
    expect(await readdir(folder)).toEqual([]);
  });

  it('measure on an empty folder: the folder named', async () => {
    const empty = path.join(scratch, 'no-recordings');
    await mkdir(empty, { recursive: true });
    const result = await cli([
      'measure',
      '--format',
      'rttm',
      '--language',
      'en',
      '--out',
      path.join(scratch, 'stats.json'),
      empty,
    ]);
    expect(result.code).toBe(2);
    expect(result.stderr).toEqual([
      `duplexsynth: no rttm recordings found in ${empty}; give files or folders of that format`,
    ]);
    expect(existsSync(path.join(scratch, 'stats.json'))).toBe(false);
  });
});
