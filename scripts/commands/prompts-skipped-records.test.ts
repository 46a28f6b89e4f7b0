/**
 * `prompts` over a copy of a TextGrid fixture with one corrupt interval: by default the interval is
 * skipped, named once (file, line, tier and reason) and counted in the pool summary; `--strict`
 * stops at it.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { sharedDirectory } from '../../pipeline/config.ts';
import { FIXTURES } from '../../corpora/reference-test-audio.ts';
import { formatPromptPoolSummary, PROMPT_POOL_SUMMARY, runPrompts, type PromptsOptions } from './prompts.ts';

const AUDIO = path.join(sharedDirectory(), 'corpora', 'reference-audio', 'ja');

let scratch: string;
let input: string;
beforeEach(async () => {
  scratch = await mkdtemp(path.join(os.tmpdir(), 'duplexsynth-prompts-skipped-'));
  const text = await readFile(path.join(FIXTURES, 'reference-audio-ja', 'prompt-159.TextGrid'), 'utf8');
  expect(text).toContain('1.16\n1.48\n""');
  input = path.join(scratch, 'prompt-159.TextGrid');
  await writeFile(input, text.replace('1.16\n1.48\n""', '1.16\n1.08\n""'));
});
afterEach(async () => {
  await rm(scratch, { recursive: true, force: true });
});

const options = (extra: Partial<PromptsOptions> = {}): PromptsOptions => ({
  format: 'textgrid',
  out: path.join(scratch, 'pool'),
  perSpeaker: 3,
  seed: 0,
  minSeconds: 3,
  maxSeconds: 10,
  loudness: -23,
  audio: AUDIO,
  vad: 'silero',
  ...extra,
});

describe('prompts over a TextGrid with a corrupt interval', () => {
  it('finishes, names the skipped interval once and counts it in the summary; --strict stops at it', async () => {
    const expected = `${input}:20: interval 3 of tier 1 ("jmoshi159-left - words") ends before it starts`;
    const result = await runPrompts([input], options());
    expect(result.summary.skippedRecords).toEqual([expected]);
    const written = JSON.parse(await readFile(path.join(scratch, 'pool', PROMPT_POOL_SUMMARY), 'utf8'));
    expect(written.skippedRecords).toEqual([expected]);
    const printed = formatPromptPoolSummary(result.manifestPath, result.summary).split('\n');
    expect(printed.filter((line) => line.includes(expected))).toEqual([`  skipped record: ${expected}`]);
    expect(printed).toContain('  1 malformed corpus records skipped (--strict stops at the first)');
    await expect(runPrompts([input], options({ strict: true }))).rejects.toThrow(expected);
  });
});
