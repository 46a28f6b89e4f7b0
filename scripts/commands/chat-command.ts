/** The `chat` command's options (its code: ./chat.ts, loaded when the command runs). */
import { Command, Option } from 'commander';
import { REFERENCE_CORPUS_FORMATS } from '../../corpora/reference-corpus-formats.ts';
import { positiveNumber } from './option-parsers.ts';
import { addLanguageOption } from './language-option.ts';
import { speakerPair } from './prompts-command.ts';
import { addOutputOptions, commandOutput, type OutputOptions } from './output-options.ts';
import type { ChatOptions } from './chat.ts';
import { runStoppable } from '../../pipeline/run/stop-signals.ts';

/**
 * Adds the `chat` command to a commander program. Prints the dataset folder and one line per segment;
 * exit code 3 when a recording failed. The command's code (./chat.ts) loads when it runs, so the CLI
 * starts fast.
 * @returns the `chat` command
 */
export function registerChatCommand(program: Command): Command {
  const command = program
    .command('chat')
    .description(
      'cut real two-party recordings into ~120 s Chat-track dialogues (benchmark layout), score DNSMOS, split test/dev',
    )
    .argument('<path...>', 'recording timing files or folders of the format (audio beside them, or --audio)')
    .addOption(
      new Option('--format <format>', 'reference corpus format')
        .choices(REFERENCE_CORPUS_FORMATS)
        .makeOptionMandatory(),
    );
  addLanguageOption(command, 'language of the recordings (a BCP-47 code such as en, ja, zh, de)', { mandatory: true });
  command
    .requiredOption('--out <dir>', 'output folder (the dataset goes to data/{lang}/chat/{dataset}/)')
    .option('--dataset <name>', 'dataset folder name (default: the format)')
    .option(
      '--audio <dir>',
      'folder of the audio, <id>.wav or <id>_0.wav + <id>_1.wav (textgrid, ctm, nxt, rttm: any format that brings no audio)',
    )
    .option(
      '--speakers <A,B>',
      'rttm: the two speakers to keep, in channel order (a file with a third is refused without it)',
      speakerPair,
    )
    .option(
      '--speaker-map <file>',
      'tab-separated recording, channel (0, 1 or the corpus label), speaker id: one id for one person across recordings',
    )
    .option('--tiers <name...>', 'textgrid: the speaker tiers in channel order')
    .addOption(
      new Option('--vad <detector>', 'voice activity detector for stereo-wav')
        .choices(['silero', 'webrtc'])
        .default('silero'),
    )
    .option('--test-hours <hours>', 'target duration of the test split', positiveNumber, 1)
    .option(
      '--allow-upsample',
      'take audio below 16 kHz, upsampled to 16 kHz (recorded in summary.json); refused without it',
    )
    .option('--no-score', 'write the dataset only (no DNSMOS, no split)')
    .option('--strict', 'stop at the first malformed corpus record (default: skip it, name it and count it)');
  addOutputOptions(
    command,
    'the dataset folder, its segments, splits and failed recordings as JSON on standard output',
  );
  return command.action(async (paths: string[], options: ChatOptions & OutputOptions) => {
    const [{ runChat }, { checkFolder }] = await Promise.all([
      import('./chat.ts'),
      import('../../pipeline/run/output-checks.ts'),
    ]);
    await checkFolder(options.out, 'output folder'); // a file there, /proc, a read-only disk: one line, nothing removed
    const output = commandOutput(options);
    // a signal: one line, exit 128 + its number (pipeline/run/stop-signals.ts)
    const result = await runStoppable('chat', `the datasets in ${options.out} are as they were`, () =>
      runChat(paths, { ...options, log: output.log }),
    );
    for (const skipped of result.skippedRecords) console.error(`skipped ${skipped}`);
    if (result.skippedRecords.length > 0)
      console.error(
        `${result.skippedRecords.length} malformed records skipped (counted in the dataset's summary.json notes; --strict stops at the first)`,
      );
    const lines = [result.directory];
    // -q: the dataset folder only
    if (!options.quiet) {
      for (const segment of result.segments) lines.push(`  ${segment.id}: ${segment.durationSeconds.toFixed(2)} s`);
      for (const [name, ids] of Object.entries(result.splits)) lines.push(`  ${name}: ${ids.length} segments`);
    }
    output.result(result, `${lines.join('\n')}\n`);
    if (!options.json) for (const failure of result.failed) console.error(`  failed: ${failure.id}: ${failure.reason}`);
    if (result.failed.length > 0) process.exitCode = 3;
  });
}
