/**
 * A dataset whose dialogue WAV is not a regular file (a symbolic link to `/dev/zero`, or a FIFO with
 * no writer) makes every export that reads the audio stop at once with one line naming the file, exit
 * code 2, and write nothing: no export folder, no `.partial`, not even the folders `--out` would have
 * made. The WAV is read through pipeline/storage/read-input-file.ts (opened with O_NONBLOCK, the open
 * handle checked), so neither an endless device nor a FIFO that never delivers a byte is read. rttm,
 * textgrid and audacity do not open the audio.
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, symlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_CLI } from '../../scripts/testing/cli-command.ts';
import { copyExportFixture } from './testing/export-fixture.ts';

/** The exports that read a dialogue's WAV: `--to` and its options. */
const AUDIO_EXPORTS: { name: string; args: string[] }[] = [
  { name: 'lhotse', args: ['--to', 'lhotse'] },
  { name: 'lhotse --copy-audio', args: ['--to', 'lhotse', '--copy-audio'] },
  { name: 'lhotse-shar', args: ['--to', 'lhotse-shar'] },
  { name: 'moshi-finetune', args: ['--to', 'moshi-finetune'] },
  { name: 'huggingface (parquet)', args: ['--to', 'huggingface'] },
  { name: 'huggingface --layout audiofolder', args: ['--to', 'huggingface', '--layout', 'audiofolder'] },
];

/** The hostile files a WAV is replaced by: how each is made at `file`, and the words of its refusal. */
const HOSTILE_FILES: { name: string; make: (file: string) => Promise<void>; words: string }[] = [
  { name: 'a symbolic link to /dev/zero', make: (file) => symlink('/dev/zero', file), words: 'a character device' },
  {
    name: 'a FIFO with no writer',
    make: async (file) => void execFileSync('mkfifo', [file]),
    words: 'a FIFO',
  },
];

let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(path.join(os.tmpdir(), 'duplexsynth-hostile-audio-'));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

/** Runs `duplexsynth ARGS` in a child process: its exit code and the lines of its standard error. */
function duplexsynth(args: string[]): Promise<{ code: number | null; stderr: string[] }> {
  const child = spawn(process.execPath, [TEST_CLI, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) =>
    child.on('close', (code) => resolve({ code, stderr: stderr.split('\n').filter(Boolean) })),
  );
}

/** `text` with the characters a regular expression gives a meaning escaped. */
const literal = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

describe.each(HOSTILE_FILES)('export of a dataset whose WAV is $name', ({ name, make, words }) => {
  let dataset: string;
  beforeAll(async () => {
    dataset = await copyExportFixture(path.join(scratch, name.replaceAll(/[^a-z]+/g, '-')));
    // the 16 kHz file and the full-band master: the exports that take the master read that one
    for (const folder of ['audio', 'audio_fullband']) {
      const file = path.join(dataset, folder, 'tiny_0001.wav');
      await rm(file);
      await make(file);
    }
  });

  it.each(AUDIO_EXPORTS)('$name: one line naming the WAV, exit 2, nothing written', async ({ name, args }) => {
    const exports = path.join(path.dirname(dataset), `exports-${name.replaceAll(/[^a-z]+/g, '-')}`);
    const out = path.join(exports, 'deep', 'export');
    const result = await duplexsynth(['export', dataset, ...args, '--out', out]);
    expect(result.code).toBe(2);
    expect(result.stderr).toHaveLength(1);
    expect(result.stderr[0]).toMatch(
      new RegExp(
        `^duplexsynth: ${literal(dataset)}/audio(_fullband)?/tiny_0001\\.wav: (WAV of dialogue tiny_0001 \\(.+\\): )?is ${words}, not a regular file$`,
      ),
    );
    expect(existsSync(exports)).toBe(false);
    expect(existsSync(`${out}.partial`)).toBe(false);
  });
});
