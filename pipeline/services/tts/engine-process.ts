/**
 * Runs a speech engine program and turns every way it can fail into a {@link SpeechSynthesisError}.
 */
import { execa } from 'execa';
import { SpeechSynthesisError } from './speech-synthesizer.ts';

/** What a finished engine process produced. */
export interface EngineProcessResult {
  stdout: Uint8Array;
  stderr: string;
}

/** Characters of the engine's standard error quoted in error messages. */
const STDERR_EXCERPT_LENGTH = 300;

/**
 * Runs `binary args...` without a shell, feeding `input` on standard input (UTF-8).
 *
 * @param engine engine id for error messages.
 * @param text the text being synthesized, for error messages ('' when probing).
 * @throws SpeechSynthesisError `missing-binary` when the program is not found (ENOENT), `non-zero-exit`
 *   when it exits with a non-zero code or is killed (the message quotes its standard error).
 */
export async function runEngineProcess(
  engine: string,
  binary: string,
  args: readonly string[],
  input: string,
  text: string,
): Promise<EngineProcessResult> {
  const result = await execa(binary, args, { input, encoding: 'buffer', reject: false, stripFinalNewline: false });
  const stderr = Buffer.from(result.stderr).toString('utf8').trim();
  if (result.failed) {
    if (result.code === 'ENOENT') {
      throw new SpeechSynthesisError(engine, text, 'missing-binary', `program "${binary}" was not found on PATH`, {
        cause: result,
      });
    }
    const how = result.exitCode !== undefined ? `exit code ${result.exitCode}` : (result.shortMessage ?? 'failure');
    const excerpt = stderr.length > STDERR_EXCERPT_LENGTH ? `${stderr.slice(0, STDERR_EXCERPT_LENGTH)}…` : stderr;
    throw new SpeechSynthesisError(
      engine,
      text,
      'non-zero-exit',
      `"${binary}" ended with ${how}${excerpt ? `: ${excerpt}` : ''}`,
      { cause: result },
    );
  }
  return { stdout: result.stdout, stderr };
}
