import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../pipeline/config.ts';
import { distState, sourceFingerprint } from './build-dist.js';

const run = promisify(execFile);

/**
 * A tiny project beside the real one: the real scripts/duplexsynth.js with the modules it imports
 * (build-dist.js, starting-signals.js), one source file, and a dist/ whose cli.js prints what it was
 * given (no tsc needed).
 */
function makeProject(): string {
  const root = mkdtempSync(path.join(os.tmpdir(), 'duplexsynth-dist-'));
  mkdirSync(path.join(root, 'scripts'));
  mkdirSync(path.join(root, 'pipeline'));
  for (const file of ['duplexsynth.js', 'build-dist.js', 'starting-signals.js'])
    cpSync(path.join(PROJECT_ROOT, 'scripts', file), path.join(root, 'scripts', file));
  writeFileSync(path.join(root, 'package.json'), '{"name": "duplexsynth", "type": "module"}\n');
  writeFileSync(path.join(root, 'tsconfig.json'), '{}\n');
  writeFileSync(path.join(root, 'pipeline', 'a.ts'), 'export const a = 1;\n');
  writeFileSync(path.join(root, 'pipeline', 'a.test.ts'), 'export const t = 1;\n');
  mkdirSync(path.join(root, 'dist', 'scripts'), { recursive: true });
  writeFileSync(
    path.join(root, 'dist', 'scripts', 'cli.js'),
    "export async function main(argv) { console.log('compiled ran ' + argv.slice(2).join(' ')); }\n",
  );
  return root;
}

function stamp(root: string, fingerprint: string): void {
  writeFileSync(path.join(root, 'dist', '.source-fingerprint'), `${fingerprint}\n`);
}

describe('production build state (scripts/build-dist.js)', () => {
  let root: string;
  beforeEach(() => {
    root = makeProject();
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('changes the fingerprint with a compiled source or a tsconfig, not with a test file', () => {
    const before = sourceFingerprint(root);
    expect(sourceFingerprint(root)).toBe(before);
    writeFileSync(path.join(root, 'pipeline', 'a.test.ts'), 'export const t = 2;\n');
    expect(sourceFingerprint(root)).toBe(before);
    writeFileSync(path.join(root, 'pipeline', 'a.ts'), 'export const a = 2;\n');
    const edited = sourceFingerprint(root);
    expect(edited).not.toBe(before);
    writeFileSync(path.join(root, 'tsconfig.json'), '{"compilerOptions": {}}\n');
    expect(sourceFingerprint(root)).not.toBe(edited);
    writeFileSync(path.join(root, 'pipeline', 'b.ts'), '');
    expect(sourceFingerprint(root)).not.toBe(edited);
  });

  it('calls dist/ fresh only with a stamp of the sources as they are now', () => {
    expect(distState(root)).toEqual({ fresh: false, reason: 'dist/ has no complete build' });
    stamp(root, sourceFingerprint(root));
    expect(distState(root)).toEqual({ fresh: true });
    writeFileSync(path.join(root, 'pipeline', 'a.ts'), 'export const a = 3;\n');
    expect(distState(root)).toEqual({ fresh: false, reason: 'the sources changed since dist/ was built' });
  });

  it('the duplexsynth command runs a fresh dist/ and refuses a stale one (exit code 2, nothing run)', async () => {
    stamp(root, sourceFingerprint(root));
    const fresh = await run(process.execPath, [path.join(root, 'scripts', 'duplexsynth.js'), 'demo', '-q']);
    expect(fresh.stdout).toBe('compiled ran demo -q\n');

    writeFileSync(path.join(root, 'pipeline', 'a.ts'), 'export const a = 4;\n');
    const stale = await run(process.execPath, [path.join(root, 'scripts', 'duplexsynth.js'), 'demo']).then(
      () => null,
      (error: { code: number; stdout: string; stderr: string }) => error,
    );
    expect(stale).not.toBeNull();
    expect(stale?.code).toBe(2);
    expect(stale?.stdout).toBe('');
    expect(stale?.stderr).toContain('the sources changed since dist/ was built: run `npm run build` first');
  });
});
