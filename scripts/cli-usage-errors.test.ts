import { describe, expect, it } from 'vitest';
import { createProgram, usageErrorLine } from './cli.ts';

describe('usage errors', () => {
  it("are one line in the project's format, commander's suggestion kept", () => {
    expect(usageErrorLine("error: unknown option '--x'\n(Did you mean --y?)\n")).toBe(
      "duplexsynth: unknown option '--x' (Did you mean --y?) (run with --help for usage)\n",
    );
    expect(usageErrorLine("error: missing required argument 'dir'\n")).toBe(
      "duplexsynth: missing required argument 'dir' (run with --help for usage)\n",
    );
  });

  it('of a subcommand are written by the same handler, and end as exit code 2 in main', async () => {
    const written: string[] = [];
    const program = createProgram();
    for (const command of [program, ...program.commands])
      command.configureOutput({ ...command.configureOutput(), writeErr: (text) => written.push(text) });
    await expect(program.parseAsync(['node', 'duplexsynth', 'build', '--seed', 'x'])).rejects.toThrow();
    expect(written).toEqual([
      "duplexsynth: option '--seed <n>' argument 'x' is invalid. expected a non-negative integer below 2^53 (run with --help for usage)\n",
    ]);
  });
});
