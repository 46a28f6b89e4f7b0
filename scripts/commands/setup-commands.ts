/**
 * The commands that describe the set-up rather than build anything: `languages` (the language packs,
 * ./languages.ts) and `doctor` (the tools, voices, models and services a build needs, ./doctor.ts).
 * Their code loads when they run, so the CLI starts fast.
 */
import { Command } from 'commander';
import { positiveInteger } from './option-parsers.ts';

/** Adds `languages` and `doctor` to a commander program. */
export function registerSetupCommands(program: Command): void {
  program
    .command('languages')
    .description(
      'list the language packs: code, name and script, offline voice (espeak-ng or Open JTalk), CosyVoice support, and where the timing statistics come from',
    )
    .option('--language-pack <file...>', 'also these language pack YAML files (as build --language-pack)')
    .option('--json', 'the list as JSON on standard output')
    .action(async (options: { languagePack?: string[]; json?: boolean }) => {
      const [{ formatLanguages, listLanguages }, { LanguagePackError }, { BuildInputError }] = await Promise.all([
        import('./languages.ts'),
        import('../../pipeline/model/language-pack.ts'),
        import('../../pipeline/model/build-errors.ts'),
      ]);
      let listings;
      try {
        listings = await listLanguages(options.languagePack);
      } catch (error) {
        if (error instanceof LanguagePackError) throw new BuildInputError(`--language-pack ${error.message}`);
        throw error;
      }
      process.stdout.write(options.json ? `${JSON.stringify(listings, null, 2)}\n` : formatLanguages(listings));
    });

  program
    .command('doctor')
    .description(
      'check the set-up: Debian tools (ffmpeg, sox, espeak-ng and its voices, Open JTalk with dictionary and voice, redis-server, chromium), the DNSMOS models, and with --config the configured services; prints the fix of each missing thing; exit code 1 when something is missing',
    )
    .option(
      '-c, --config <file>',
      'also check the services this build configuration names (LLM, speech servers, queue)',
    )
    .option('--timeout <ms>', 'how long each service may take to answer, in milliseconds', positiveInteger, 3000)
    .option('--json', 'the checks as JSON on standard output ({ok, checks: [{name, group, ok, detail, fix}]})')
    .action(async (options: { config?: string; timeout: number; json?: boolean }) => {
      const { formatDoctor, runDoctor } = await import('./doctor.ts');
      const checks = await runDoctor({
        ...(options.config ? { config: options.config } : {}),
        timeoutMilliseconds: options.timeout,
      });
      const ok = checks.every((check) => check.ok);
      process.stdout.write(options.json ? `${JSON.stringify({ ok, checks }, null, 2)}\n` : formatDoctor(checks));
      if (!ok) process.exitCode = 1;
    });
}
