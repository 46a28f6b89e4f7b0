/**
 * Writes docs/cli.md from the command definitions (scripts/docs/cli-reference.ts):
 * `npx tsx scripts/write-cli-reference.ts`.
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { PACKAGE_ROOT } from '../pipeline/storage/package-files.ts';
import { renderCliReference } from './docs/cli-reference.ts';

const file = path.join(PACKAGE_ROOT, 'docs', 'cli.md');
await writeFile(file, renderCliReference());
console.log(file);
