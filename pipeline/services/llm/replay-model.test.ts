import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { NoRecordedResponseError, RecordedResponseFileError } from './errors.ts';
import { FakeLanguageModel } from './fake-language-model.ts';
import { requestKey, type GenerationRequest } from './language-model.ts';
import { canonicalJson } from '../../storage/canonical-json.ts';
import { readRecordedResponses, RecordingModel, ReplayModel } from './replay-model.ts';

let directory: string;
beforeEach(async () => {
  directory = await mkdtemp(join(tmpdir(), 'replay-model-'));
});
afterEach(async () => {
  await rm(directory, { recursive: true, force: true });
});

function request(prompt: string, dialogueId = 'topiocqa_dev_0001'): GenerationRequest {
  return {
    model: 'm',
    system: 'be brief',
    prompt,
    temperature: 0,
    seed: 1,
    trace: { dialogueId, task: 'rewrite-spoken' },
  };
}

describe('RecordingModel + ReplayModel', () => {
  it('records responses to a sorted, canonical JSONL file that a replay answers from', async () => {
    const file = join(directory, 'nested', 'recorded.jsonl');
    const inner = new FakeLanguageModel({ respond: (call) => `reply to ${call.prompt}` });
    const recording = new RecordingModel(inner, file);
    expect(recording.id).toBe('fake');
    const prompts = ['c', 'a', 'b', 'd'];
    const results = await Promise.all(prompts.map((prompt) => recording.generate(request(prompt))));
    expect(results.map((result) => result.text)).toEqual(prompts.map((prompt) => `reply to ${prompt}`));

    const lines = (await readFile(file, 'utf8')).trimEnd().split('\n');
    expect(lines).toHaveLength(4);
    const keys = lines.map((line) => JSON.parse(line).key as string);
    expect(keys).toEqual([...keys].sort());
    for (const line of lines) expect(canonicalJson(JSON.parse(line))).toBe(line);
    expect((await readdir(join(directory, 'nested'))).filter((name) => name.endsWith('.tmp'))).toEqual([]);

    const replay = new ReplayModel(file);
    expect(replay.id).toBe('replay');
    // The trace is not part of the key: another dialogue id replays the same record.
    expect(await replay.generate(request('b', 'another_dialogue'))).toEqual({
      text: 'reply to b',
      finishReason: 'stop',
    });
    expect(await replay.has(request('a'))).toBe(true);
    expect((await replay.keys()).sort()).toEqual([...keys]);
  });

  it('replaces a record with the same key and keeps the others', async () => {
    const file = join(directory, 'recorded.jsonl');
    await new RecordingModel(new FakeLanguageModel({ results: ['first', 'other'] }), file).generate(request('x'));
    const second = new RecordingModel(new FakeLanguageModel({ results: ['second', 'other'] }), file);
    await second.generate(request('x'));
    await second.generate(request('y'));
    const records = await readRecordedResponses(file);
    expect(records.size).toBe(2);
    expect(records.get(requestKey(request('x')))?.result.text).toBe('second');
  });

  it('records nothing when the inner model fails', async () => {
    const file = join(directory, 'recorded.jsonl');
    const failing = new FakeLanguageModel({
      respond: () => {
        throw new Error('boom');
      },
    });
    await expect(new RecordingModel(failing, file).generate(request('x'))).rejects.toThrow('boom');
    await expect(readFile(file, 'utf8')).rejects.toThrow();
  });

  it('a miss names the dialogue, the key and the file, and says how to fix it', async () => {
    const file = join(directory, 'recorded.jsonl');
    await new RecordingModel(new FakeLanguageModel({ results: ['a'] }), file).generate(request('known'));
    const missing = request('unknown', 'topiocqa_dev_0042');
    const key = requestKey(missing);
    const promise = new ReplayModel(file).generate(missing);
    await expect(promise).rejects.toThrow(NoRecordedResponseError);
    await expect(promise).rejects.toThrow(
      `no recorded response for dialogue topiocqa_dev_0042 (rewrite-spoken) (key ${key.slice(0, 12)}…) in ${file}; record it with a real backend (llm.record)`,
    );
    await expect(promise).rejects.toMatchObject({ isRetryable: false, dialogueId: 'topiocqa_dev_0042', key, file });
  });

  it('fails clearly on a missing or malformed file', async () => {
    await expect(new ReplayModel(join(directory, 'absent.jsonl')).generate(request('x'))).rejects.toThrow(
      RecordedResponseFileError,
    );
    const file = join(directory, 'bad.jsonl');
    await writeFile(file, '{"key": "abc"}\n');
    await expect(new ReplayModel(file).generate(request('x'))).rejects.toThrow(/bad\.jsonl:1: not a recorded response/);
    await writeFile(file, 'not json\n');
    await expect(readRecordedResponses(file)).rejects.toThrow(/bad\.jsonl:1: not valid JSON/);
  });

  it('detects a request edited by hand (key mismatch)', async () => {
    const file = join(directory, 'recorded.jsonl');
    await new RecordingModel(new FakeLanguageModel({ results: ['a'] }), file).generate(request('x'));
    const edited = (await readFile(file, 'utf8')).replace('"prompt":"x"', '"prompt":"y"');
    await writeFile(file, edited);
    await expect(readRecordedResponses(file)).rejects.toThrow(/does not match its request/);
  });
});
