/**
 * Writes the generated documentation pages (scripts/docs/pages.ts) from the code they describe.
 *
 *   npm run docs              write every page
 *   npm run docs -- --check   write nothing; exit 1 naming each page that differs from its rendering
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { PROJECT_ROOT } from '../pipeline/config.ts';
import { DOCS_PAGES } from './docs/pages.ts';

async function main(): Promise<number> {
  const check = process.argv.includes('--check');
  const stale: string[] = [];
  for (const page of DOCS_PAGES) {
    const file = path.join(PROJECT_ROOT, page.file);
    const rendered = await page.render();
    const current = await readFile(file, 'utf8').catch(() => null);
    if (current === rendered) continue;
    if (check) stale.push(page.file);
    else {
      await writeFile(file, rendered);
      console.log(`wrote ${page.file}`);
    }
  }
  if (stale.length > 0) {
    console.error(`stale generated docs: ${stale.join(', ')} (run \`npm run docs\`)`);
    return 1;
  }
  return 0;
}

process.exitCode = await main();
