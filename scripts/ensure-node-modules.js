// Runs `npm ci` when node_modules is missing or older than package-lock.json, so that
// `npm run demo` and `npm test` work on a fresh checkout with nothing installed but Node.
import { existsSync, statSync } from 'node:fs';
import { execSync } from 'node:child_process';

const marker = 'node_modules/.package-lock.json';
const stale = !existsSync(marker) || statSync(marker).mtimeMs < statSync('package-lock.json').mtimeMs;
if (stale) {
  console.error('duplexsynth: installing npm dependencies (npm ci)');
  execSync('npm ci --no-audit --no-fund', { stdio: 'inherit', env: { ...process.env, ONNXRUNTIME_NODE_INSTALL: 'skip' } });
}
