/**
 * `--language` and its alias `--lang` set the same option value on every command that takes a
 * language; the help shows `--language` and names the alias.
 */
import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { createProgram } from '../cli.ts';
import { addLanguageOption } from './language-option.ts';

/** A command of the real program. */
function commandNamed(name: string): Command {
  return createProgram().commands.find((command) => command.name() === name)!;
}

describe('--language and --lang', () => {
  it.each(['build', 'demo'])('%s: both spellings add to the one list of languages', (name) => {
    for (const argv of [
      ['--language', 'en', 'ja'],
      ['--lang', 'en', 'ja'],
      ['--lang', 'en', '--language', 'ja'],
    ]) {
      const command = commandNamed(name);
      command.parseOptions(argv);
      expect(command.opts().language, argv.join(' ')).toEqual(['en', 'ja']);
      expect(command.opts().lang).toBeUndefined();
    }
  });

  it.each(['chat', 'measure'])('%s: both spellings give the one language', (name) => {
    for (const flag of ['--language', '--lang']) {
      const command = commandNamed(name);
      command.parseOptions([flag, 'de']);
      expect(command.opts().language, flag).toBe('de');
    }
  });

  it('the help shows --language, says --lang is its alias, and does not list --lang', () => {
    for (const name of ['build', 'demo', 'chat', 'measure']) {
      const help = commandNamed(name).helpInformation();
      expect(help, name).toMatch(/--language <language(\.\.\.)?>/);
      expect(help.replace(/\s+/g, ' '), name).toContain('(alias: --lang)');
      expect(help, name).not.toMatch(/^\s+--lang </m);
    }
  });

  it('a value that is not a language code is refused under either spelling', () => {
    for (const flag of ['--language', '--lang']) {
      const command = new Command('x').exitOverride().configureOutput({ writeErr: () => {} });
      addLanguageOption(command, 'language').action(() => {});
      expect(() => command.parse([flag, 'not a code'], { from: 'user' }), flag).toThrow(/not a language code/);
    }
  });

  it('a mandatory --language is satisfied by --lang', () => {
    const seen: unknown[] = [];
    const command = new Command('x').exitOverride().configureOutput({ writeErr: () => {} });
    addLanguageOption(command, 'language', { mandatory: true }).action(
      (options: { language: string }) => void seen.push(options.language),
    );
    command.parse(['--lang', 'ja'], { from: 'user' });
    expect(seen).toEqual(['ja']);
  });
});
