/**
 * The generated docs are current and complete: each page of scripts/docs/pages.ts equals its fresh
 * rendering, and docs/configuration.md names every key of the committed JSON Schema
 * (pipeline/config.schema.json) with its default. The key list comes from a walk of the JSON Schema
 * file (json-schema-keys.ts), not from the zod walk that renders the page.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../pipeline/config.ts';
import { jsonSchemaKeys } from './json-schema-keys.ts';
import { DOCS_PAGES } from './pages.ts';

async function projectFile(file: string): Promise<string> {
  return readFile(path.join(PROJECT_ROOT, file), 'utf8');
}

async function schemaKeys(file: string) {
  return jsonSchemaKeys(JSON.parse(await projectFile(file)) as Record<string, unknown>);
}

describe('generated docs', () => {
  it.each(DOCS_PAGES.map((page) => page.file))('%s is its fresh rendering (else run `npm run docs`)', async (file) => {
    const page = DOCS_PAGES.find((candidate) => candidate.file === file)!;
    const committed = await projectFile(file).catch(() => '');
    expect(committed === (await page.render()), `${file} is stale: run \`npm run docs\``).toBe(true);
  });

  it('docs/configuration.md names every key of pipeline/config.schema.json with its default', async () => {
    const page = await projectFile('docs/configuration.md');
    const rows = page.split('\n').filter((line) => line.startsWith('| `'));
    const keys = await schemaKeys('pipeline/config.schema.json');
    expect(keys.length).toBeGreaterThan(100);
    const missing: string[] = [];
    for (const key of keys) {
      const own = rows.filter((line) => line.startsWith(`| \`${key.path}\` |`));
      if (own.length === 0) missing.push(`${key.path}: no row`);
      else if (key.hasDefault && !own.some((line) => line.includes(`\`${JSON.stringify(key.default)}\``)))
        missing.push(`${key.path}: default ${JSON.stringify(key.default)} not on its row`);
    }
    expect(missing).toEqual([]);
  });

  it.each(['pipeline/config.schema.json', 'pipeline/language-pack.schema.json'])(
    'every key of %s has a description',
    async (file) => {
      const keys = await schemaKeys(file);
      expect(keys.filter((key) => !key.description).map((key) => key.path)).toEqual([]);
    },
  );
});
