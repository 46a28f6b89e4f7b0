/**
 * The `--language` option of every command that takes a language, with `--lang` as its alias: both
 * spellings set the same option value (attribute `language`); the help shows `--language` and names
 * the alias in its description.
 */
import { Command, Option } from 'commander';
import { languageCode, languageCodes } from './option-parsers.ts';

/** A hidden option that stores its value under another option's attribute name (commander has no option aliases). */
class OptionAlias extends Option {
  constructor(
    flags: string,
    private readonly target: string,
  ) {
    super(flags);
    this.hideHelp();
  }

  override attributeName(): string {
    return this.target;
  }
}

/** How a command takes its language. */
export interface LanguageOptionSettings {
  /** Several languages (`--language en ja`), else one. */
  variadic?: boolean;
  /** The command cannot run without it. */
  mandatory?: boolean;
}

/**
 * Adds `--language <language>` (`<language...>` when variadic) and its hidden alias `--lang` to a
 * command; values are checked as BCP-47 codes (./option-parsers.ts `languageCode`).
 * @param description what the language is for; `(alias: --lang)` is appended
 * @returns the command, for chaining
 */
export function addLanguageOption(
  command: Command,
  description: string,
  settings: LanguageOptionSettings = {},
): Command {
  const value = settings.variadic ? '<language...>' : '<language>';
  const option = new Option(`--language ${value}`, `${description} (alias: --lang)`);
  const alias = new OptionAlias(`--lang ${value}`, 'language');
  for (const each of [option, alias]) {
    if (settings.variadic) each.argParser(languageCodes);
    else each.argParser(languageCode);
  }
  if (settings.mandatory) option.makeOptionMandatory();
  return command.addOption(option).addOption(alias);
}
