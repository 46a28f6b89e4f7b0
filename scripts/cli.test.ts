/**
 * The `duplexsynth` command as a user runs it (a real child process): annotate regenerates the
 * conformance lines, bad input ends with a one-line reason and a non-zero exit code.
 */
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT, sharedDirectory } from '../pipeline/config.ts';
import { TEST_CLI } from './testing/cli-command.ts';
import { createProgram } from './cli.ts';

const run = promisify(execFile);
const CLI = TEST_CLI; // the compiled command when dist/ is a build of these sources, else the sources through tsx (scripts/testing/cli-command.ts)

async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [CLI, ...args], { cwd: PROJECT_ROOT });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failure = error as { code: number; stdout: string; stderr: string };
    return { code: failure.code, stdout: failure.stdout, stderr: failure.stderr };
  }
}

const TOY = path.join(sharedDirectory(), 'conformance/m3-toy/data/ja');

describe('duplexsynth annotate', () => {
  it.each([
    ['chat/magicdata_toy', 'A0022_S0003.0.0-120.0'],
    ['task/topiocqa_ja_toy', 'topiocqa_dev_0001'],
  ])('regenerates %s exactly from its txt_align file', async (folder, id) => {
    const expected = (await readFile(path.join(TOY, folder, 'test.jsonl'), 'utf8')).trim();
    const result = await cli('annotate', '--alignment', path.join(TOY, folder, 'txt_align', `${id}.txt`), '--id', id);
    expect(result.code).toBe(0);
    expect(result.stdout.trim()).toBe(expected);
  });

  it('a missing file: one-line reason naming it, non-zero exit', async () => {
    const result = await cli('annotate', '--alignment', 'no/such/file.txt', '--id', 'x');
    expect(result.code).not.toBe(0);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toMatch(/no\/such\/file\.txt/);
  });

  it('a malformed alignment line: the reason names file and line', async () => {
    const result = await cli('annotate', '--alignment', path.join(PROJECT_ROOT, 'package.json'), '--id', 'x');
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(/package\.json:1/);
  });
});

describe('duplexsynth build: bad options and input', () => {
  it('Japanese on the real corpus without an LLM backend stops at once and says what to configure', async () => {
    const result = await cli(
      'build',
      '--corpus',
      path.join(sharedDirectory(), 'corpora/topiocqa/topiocqa_dev.json'),
      '--language',
      'ja',
      '--limit',
      '1',
      '--out',
      '/tmp/duplexsynth-should-not-exist',
    );
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/llm\.translate/);
  });

  it('rejects a bad --limit with a usage message', async () => {
    const result = await cli('build', '--limit', 'zero');
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(/positive integer/);
  });

  it('rejects a --dnsmos-hop under one sample or not a number with a usage message', async () => {
    for (const value of ['0', '1e-6', 'fast']) {
      const result = await cli('build', '--dnsmos-hop', value);
      expect(result.code, value).toBe(2);
      expect(result.stderr, value).toMatch(/--dnsmos-hop.*expected seconds from 1\/16000/);
    }
  });

  it("export refuses an option of another format (it was ignored without a word), before reading the dataset; the format's own options pass", async () => {
    for (const [args, message] of [
      [['--to', 'rttm', '--layout', 'audiofolder'], "option '--layout' applies to huggingface, not to --to rttm"],
      [
        ['--to', 'huggingface', '--shard-size', '3'],
        "option '--shard-size' applies to lhotse-shar, not to --to huggingface",
      ],
      [['--to', 'textgrid', '--copy-audio'], "option '--copy-audio' applies to lhotse, not to --to textgrid"],
      [
        ['--to', 'lhotse-shar', '--absolute-paths'],
        "option '--absolute-paths' applies to moshi-finetune and lhotse, not to --to lhotse-shar",
      ],
    ] as const) {
      const result = await cli('export', 'no/such/dataset', ...args);
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stderr, args.join(' ')).toBe(`duplexsynth: ${message} (run with --help for usage)\n`);
    }
    // accepted: the dataset folder is then what is refused
    const accepted = await cli('export', 'no/such/dataset', '--to', 'huggingface', '--layout', 'audiofolder');
    expect(accepted.code).toBe(2);
    expect(accepted.stderr).toMatch(/no\/such\/dataset: dataset folder: does not exist/);
  });

  it('a corpus that is not JSON: error names the file', async () => {
    const result = await cli(
      'build',
      '--corpus',
      path.join(PROJECT_ROOT, 'corpora/fixtures/topiocqa/not-json.json'),
      '--lang',
      'en',
      '--out',
      '/tmp/duplexsynth-should-not-exist',
    );
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/not-json\.json/);
  });

  it('--json: every line on stderr is a JSON event with a level, the last a summary naming the cause, the exit code and the outputs kept (none)', async () => {
    const result = await cli(
      'build',
      '--json',
      '--corpus',
      path.join(PROJECT_ROOT, 'corpora/fixtures/topiocqa/not-json.json'),
      '--lang',
      'en',
      '--out',
      '/tmp/duplexsynth-should-not-exist',
    );
    expect(result.code).toBe(2);
    const events = result.stderr
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string; level: string; exitCode?: number; error?: string });
    for (const event of events) expect(['info', 'warn', 'error']).toContain(event.level);
    // the corpus is read before anything is written: the failed build kept no output, and says so
    // (a successful build lists its datasets, summary and report: pipeline/orchestration/build-failures.test.ts)
    expect(events.at(-1)).toMatchObject({ type: 'summary', level: 'error', exitCode: 2, outputs: [] });
    expect(events.at(-1)!.error).toMatch(/not-json\.json/);
  });

  it('--plain is an option of build (plain lines even on a terminal)', async () => {
    const result = await cli('build', '--help');
    expect(result.stdout).toMatch(/--plain\s+progress as plain lines/);
  });
});

