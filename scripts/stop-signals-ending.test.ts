/**
 * Signals at a command's natural end: SIGTERM sent to `duplexsynth --version` a seeded random 0 to 30
 * ms after its output appears, when the command is ending by itself. Each run must end with its own
 * result (exit code 0, its output, no `duplexsynth:` line) or with the stop (exit code 143 and exactly
 * one `duplexsynth: … stopped by SIGTERM` line), never killed by the signal with no line, as a process
 * is whose signal handles Node has already closed (pipeline/run/stop-signals.ts `installStopFallback`).
 * The stops during a command's work are in scripts/stop-signals.test.ts.
 */
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../pipeline/config.ts';
import { dialogueRandomStream } from '../pipeline/model/random.ts';
import { STOP_EXIT_CODES } from '../pipeline/run/stop-signals.ts';
import { TEST_CLI } from './testing/cli-command.ts';

/** Runs of the command: where Node tears down before exiting, about half of them die by such a signal. */
const TRIALS = 40;
/** Latest moment of the signal after the first output, in milliseconds: the command's last steps. */
const LATEST_SIGNAL_MS = 30;

interface Ending {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs `duplexsynth ARGS`, sending SIGTERM `delayMs` after its standard output first has data. */
function runSignalledAtEnd(args: string[], delayMs: number): Promise<Ending> {
  const child = spawn(process.execPath, [TEST_CLI, ...args], { cwd: PROJECT_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  let timer: NodeJS.Timeout | undefined;
  child.stdout.on('data', (chunk: Buffer) => {
    if (stdout === '') timer = setTimeout(() => child.kill('SIGTERM'), delayMs);
    stdout += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) =>
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    }),
  );
}

/** What went wrong with one ending, or null when it is the command's own or the stop's. */
function endingProblem(ending: Ending, expectedOutput: RegExp): string | null {
  const lines = ending.stderr.split('\n').filter((line) => line.startsWith('duplexsynth:'));
  if (ending.code === 0 && lines.length === 0 && expectedOutput.test(ending.stdout)) return null;
  if (
    ending.code === STOP_EXIT_CODES.SIGTERM &&
    lines.length === 1 &&
    /^duplexsynth: duplexsynth stopped by SIGTERM; /.test(lines[0]!)
  )
    return null;
  return `exit ${ending.code} (${ending.signal ?? 'no signal'}), lines ${JSON.stringify(lines)}`;
}

describe('a signal at the natural end of a command', () => {
  it(`ends ${TRIALS} runs of --version each with its output or with the one stop line`, async () => {
    const random = dialogueRandomStream(7, 'stop-signals-ending', 'signal-moments');
    const problems: string[] = [];
    for (let trial = 1; trial <= TRIALS; trial++) {
      const delayMs = random.uniform() * LATEST_SIGNAL_MS;
      const ending = await runSignalledAtEnd(['--version'], delayMs);
      const problem = endingProblem(ending, /^\d+\.\d+\.\d+/);
      if (problem !== null)
        problems.push(`run ${trial}, SIGTERM ${delayMs.toFixed(1)} ms after the output: ${problem}`);
    }
    expect(problems).toEqual([]);
  });
});
