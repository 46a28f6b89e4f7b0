// Run before `npm run demo` and `npm test` (their pre-scripts): runs `npm ci` when node_modules is
// missing or older than package-lock.json, then compiles the sources to dist/ when dist/ is missing
// or is not a build of the sources as they are now (scripts/build-dist.js), so that both commands
// work on a fresh checkout with nothing installed but Node.
//
// A node_modules that is a symbolic link (a folder shared by several checkouts) is never reinstalled:
// `npm ci` empties the folder the link points to before replacing the link, which would take the
// dependencies away from every checkout that shares it.
import { existsSync, lstatSync, statSync } from 'node:fs';
import { execSync } from 'node:child_process';

const marker = 'node_modules/.package-lock.json';
const stale = !existsSync(marker) || statSync(marker).mtimeMs < statSync('package-lock.json').mtimeMs;
const linked = existsSync('node_modules') && lstatSync('node_modules').isSymbolicLink();
if (stale && linked) {
  console.error(
    'duplexsynth: node_modules is a link to a shared folder and may be older than package-lock.json; ' +
      'not reinstalling it here (run `npm ci` in the folder it points to if it is out of date)',
  );
} else if (stale) {
  console.error('duplexsynth: installing npm dependencies (npm ci)');
  execSync('npm ci --no-audit --no-fund', {
    stdio: 'inherit',
    env: { ...process.env, ONNXRUNTIME_NODE_INSTALL: 'skip' },
  });
}
// Imported only now: build-dist.js needs nothing from node_modules, but tsc comes from there.
const { buildDist, distState } = await import('./build-dist.js');
const state = distState();
if (!state.fresh) {
  console.error(`duplexsynth: compiling to dist/ (${state.reason}): tsc -p tsconfig.build.json`);
  try {
    buildDist();
  } catch (error) {
    console.error(`duplexsynth: ${error.message}`);
    process.exit(1);
  }
}
