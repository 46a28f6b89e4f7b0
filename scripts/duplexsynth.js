#!/usr/bin/env node
// Entry point of the `duplexsynth` command. The project is TypeScript run through tsx's loader, so
// `npx duplexsynth` works right after `npm ci` with no build step.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('./cli.ts');
await main(process.argv);
