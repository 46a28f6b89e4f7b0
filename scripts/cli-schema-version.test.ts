/**
 * `duplexsynth schema` writes by default to the project's pipeline/config.schema.json whatever the
 * working directory, and `duplexsynth --version` prints package.json's version.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT, configJsonSchema } from '../pipeline/config.ts';
import { languagePackJsonSchema } from '../pipeline/model/language-pack.ts';
import { createProgram } from './cli.ts';
import { TEST_CLI } from './testing/cli-command.ts';

const run = promisify(execFile);
const CLI = TEST_CLI; // the compiled command when dist/ is a build of these sources, else the sources through tsx (scripts/testing/cli-command.ts)

describe('duplexsynth schema', () => {
  it('defaults --out to the absolute path of pipeline/config.schema.json in the project', () => {
    const schema = createProgram().commands.find((command) => command.name() === 'schema');
    const out = schema?.options.find((option) => option.long === '--out');
    expect(out?.defaultValue).toBe(path.join(PROJECT_ROOT, 'pipeline', 'config.schema.json'));
  });

  it('writes the schema when run outside the project root', async () => {
    const directory = await mkdtemp(path.join(os.tmpdir(), 'duplexsynth-schema-'));
    try {
      const file = path.join(directory, 'schema.json');
      const { stdout } = await run(process.execPath, [CLI, 'schema', '--out', file], { cwd: directory });
      const packFile = path.join(directory, 'language-pack.schema.json');
      expect(stdout.trim().split('\n')).toEqual([file, packFile]);
      expect(JSON.parse(await readFile(file, 'utf8'))).toEqual(JSON.parse(JSON.stringify(configJsonSchema())));
      expect(JSON.parse(await readFile(packFile, 'utf8'))).toEqual(
        JSON.parse(JSON.stringify(languagePackJsonSchema())),
      );
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });
});

describe('duplexsynth --version', () => {
  it("prints package.json's version and exits 0, from any working directory", async () => {
    const { version } = JSON.parse(await readFile(path.join(PROJECT_ROOT, 'package.json'), 'utf8')) as {
      version: string;
    };
    const { stdout } = await run(process.execPath, [CLI, '--version'], { cwd: os.tmpdir() });
    expect(stdout.trim()).toBe(version);
  });
});