describe('the output options of the long-running commands', () => {
  const LONG_RUNNING = [
    'build',
    'demo',
    'worker',
    'verify',
    'score',
    'split',
    'measure',
    'export',
    'report',
    'prompts',
    'chat',
  ];

  it('each has -q/--quiet, --plain and --json, -q and --plain with the same meaning everywhere', () => {
    const program = createProgram();
    for (const name of LONG_RUNNING) {
      const command = program.commands.find((each) => each.name() === name)!;
      const option = (flag: string) => command.options.find((each) => each.long === flag);
      expect(option('--quiet')?.short, name).toBe('-q');
      expect(option('--quiet')?.description, name).toBe('no progress lines: only the final line(s) and errors');
      expect(option('--plain')?.description, name).toBe(
        'progress as plain lines even on a terminal (no live bars, no terminal control)',
      );
      expect(option('--json')?.description, name).toMatch(/JSON/);
    }
  });

  it('verify --quick --json: the result as one JSON object on standard output; -q: the problems and the last line only', async () => {
    const dataset = path.join(PROJECT_ROOT, 'pipeline/export/fixtures/tiny-dataset/data/en/task/tiny');
    const json = await cli('verify', '--quick', '--json', dataset);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({ filesChecked: 0, problems: [] });
    // the note is a JSON log event on standard error
    expect(JSON.parse(json.stderr.trim())).toMatchObject({
      type: 'log',
      level: 'info',
      line: expect.stringMatching(/^note: /),
    });
    const quiet = await cli('verify', '-q', dataset);
    expect(quiet.code).toBe(1); // the fixture has no audio
    expect(quiet.stdout).toBe('0 files checked against manifest.json, 2 dialogues checked, 2 problems\n');
    expect(quiet.stderr).not.toMatch(/note:/);
    expect(quiet.stderr).toMatch(/tiny_0001\.wav: cannot be read/);
  });

  it('languages --json: one JSON array of the packs', async () => {
    const result = await cli('languages', '--json');
    expect(result.code).toBe(0);
    const languages = JSON.parse(result.stdout) as { code: string; offlineVoice: { engine: string } }[];
    expect(languages.find((language) => language.code === 'ja')?.offlineVoice.engine).toBe('open-jtalk');
  });
});
