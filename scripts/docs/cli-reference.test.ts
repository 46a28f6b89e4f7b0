/**
 * docs/cli.md is the rendering of the command definitions (scripts/docs/cli-reference.ts), and every
 * option line that `duplexsynth <command> --help` prints (commander's help text, wrapped lines joined)
 * is on the page, as a table row of its command.
 */
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { EXIT_CODES } from '../../pipeline/model/build-errors.ts';
import { PACKAGE_ROOT } from '../../pipeline/storage/package-files.ts';
import { createProgram } from '../cli.ts';
import { TEST_CLI } from '../testing/cli-command.ts';
import { renderCliReference, tableRow } from './cli-reference.ts';

const PAGE = path.join(PACKAGE_ROOT, 'docs', 'cli.md');

/**
 * The items (term, description) of the `Options:` section of a help text: a line indented by two
 * spaces starts an item, the more indented lines below it continue its description.
 */
function optionItems(helpText: string): { term: string; description: string }[] {
  const lines = helpText.split('\n');
  const start = lines.indexOf('Options:');
  const items: { term: string; description: string }[] = [];
  for (const line of lines.slice(start + 1)) {
    if (line.trim() === '' || !line.startsWith(' ')) break;
    const item = /^ {2}(\S.*?)(?: {2,}(\S.*))?$/.exec(line);
    if (item) items.push({ term: item[1]!, description: item[2] ?? '' });
    else items.at(-1)!.description += ` ${line.trim()}`;
  }
  return items;
}

/** The page's section of a command: from its heading to the next. */
function sectionOf(page: string, command: string): string {
  const start = page.indexOf(`## \`duplexsynth ${command}\`\n`);
  expect(start, command).toBeGreaterThanOrEqual(0);
  const end = page.indexOf('\n## ', start + 1);
  return page.slice(start, end === -1 ? undefined : end);
}

describe('docs/cli.md', () => {
  it('is the rendering of the command definitions (npm run docs writes it)', async () => {
    expect(await readFile(PAGE, 'utf8')).toBe(renderCliReference());
  });

  it("has every option line of every command's --help, in that command's section", async () => {
    const page = await readFile(PAGE, 'utf8');
    const commands = createProgram().commands.filter((command: Command) => command.name() !== 'help');
    expect(commands.length).toBeGreaterThan(15);
    for (const command of commands) {
      const items = optionItems(command.helpInformation());
      expect(items.length, command.name()).toBeGreaterThan(0);
      const section = sectionOf(page, command.name());
      for (const { term, description } of items)
        expect(section, `${command.name()} ${term}`).toContain(tableRow(term, description));
    }
  });

  it('the help the command prints (a child process) is the help read above', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, [TEST_CLI, 'build', '--help'], {
      cwd: PACKAGE_ROOT,
    });
    const build = createProgram().commands.find((command) => command.name() === 'build')!;
    expect(optionItems(stdout)).toEqual(optionItems(build.helpInformation()));
    expect(optionItems(stdout).map((item) => item.term)).toContain('--language <language...>');
  });

  it('documents every exit code', async () => {
    const page = await readFile(PAGE, 'utf8');
    for (const code of Object.values(EXIT_CODES)) expect(page).toMatch(new RegExp(`^\\| ${code} \\| \\S`, 'm'));
  });
});
