/**
 * The demo's datasets, byte for byte: `duplexsynth demo --no-score` from a fresh cache writes exactly
 * the files listed in testing/demo-data.sha256 (sha256 and path of every file under data/, as
 * `sha256sum` prints them). A refactor must not change a byte of the data; a change that means to
 * (new placement, new rendering) regenerates the list in the same commit and says why:
 *   duplexsynth demo --no-score --out DIR && (cd DIR && find data -type f -print0 | sort -z | xargs -0 sha256sum)
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { TEST_CLI } from '../../scripts/testing/cli-command.ts';

const run = promisify(execFile);
const here = path.dirname(fileURLToPath(import.meta.url));
const PROJECT_ROOT = path.resolve(here, '..', '..');

/** Every file under `root` (relative paths with `/`, sorted as `sort -z` sorts bytes). */
async function filesUnder(root: string, prefix = ''): Promise<string[]> {
  const entries = await readdir(path.join(root, prefix), { withFileTypes: true });
  const files: string[] = [];
  for (const entry of entries) {
    const relative = prefix === '' ? entry.name : `${prefix}/${entry.name}`;
    if (entry.isDirectory()) files.push(...(await filesUnder(root, relative)));
    else files.push(relative);
  }
  return files.sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
}

describe('the demo data digest', () => {
  let folder = '';
  afterAll(async () => {
    if (folder) await rm(folder, { recursive: true, force: true });
  });

  it('a fresh unscored demo build writes the listed files with the listed bytes', async () => {
    folder = await mkdtemp(path.join(os.tmpdir(), 'demo-digest-'));
    const out = path.join(folder, 'out');
    await run(process.execPath, [TEST_CLI, 'demo', '--no-score', '--out', out, '-q'], {
      cwd: PROJECT_ROOT,
      maxBuffer: 16 * 1024 * 1024,
    });
    const lines: string[] = [];
    for (const file of await filesUnder(out, 'data')) {
      const digest = createHash('sha256')
        .update(await readFile(path.join(out, file)))
        .digest('hex');
      lines.push(`${digest}  ${file}`);
    }
    const expected = (await readFile(path.join(here, 'testing', 'demo-data.sha256'), 'utf8')).trimEnd().split('\n');
    expect(lines).toEqual(expected);
  });
});
