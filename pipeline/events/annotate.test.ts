import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AlignmentParseError } from './alignment.ts';
import { AnnotateError, annotateAlignmentFile } from './annotate.ts';

describe('annotateAlignmentFile', () => {
  let directory: string;
  beforeAll(async () => {
    directory = await mkdtemp(path.join(tmpdir(), 'duplexsynth-annotate-'));
  });
  afterAll(async () => {
    await rm(directory, { recursive: true, force: true });
  });

  async function file(name: string, text: string): Promise<string> {
    const filePath = path.join(directory, name);
    await writeFile(filePath, text, 'utf8');
    return filePath;
  }

  it('returns the JSONL line without newline', async () => {
    const filePath = await file('ok.txt', '1\t0.00\t1.00\tq\n0\t1.20\t3.00\ta\n');
    await expect(annotateAlignmentFile(filePath, 'dlg_0001')).resolves.toBe(
      '{"id": "dlg_0001", "events": {"0": [{"event": "TURN_SHIFT", "time": [1.0, 1.2]}, {"event": "TURN", "time": [1.2, 3.0]}], ' +
        '"1": [{"event": "TURN", "time": [0.0, 1.0]}]}}',
    );
  });

  it('names the file when it cannot be read', async () => {
    const missing = path.join(directory, 'missing.txt');
    const run = annotateAlignmentFile(missing, 'x');
    await expect(run).rejects.toThrow(AnnotateError);
    await expect(annotateAlignmentFile(missing, 'x')).rejects.toThrow(
      `${missing}: cannot read alignment file (ENOENT)`,
    );
  });

  it('names file, line and field for a malformed line, in one line', async () => {
    const filePath = await file('bad.txt', '1\t0.00\t1.00\tq\n0\t1.2x\t3.00\ta\n');
    const error = await annotateAlignmentFile(filePath, 'x').catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(AlignmentParseError);
    expect((error as Error).message).toBe(`${filePath}:2: start: not seconds with at most 2 decimals: "1.2x"`);
  });

  it('rejects a file without words and an empty id, naming the file', async () => {
    const empty = await file('empty.txt', '');
    await expect(annotateAlignmentFile(empty, 'x')).rejects.toThrow(`${empty}: alignment file has no words`);
    const ok = await file('ok2.txt', '0\t0.00\t1.00\ta\n');
    await expect(annotateAlignmentFile(ok, '')).rejects.toThrow(`${ok}: dialogue id must not be empty`);
  });
});
