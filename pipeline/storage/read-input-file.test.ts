import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InputFileError, openInputStream, readInputFile, readInputText } from './read-input-file.ts';
import { loadTopiocqa } from '../../corpora/topiocqa.ts';
import { loadConfigFile } from '../config-file.ts';
import { readLanguagePackFile } from '../model/language-pack.ts';
import { readWavEnvelopes } from '../report/waveform.ts';
import { checkFolder, mountTypeOf } from '../run/output-checks.ts';

let folder: string;
let fifo: string;

beforeAll(async () => {
  folder = await mkdtemp(path.join(os.tmpdir(), 'read-input-file-'));
  fifo = path.join(folder, 'corpus.json');
  execFileSync('mkfifo', [fifo]);
});
afterAll(async () => {
  await rm(folder, { recursive: true, force: true });
});

describe('readInputFile', () => {
  it('reads a regular file', async () => {
    const file = path.join(folder, 'small.txt');
    await writeFile(file, 'hello');
    expect(await readInputText(file)).toBe('hello');
  });

  it('refuses a FIFO at once, naming it', async () => {
    await expect(readInputFile(fifo)).rejects.toThrow(`${fifo}: is a FIFO, not a regular file`);
  });

  it('refuses a symbolic link to /dev/zero as a character device', async () => {
    const link = path.join(folder, 'zero.wav');
    await symlink('/dev/zero', link);
    await expect(readInputFile(link)).rejects.toThrow(`${link}: is a character device, not a regular file`);
    await expect(readWavEnvelopes(link, 10)).rejects.toThrow('is a character device, not a regular file');
  });

  it('refuses a directory with the errno readFile gives', async () => {
    await expect(readInputFile(folder)).rejects.toMatchObject({ code: 'EISDIR' });
  });

  it('refuses a file over the bound, naming the bound', async () => {
    const file = path.join(folder, 'large.txt');
    await writeFile(file, 'x'.repeat(11));
    const refusal = await readInputFile(file, { maximumBytes: 10, boundName: 'test.maximumBytes' }).catch(
      (error: unknown) => error,
    );
    expect(refusal).toBeInstanceOf(InputFileError);
    expect((refusal as Error).message).toBe(`${file}: 11 bytes, more than the 10 allowed (test.maximumBytes)`);
  });
});

describe('openInputStream', () => {
  it('streams the bytes of a regular file from the checked handle, with its size', async () => {
    const file = path.join(folder, 'stream.bin');
    const bytes = Buffer.alloc(200_000, 7);
    await writeFile(file, bytes);
    const { stream, size } = await openInputStream(file);
    const chunks: Buffer[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(size).toBe(200_000);
    expect(Buffer.concat(chunks).equals(bytes)).toBe(true);
  });

  it('refuses a FIFO and a link to /dev/zero before any byte is read', async () => {
    await expect(openInputStream(fifo)).rejects.toThrow(`${fifo}: is a FIFO, not a regular file`);
    const link = path.join(folder, 'zero-stream.wav');
    await symlink('/dev/zero', link);
    await expect(openInputStream(link)).rejects.toThrow(`${link}: is a character device, not a regular file`);
  });
});

describe('readers refuse what is not a regular file', () => {
  it('a TopiOCQA corpus that is a FIFO', async () => {
    await expect(loadTopiocqa(fifo)).rejects.toThrow('is a FIFO, not a regular file');
  });

  it('a configuration file that is a FIFO', async () => {
    await expect(loadConfigFile(fifo)).rejects.toThrow(`${fifo}: configuration file: is a FIFO, not a regular file`);
  });

  it('a language pack that is a FIFO, or larger than 1 MB (read without waiting)', async () => {
    expect(() => readLanguagePackFile(fifo)).toThrow(
      `${fifo}: cannot read language pack: ${fifo}: is a FIFO, not a regular file`,
    );
    const large = path.join(folder, 'large.yaml');
    await writeFile(large, `# ${'x'.repeat(1024 * 1024)}\n`);
    expect(() => readLanguagePackFile(large)).toThrow(/large\.yaml: \d+ bytes, more than the 1048576 allowed/);
  });
});

describe('output folders on special file systems', () => {
  it('a folder through a link to /dev/shm is accepted', async () => {
    if (!existsSync('/dev/shm')) return expect.fail('/dev/shm is missing on this machine');
    const link = path.join(folder, 'shm');
    await symlink('/dev/shm', link);
    const target = path.join(link, `read-input-file-${process.pid}`);
    await checkFolder(target, 'output folder');
    await rm(target, { recursive: true, force: true });
  });

  it('a folder through a link to /dev (devtmpfs) is refused and nothing is written there', async (context) => {
    if ((await mountTypeOf('/dev')) !== 'devtmpfs') return context.skip('/dev is not devtmpfs on this machine');
    const link = path.join(folder, 'dev');
    await symlink('/dev', link);
    const name = `read-input-file-${process.pid}`;
    await expect(checkFolder(path.join(link, name), 'output folder')).rejects.toThrow(
      'it is on the special file system devtmpfs',
    );
    expect(existsSync(path.join('/dev', name))).toBe(false);
  });
});
