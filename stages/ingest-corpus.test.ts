/**
 * Text is checked at ingest, before any service is called. Control characters
 * (NUL, ESC and whole terminal escape sequences) are removed with a note per turn, or reject the
 * conversation; invalid UTF-8 is an error naming the file and the byte offset; letters of another
 * script than the build language's and emoji are noted per turn; an utterance over the length limit
 * rejects its conversation, naming conversation, turn and field.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadTopiocqa, TopiocqaFormatError } from '../corpora/topiocqa.ts';
import { DEFAULT_CONFIG_FILE, loadConfigFile, sharedDirectory, type BuildConfig } from '../pipeline/config.ts';
import { ingestCorpus, scriptMismatchNotes } from './ingest-corpus.ts';

const TOPIOCQA_DEV = path.join(sharedDirectory(), 'corpora', 'topiocqa', 'topiocqa_dev.json');

interface RawTurn {
  Conversation_no: number;
  Turn_no: number;
  Question: string;
  Answer: string;
  [field: string]: unknown;
}

let scratch: string;
let records: RawTurn[];
let base: BuildConfig;
beforeAll(async () => {
  scratch = await mkdtemp(path.join(os.tmpdir(), 'duplexsynth-ingest-'));
  // the first three real dev conversations, as the raw release has them
  records = (JSON.parse(await readFile(TOPIOCQA_DEV, 'utf8')) as RawTurn[]).filter(
    (record) => record.Conversation_no <= 3,
  );
  base = await loadConfigFile(DEFAULT_CONFIG_FILE);
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

/** Write the three conversations with `edit` applied to a copy as `{name}/topiocqa_dev.json`; returns the file. */
async function corpusWith(name: string, edit: (copy: RawTurn[]) => void): Promise<string> {
  const copy = structuredClone(records);
  edit(copy);
  await mkdir(path.join(scratch, name), { recursive: true });
  const file = path.join(scratch, name, 'topiocqa_dev.json');
  await writeFile(file, JSON.stringify(copy));
  return file;
}

const turn = (copy: RawTurn[], conversation: number, turnNumber: number) =>
  copy.find((record) => record.Conversation_no === conversation && record.Turn_no === turnNumber)!;

function configFor(
  file: string,
  corpus: Partial<BuildConfig['corpus']> = {},
  languages: BuildConfig['languages'] = ['en'],
): BuildConfig {
  return { ...base, languages, corpus: { ...base.corpus, path: file, limit: null, ...corpus } };
}

