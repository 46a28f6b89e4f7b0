/**
 * Every build config in examples/ is complete and valid: `duplexsynth build --config FILE --dry-run`
 * (a child process, as a user runs it) loads it through the strict config schema and plans the build.
 *
 * The examples name their inputs relative to their own folder as they sit in a checkout:
 * `../corpora/demo/…` (the project's demo corpus) and `../../shared/…` (the shared folder beside the
 * project). The test copies them into a temporary project folder with the same neighbours: a link to
 * the project's `corpora/`, a link `shared` to `DUPLEXSYNTH_SHARED` beside it, and a small Japanese
 * corpus at `inputs/topiocqa-format-ja.json` for the example whose corpus is the user's own file.
 *
 * A dry run calls no service and writes nothing (pipeline/orchestration/plan-build.ts): remote LLM and
 * speech backends count requests instead of sending them, so no server needs to be reachable and no
 * API key set; the child process runs with `GEMINI_API_KEY` and `GOOGLE_API_KEY` removed to show it.
 * A queued example plans like a local build (`--dry-run` returns before the queue is used).
 */
import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT, sharedDirectory } from '../pipeline/config.ts';
import { TEST_CLI } from './testing/cli-command.ts';

const run = promisify(execFile);
const EXAMPLES = path.join(PROJECT_ROOT, 'examples');

/** The example configs a recipe in the docs refers to, by file name. */
const EXPECTED_EXAMPLES = [
  'corpus-in-another-language.yaml',
  'gemini-cosyvoice2-en-ja.yaml',
  'offline.yaml',
  'openai-compatible.yaml',
  'queued-build.yaml',
];

/** Two Japanese conversations of two turns in the TopiOCQA raw-release layout. */
function japaneseCorpus(): unknown[] {
  const turns = [
    ['富士山の高さはどれくらいですか', '標高は三千七百七十六メートルです'],
    ['最後に噴火したのはいつですか', '千七百七年の宝永噴火が最後の噴火です'],
    ['東京タワーはいつ完成しましたか', '千九百五十八年の十二月に完成しました'],
    ['高さは何メートルですか', 'アンテナを含めて三百三十三メートルあります'],
  ];
  return turns.map(([question, answer], index) => {
    const conversation = Math.floor(index / 2) + 1;
    const turn = (index % 2) + 1;
    const previous = turn === 2 ? (turns[index - 1] as string[]) : [];
    return {
      Context: previous,
      Conversation_no: conversation,
      Turn_no: turn,
      Question: question,
      is_nq: turn === 1,
      Answer: answer,
      Topic: conversation === 1 ? '富士山' : '東京タワー',
      Topic_section: '概要',
      Rationale: answer,
      Additional_answers: [],
      Gold_passage: { id: `ja:${index + 1}`, title: conversation === 1 ? '富士山' : '東京タワー', text: answer },
    };
  });
}

let project: string;
let root: string;

beforeAll(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'duplexsynth-examples-'));
  project = path.join(root, 'project');
  await mkdir(path.join(project, 'inputs'), { recursive: true });
  await cp(EXAMPLES, path.join(project, 'examples'), { recursive: true });
  await symlink(path.join(PROJECT_ROOT, 'corpora'), path.join(project, 'corpora'));
  await symlink(sharedDirectory(), path.join(root, 'shared'));
  await writeFile(path.join(project, 'inputs', 'topiocqa-format-ja.json'), JSON.stringify(japaneseCorpus(), null, 2));
});

afterAll(async () => {
  if (root) await rm(root, { recursive: true, force: true });
});

interface PlanLanguage {
  language: string;
  dataset: string;
  dialogues: number;
}

describe('examples/*.yaml', () => {
  it('holds the configs the docs name', async () => {
    const files = (await readdir(EXAMPLES)).filter((file) => file.endsWith('.yaml')).sort();
    expect(files).toEqual(EXPECTED_EXAMPLES);
  });

  it.each(EXPECTED_EXAMPLES)('%s keeps secrets out of the file (only names of environment variables)', async (file) => {
    const text = await readFile(path.join(EXAMPLES, file), 'utf8');
    expect(text).not.toMatch(/^\s*(apiKey|api_key|token|password)\s*:/im);
    expect(text).not.toMatch(/AIza[0-9A-Za-z_-]{20,}|sk-[0-9A-Za-z]{20,}/);
  });

  it.each(EXPECTED_EXAMPLES)('%s plans with build --dry-run, without services or API keys', async (file) => {
    const config = path.join(project, 'examples', file);
    const environment = { ...process.env };
    delete environment.GEMINI_API_KEY;
    delete environment.GOOGLE_API_KEY;
    const { stdout } = await run(
      process.execPath,
      [TEST_CLI, 'build', '--config', config, '--dry-run', '--limit', '2', '--json'],
      { cwd: project, env: environment },
    );
    const plan = JSON.parse(stdout) as { rejected: unknown[]; languages: PlanLanguage[] };
    expect(plan.rejected).toEqual([]);
    expect(plan.languages.length).toBeGreaterThan(0);
    for (const language of plan.languages) expect(language.dialogues).toBe(2);
  });
});
