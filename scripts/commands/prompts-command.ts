/** The `prompts` command's options (its code: ./prompts.ts, loaded when the command runs). */
import { Command, InvalidArgumentError, Option } from 'commander';
import { REFERENCE_CORPUS_FORMATS } from '../../corpora/reference-corpus-formats.ts';
import { EBU_R128_LOUDNESS } from '../../corpora/speaker-prompt-loudness.ts';
import { nonNegativeInteger, positiveInteger, positiveNumber } from './option-parsers.ts';
import { addOutputOptions, commandOutput, type OutputOptions } from './output-options.ts';
import type { PromptsOptions } from './prompts.ts';
import path from 'node:path';
import { runStoppable } from '../../pipeline/run/stop-signals.ts';

/** `--speakers` value: two different speaker labels separated by a comma. */
export function speakerPair(value: string): [string, string] {
  const parts = value.split(',').map((part) => part.trim());
  if (parts.length !== 2 || parts.some((part) => part === '') || parts[0] === parts[1])
    throw new InvalidArgumentError('expected two different speaker labels, e.g. A,B');
  return [parts[0] as string, parts[1] as string];
}

/** `--loudness` value: a finite number of LUFS (negative). */
function lufs(value: string): number {
  const parsed = Number(value);
  if (!Number.isFinite(parsed) || parsed >= 0)
    throw new InvalidArgumentError('expected a negative loudness in LUFS, e.g. -23');
  return parsed;
}

function decibels(value: string): number {
  const parsed = Number(value);
  if (!Number.isFinite(parsed)) throw new InvalidArgumentError('expected a number of dB');
  return parsed;
}

/**
 * Adds the `prompts` command to a commander program. Prints the summary; sets exit code 1 when no
 * clip was kept. The command's code (./prompts.ts) loads when it runs, so the CLI starts fast.
 * @returns the `prompts` command
 */
export function registerPromptsCommand(program: Command): Command {
  const command = program
    .command('prompts')
    .description(
      'cut the speaker prompt pool (voice prompts with exact transcripts) from real conversations; without transcripts, texts from an ASR service or a TSV you fill in',
    )
    .argument('<path...>', 'recording files or folders of the format')
    .addOption(
      new Option(
        '--format <format>',
        'reference corpus format (without transcripts, e.g. stereo-wav: clips by speech detection, texts from --asr-url or --transcripts)',
      )
        .choices(REFERENCE_CORPUS_FORMATS)
        .makeOptionMandatory(),
    )
    .requiredOption('--out <dir>', 'pool folder to write (speaker-prompts.jsonl, clips/, prompt-pool-summary.json)')
    .option('--per-speaker <n>', 'clips kept per speaker', positiveInteger, 3)
    .option('--min-snr <dB>', 'reject clips with a lower signal-to-noise ratio', decibels)
    .option('--seed <n>', 'seed of the per-speaker draw', nonNegativeInteger, 0)
    .option('--min-seconds <s>', 'shortest clip', positiveNumber, 3)
    .option('--max-seconds <s>', 'longest clip (at most 30)', positiveNumber, 10)
    .option(
      '--loudness <LUFS>',
      'integrated loudness of the clips (EBU R 128; true peak at most -1 dBTP)',
      lufs,
      EBU_R128_LOUDNESS.targetLufs,
    )
    .option('--no-loudness', 'keep the clips at their recorded level')
    .option(
      '--audio <dir>',
      'folder of the audio (textgrid, ctm, nxt: <id>.wav or <id>_0.wav + <id>_1.wav); default beside the timing files',
    )
    .option('--tiers <name...>', 'textgrid: the speaker tiers in channel order')
    .addOption(
      new Option('--vad <detector>', 'voice activity detector for stereo-wav')
        .choices(['silero', 'webrtc'])
        .default('silero'),
    )
    .option('--allow-upsample', 'take audio below 16 kHz (recorded in prompt-pool-summary.json); refused without it')
    .option(
      '--speakers <A,B>',
      'rttm: the two speakers to keep, in channel order (a file with a third is refused without it)',
      speakerPair,
    )
    .option(
      '--speaker-map <file>',
      'tab-separated recording, channel (0, 1 or the corpus label), speaker id: one id for one person across recordings',
    )
    .option(
      '--transcripts <file>',
      'texts of clips cut from speech without a transcript: the transcripts.tsv of an earlier run, text column filled in',
    )
    .option(
      '--asr-url <url>',
      'OpenAI-compatible ASR service for clips without a text, base URL with the API prefix (POST <url>/audio/transcriptions), e.g. http://127.0.0.1:8000/v1',
    )
    .option('--asr-model <name>', 'model name sent to the ASR service', 'whisper-1')
    .option(
      '--asr-language <code>',
      'ISO-639-1 language sent to the ASR service (e.g. ja); default: the service detects it',
    )
    .option(
      '--asr-key-variable <name>',
      "environment variable holding the ASR service's API key (default: no key sent)",
    )
    .option('--asr-timeout <s>', 'seconds per ASR request', positiveNumber, 120)
    .option('--strict', 'stop at the first malformed corpus record (default: skip it, name it and count it)');
  addOutputOptions(
    command,
    'the pool manifest path and its summary as JSON on standard output: {manifestPath, summary}',
  );
  return command.action(async (paths: string[], options: PromptsOptions & OutputOptions) => {
    const [{ formatPromptPoolSummary, runPrompts }, { checkFolder }] = await Promise.all([
      import('./prompts.ts'),
      import('../../pipeline/run/output-checks.ts'),
    ]);
    await checkFolder(options.out, 'prompt pool folder'); // a file there, /proc, a read-only disk: one line, nothing removed
    // a signal removes the unfinished `{out}.partial` (pipeline/run/stop-signals.ts): the previous pool stays
    const result = await runStoppable('prompts', `the prompt pool in ${options.out} is as it was`, (scope) => {
      scope.removeOnStop(`${path.resolve(options.out)}.partial`);
      return runPrompts(paths, options);
    });
    // -q: the manifest's path only
    commandOutput(options).result(
      { manifestPath: result.manifestPath, summary: result.summary },
      options.quiet ? `${result.manifestPath}\n` : formatPromptPoolSummary(result.manifestPath, result.summary),
    );
    if (result.summary.clips === 0) process.exitCode = 1;
  });
}
