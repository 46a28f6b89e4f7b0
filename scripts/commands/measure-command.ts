/** The `measure` command's options (its code: ./measure.ts, loaded when the command runs). */
import path from 'node:path';
import { Command, InvalidArgumentError, Option } from 'commander';
import { REFERENCE_CORPUS_FORMATS } from '../../corpora/reference-corpus-formats.ts';
import { addLanguageOption } from './language-option.ts';
import { speakerPair } from './prompts-command.ts';
import { requireInputPaths } from '../../pipeline/run/command-paths.ts';
import { addOutputOptions, commandOutput, type OutputOptions } from './output-options.ts';
import type { MeasureOptions, ReferenceRecordingLoader } from './measure.ts';
import { runStoppable } from '../../pipeline/run/stop-signals.ts';

/**
 * Adds the `measure` command to a commander program (the lead wires it into scripts/cli.ts).
 * Prints the written paths, one per line; with `--check`, prints the stale ones to stderr and sets
 * exit code 1 when any. The command's code (./measure.ts) loads when it runs, so the CLI starts fast.
 * @param loadRecordings injectable loader (tests); default: the reference corpus loaders
 * @returns the `measure` command
 */
export function registerMeasureCommand(program: Command, loadRecordings?: ReferenceRecordingLoader): Command {
  const command = program
    .command('measure')
    .description(
      'measure turn-taking timing of real two-party recordings into timing statistics (JSON + SVG histograms)',
    )
    .argument('<path...>', 'recording files or folders of the format')
    .addOption(
      new Option('--format <format>', 'reference corpus format')
        .choices(REFERENCE_CORPUS_FORMATS)
        .makeOptionMandatory(),
    )
    .requiredOption('--out <file>', 'statistics JSON to write; histograms go to <file without .json>.plots/');
  addLanguageOption(
    command,
    'language of the recordings (a BCP-47 code such as en, ja, zh, de; default: en for candor, ja for magicdata)',
  );
  command
    .addOption(
      new Option('--vad <detector>', 'voice activity detector for audio formats')
        .choices(['silero', 'webrtc'])
        .default('silero'),
    )
    .option('--tiers <name...>', 'textgrid: the speaker tiers in channel order')
    .option('--speaker-map <file>', 'tab-separated recording, channel (0, 1 or the corpus label), speaker id')
    .option(
      '--speakers <A,B|most-talk>',
      'rttm: the two speakers of a file with more, in channel order, or most-talk (the two who talk most); a file with a third is refused without it',
      (value: string) => (value.trim() === 'most-talk' ? 'most-talk' : speakerPair(value)),
    )
    .addOption(
      new Option(
        '--sampler-use <use>',
        'pooled: both directions as one distribution (symmetric conversations); per-direction: channels have roles',
      )
        .choices(['pooled', 'per-direction'])
        .default('pooled'),
    )
    .option('--corpus <text>', 'what the recordings are (written into the provenance)')
    .option('--licence <text>', 'licence of the recordings', 'not stated')
    .option('--origin <text>', 'where the recordings come from', 'not stated')
    .option(
      '--channel-mapping <text>',
      'how speakers were put on channels 0 and 1',
      'as assigned by the corpus loader (channelSpeakers)',
    )
    .option('--note <text...>', 'notes to record in the provenance', [])
    .option('--relative-to <dir>', 'write source paths relative to this folder', '.')
    .option(
      '--relative-to-name <text>',
      'what --relative-to is, as written into the file (default: the folder as given)',
    )
    .option(
      '--timing-resolution <seconds>',
      'resolution of the source times: a value holding more than 2 % of a list (an atom) is spread over ± this much by the sampler (default 0.1)',
      (value: string) => {
        const seconds = Number(value);
        if (!Number.isFinite(seconds) || seconds < 0.01 || Math.abs(seconds * 100 - Math.round(seconds * 100)) > 1e-9)
          throw new InvalidArgumentError('a number of seconds ≥ 0.01 with at most 2 decimals');
        return seconds;
      },
    )
    .option('--check', 'write nothing; exit 1 when a file would change')
    .option('--strict', 'stop at the first malformed corpus record (default: skip it, name it and count it)');
  addOutputOptions(command, 'the written (or, with --check, stale) files as JSON on standard output: {paths, changed}');
  return command.action(async (paths: string[], options: MeasureOptions & OutputOptions) => {
    // the default loader reads these paths: a missing one is one line, nothing written (an injected loader brings its own recordings)
    if (!loadRecordings) await requireInputPaths(paths, `${options.format} recordings`);
    const [{ runMeasure }, { checkFolder }] = await Promise.all([
      import('./measure.ts'),
      import('../../pipeline/run/output-checks.ts'),
    ]);
    if (!options.check) await checkFolder(path.dirname(path.resolve(options.out)), 'statistics folder'); // /proc, a read-only disk: one line
    // a signal: one line, exit 128 + its number (pipeline/run/stop-signals.ts); each file is written atomically
    const result = await runStoppable('measure', `the statistics files are as they were`, () =>
      runMeasure(paths, options, loadRecordings),
    );
    for (const skipped of result.skippedRecords) console.error(`skipped ${skipped}`);
    if (result.skippedRecords.length > 0)
      console.error(
        `${result.skippedRecords.length} malformed records skipped (counted in the statistics file's loaderNotes; --strict stops at the first)`,
      );
    const output = commandOutput(options);
    if (options.check) {
      if (options.json) output.result({ paths: result.paths, changed: result.changed }, '');
      else for (const file of result.paths) console.error(`${file}: out of date`);
      if (result.changed) process.exitCode = 1;
      return;
    }
    output.result({ paths: result.paths, changed: result.changed }, result.paths.map((file) => `${file}\n`).join(''));
  });
}
