/**
 * Every YAML snippet of README.md and docs/ is a part of a file in examples/ (which
 * scripts/examples.test.ts plans with `build --dry-run`), or, when it is a language pack (`# NAME.yaml`
 * on its first line and a `code:` key), a pack the pack reader accepts: a snippet cannot drift from a
 * config that works.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../pipeline/config.ts';
import { parseLanguagePack } from '../../pipeline/model/language-pack.ts';

const pages = ['README.md', ...readdirSync(path.join(PROJECT_ROOT, 'docs')).map((name) => `docs/${name}`)].filter(
  (page) => page.endsWith('.md'),
);

/** The fenced YAML blocks of a Markdown text, with the line each starts on. */
function yamlBlocks(text: string): Array<{ line: number; lines: string[] }> {
  const blocks: Array<{ line: number; lines: string[] }> = [];
  const lines = text.split('\n');
  for (let index = 0; index < lines.length; index++) {
    if (lines[index]!.trim() !== '```yaml') continue;
    // a block inside a list item is indented as its fence is
    const indent = lines[index]!.length - lines[index]!.trimStart().length;
    const start = index + 1;
    while (index + 1 < lines.length && lines[index + 1]!.trim() !== '```') index++;
    blocks.push({ line: start + 1, lines: lines.slice(start, index + 1).map((line) => line.slice(indent)) });
    index++;
  }
  return blocks;
}

const examples = readdirSync(path.join(PROJECT_ROOT, 'examples'))
  .filter((name) => name.endsWith('.yaml'))
  .map((name) => readFileSync(path.join(PROJECT_ROOT, 'examples', name), 'utf8').split('\n'));

/** Whether `snippet` is a run of whole consecutive lines of `file` (trailing spaces ignored). */
function isExcerpt(snippet: string[], file: string[]): boolean {
  const trimmed = (line: string) => line.trimEnd();
  return file.some((_, start) =>
    snippet.every((line, offset) => trimmed(file[start + offset] ?? '\0') === trimmed(line)),
  );
}

describe('YAML snippets of README.md and docs/', () => {
  const snippets = pages.flatMap((page) =>
    yamlBlocks(readFileSync(path.join(PROJECT_ROOT, page), 'utf8')).map((block) => ({ page, ...block })),
  );

  it('exist (the test reads the pages)', () => {
    expect(snippets.length).toBeGreaterThan(3);
  });

  it.each(snippets.map((snippet) => [`${snippet.page}:${snippet.line}`, snippet] as const))(
    '%s is a part of an example config, or a language pack that loads',
    (_, snippet) => {
      if (/^# [\w-]+\.yaml$/.test(snippet.lines[0]!.trim()) && snippet.lines.some((line) => line.startsWith('code:'))) {
        expect(() => parseLanguagePack(parseYaml(snippet.lines.join('\n')), snippet.page)).not.toThrow();
        return;
      }
      expect(
        examples.some((file) => isExcerpt(snippet.lines, file)),
        `${snippet.page}:${snippet.line} is not a run of lines of any examples/*.yaml file`,
      ).toBe(true);
    },
  );
});