describe('control characters', () => {
  it('are removed, whole escape sequences included, with a note naming dialogue, turn and field', async () => {
    const file = await corpusWith('control', (copy) => {
      const target = turn(copy, 2, 3);
      target.Answer = `\u001b[31m${target.Answer}\u0000 end\u001b[0m`;
      turn(copy, 1, 1).Question = `what\u0007 is\u202e it?`;
    });
    const corpus = await ingestCorpus(configFor(file));
    const answer = corpus.conversations[1]!.turns[2]!.answer!;
    expect(answer).not.toMatch(/[\u0000-\u001f\u202e]/);
    expect(answer).not.toContain('[31m'); // "\x1b[31m" left in would be spoken as "thirty-one meters"
    expect(answer.endsWith(' end')).toBe(true);
    expect(corpus.conversations[0]!.turns[0]!.question).toBe('what is it?');
    expect(corpus.notes).toEqual(
      expect.arrayContaining([
        'topiocqa_dev_0001 turn 1: field "Question": control characters removed (U+0007 at character 4, U+202E at character 8)',
        expect.stringMatching(
          /^topiocqa_dev_0002 turn 3: field "Answer": control characters removed \(U\+001B\[31m at character 0, U\+0000 at character \d+, U\+001B\[0m at character \d+\)$/,
        ),
      ]),
    );
  });

  it('with corpus.controlCharacters: reject, the conversation is rejected naming file, conversation, turn and field; the others are built', async () => {
    const file = await corpusWith('control-reject', (copy) => {
      turn(copy, 2, 3).Answer += '\u0000';
    });
    const corpus = await ingestCorpus(configFor(file, { controlCharacters: 'reject' }));
    expect(corpus.conversations.map((conversation) => conversation.id)).toEqual([
      'topiocqa_dev_0001',
      'topiocqa_dev_0003',
    ]);
    expect(corpus.rejected).toEqual([
      {
        id: 'conversation 2',
        reason: expect.stringMatching(
          /^topiocqa_dev\.json: conversation 2, turn 3: field "Answer": control characters U\+0000 at character \d+; remove them or set corpus\.controlCharacters: remove$/,
        ),
      },
    ]);
  });
});

describe('invalid UTF-8', () => {
  it('is an error naming the file and the byte offset of the first bad sequence', async () => {
    const good = Buffer.from(JSON.stringify(records), 'utf8');
    const offset = good.indexOf(Buffer.from('"Answer"')) + 11;
    const bad = Buffer.concat([good.subarray(0, offset), Buffer.from([0xc3, 0x28]), good.subarray(offset)]);
    const file = path.join(scratch, 'latin1.json');
    await writeFile(file, bad);
    const error = await loadTopiocqa(file).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(TopiocqaFormatError);
    expect((error as TopiocqaFormatError).kind).toBe('invalid-utf8');
    expect((error as Error).message).toBe(
      `${path.resolve(file)}: not valid UTF-8 at byte offset ${offset} (line 1: bytes c3 28 ${bad
        .subarray(offset + 2, offset + 4)
        .toString('hex')
        .replace(/(..)(..)/, '$1 $2')}); save the file as UTF-8`,
    );
  });

  it('a real U+FFFD in valid UTF-8 is text, not an error', async () => {
    const file = await corpusWith('replacement-character', (copy) => {
      turn(copy, 1, 2).Answer += ' \uFFFD';
    });
    const result = await loadTopiocqa(file);
    expect(result.conversations[0]!.turns[1]!.answer).toMatch(/\uFFFD$/);
  });
});

describe('script of the text against the build language', () => {
  it('right-to-left text and emoji in an English build are noted per turn and field', async () => {
    const file = await corpusWith('scripts', (copy) => {
      turn(copy, 1, 2).Answer += ' שלום עולם';
      turn(copy, 3, 4).Question += ' 🙂';
    });
    const corpus = await ingestCorpus(configFor(file));
    expect(corpus.notes).toEqual([
      'topiocqa_dev_0001 turn 2: field "Answer" has 8 characters of another script than English\'s Latin (Hebrew, written right to left); kept, the English speech engine may spell or skip them',
      'topiocqa_dev_0003 turn 4: field "Question" has 1 emoji (🙂); kept, the English speech engine may spell or skip them',
    ]);
    // a Japanese-only build translates the text first (the translation is checked for its script)
    expect(scriptMismatchNotes(corpus.conversations, ['ja'])).toEqual([]);
  });

  it('the real dev set: only the three answers quoting Greek or Cyrillic are noted', async () => {
    const corpus = await ingestCorpus(configFor(TOPIOCQA_DEV));
    expect(corpus.notes.map((note) => note.split(':')[0])).toEqual([
      'topiocqa_dev_0051 turn 3',
      'topiocqa_dev_0169 turn 7',
      'topiocqa_dev_0187 turn 4',
    ]);
    expect(corpus.notes[2]).toContain('(Cyrillic, Greek)');
  });
});

describe('length limit per utterance', () => {
  it('a 5 MB answer rejects its conversation at ingest, naming conversation, turn and field; the rest is built', async () => {
    const file = await corpusWith('huge-answer', (copy) => {
      turn(copy, 3, 5).Answer = 'word '.repeat(1_000_000);
    });
    const corpus = await ingestCorpus(configFor(file));
    expect(corpus.conversations.map((conversation) => conversation.id)).toEqual([
      'topiocqa_dev_0001',
      'topiocqa_dev_0002',
    ]);
    expect(corpus.rejected).toEqual([
      {
        id: 'conversation 3',
        reason:
          'topiocqa_dev.json: conversation 3, turn 5: field "Answer": 4999999 characters, more than the 2000 allowed per utterance (corpus.maximumUtteranceCharacters)',
      },
    ]);
  });

  it('the limit is a setting', async () => {
    const corpus = await ingestCorpus(configFor(TOPIOCQA_DEV, { limit: 3, maximumUtteranceCharacters: 100 }));
    expect(corpus.rejected.length).toBeGreaterThan(0);
    for (const rejected of corpus.rejected)
      expect(rejected.reason).toMatch(/turn \d+: field "(Question|Answer)": \d+ characters, more than the 100 allowed/);
  });
});
