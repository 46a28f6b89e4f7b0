#!/usr/bin/env node
// The `duplexsynth` command from the TypeScript sources through tsx's loader, for development and
// tests (`npm run dev -- ARGS`, the tests' CLI): no build step, every source change seen at once.
// The installed command (scripts/duplexsynth.js) runs the compiled dist/ instead.
import { stopWhileStarting } from './starting-signals.js';

// a signal while the modules load ends the command with one line (./starting-signals.js)
const started = stopWhileStarting(process.argv);

// loaded after the handler above (static imports would load first)
const { register } = await import('tsx/esm/api');
register();
const { main } = await import('./cli.ts');
// main installs its own stop path before its first await
started();
await main(process.argv);
