// The production build: `tsc -p tsconfig.build.json` compiles the CLI and the pipeline to dist/
// (git-ignored), which the `duplexsynth` command (scripts/duplexsynth.js) runs. dist/ carries a
// fingerprint of the sources it was compiled from (dist/.source-fingerprint: SHA-256 over the path and
// content of every compiled input); the command refuses to run a dist/ whose fingerprint is not that
// of the sources now, so a stale build never runs unnoticed.
//
//   node scripts/build-dist.js            compile (always), then write the fingerprint   (npm run build)
//   node scripts/build-dist.js --if-stale compile only when dist/ is missing or stale     (npm test, npm run demo)
//
// Plain JavaScript (no TypeScript loader needed), imported by scripts/duplexsynth.js and
// scripts/ensure-node-modules.js.
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The project root (this file is scripts/build-dist.js). */
export const PROJECT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Folders compiled to dist/ (tsconfig.build.json `include`). */
const SOURCE_FOLDERS = ['pipeline', 'stages', 'corpora', 'scripts'];
/** Files outside them that change what is compiled. */
const BUILD_FILES = ['tsconfig.json', 'tsconfig.build.json', 'package.json'];
const FINGERPRINT_FILE = '.source-fingerprint';

/** Every compiled input below `folder` (relative paths, sorted): `.ts` files other than tests. */
function sourceFiles(root, folder) {
  const found = [];
  const walk = (relative) => {
    for (const entry of readdirSync(path.join(root, relative), { withFileTypes: true })) {
      const child = path.posix.join(relative, entry.name);
      if (entry.isDirectory()) walk(child);
      else if (entry.isFile() && entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts')) found.push(child);
    }
  };
  if (existsSync(path.join(root, folder))) walk(folder);
  return found;
}

/**
 * SHA-256 (hex) over the relative path and content of every compiled input of the project at `root`
 * (the `.ts` files of pipeline/, stages/, corpora/ and scripts/ except `*.test.ts`, the two
 * tsconfig files and package.json), in path order.
 */
export function sourceFingerprint(root = PROJECT_ROOT) {
  const hash = createHash('sha256');
  const files = [
    ...BUILD_FILES.filter((file) => existsSync(path.join(root, file))),
    ...SOURCE_FOLDERS.flatMap((folder) => sourceFiles(root, folder)).sort(),
  ];
  for (const file of files) {
    const content = readFileSync(path.join(root, file));
    hash.update(`${file}\0${content.length}\0`).update(content);
  }
  return hash.digest('hex');
}

/**
 * Whether `root/dist` holds a build of the sources as they are now.
 * @returns `{ fresh: true }`, or `{ fresh: false, reason }` with a one-line reason
 */
export function distState(root = PROJECT_ROOT) {
  const stamp = path.join(root, 'dist', FINGERPRINT_FILE);
  if (!existsSync(path.join(root, 'dist', 'scripts', 'cli.js')) || !existsSync(stamp))
    return { fresh: false, reason: 'dist/ has no complete build' };
  if (readFileSync(stamp, 'utf8').trim() !== sourceFingerprint(root))
    return { fresh: false, reason: 'the sources changed since dist/ was built' };
  return { fresh: true };
}

/**
 * Compiles the project at `root` to `root/dist`: tsc into a temporary folder beside it (types checked;
 * nothing is emitted when they fail), which then replaces dist/ and gets the fingerprint of the
 * sources as they were when the build started (a source changed during the build leaves dist/ stale).
 * @throws Error when tsc fails (its messages are printed); dist/ is then left as it was
 */
export function buildDist(root = PROJECT_ROOT) {
  const fingerprint = sourceFingerprint(root);
  const temporary = path.join(root, `.dist-build-${process.pid}`);
  rmSync(temporary, { recursive: true, force: true });
  const tsc = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  try {
    execFileSync(process.execPath, [tsc, '-p', path.join(root, 'tsconfig.build.json'), '--outDir', temporary], {
      cwd: root,
      stdio: 'inherit',
    });
  } catch (error) {
    rmSync(temporary, { recursive: true, force: true });
    throw new Error(`the production build failed (tsc -p tsconfig.build.json): dist/ was left as it was`, {
      cause: error,
    });
  }
  writeFileSync(path.join(temporary, FINGERPRINT_FILE), `${fingerprint}\n`);
  rmSync(path.join(root, 'dist'), { recursive: true, force: true });
  renameSync(temporary, path.join(root, 'dist'));
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const onlyIfStale = process.argv.includes('--if-stale');
  const state = distState();
  if (onlyIfStale && state.fresh) process.exit(0);
  if (onlyIfStale) console.error(`duplexsynth: compiling to dist/ (${state.reason}): tsc -p tsconfig.build.json`);
  try {
    buildDist();
  } catch (error) {
    console.error(`duplexsynth: ${error.message}`);
    process.exit(1);
  }
}
