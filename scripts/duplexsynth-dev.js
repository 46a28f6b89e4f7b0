#!/usr/bin/env node
// The `duplexsynth` command from the TypeScript sources through tsx's loader, for development and
// tests (`npm run dev -- ARGS`, the tests' CLI): no build step, every source change seen at once.
// The installed command (scripts/duplexsynth.js) runs the compiled dist/ instead.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('./cli.ts');
await main(process.argv);
