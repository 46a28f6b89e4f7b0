/**
 * The `gemini` and `openai-compatible` backends end to end, built from settings as a build builds
 * them, against loopback servers speaking the real protocols through the real client libraries. Each
 * field fault ends retried-and-correct or quarantined with a reason.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { parse as parseYaml } from 'yaml';
import type { TextTurn } from '../../model/types.ts';
import { createDialogueTextBackend, type BackendEnvironment } from './backend-settings.ts';
import type { RewriteTurn } from './dialogue-text.ts';
import { backendFingerprint, type DialogueTextBackend } from './dialogue-text-backend.ts';
import { EndpointPools } from '../endpoint-pool.ts';
import {
  LanguageModelCallError,
  MissingApiKeyError,
  ModelCapabilityError,
  QuarantinedDialogueError,
} from './errors.ts';
import type { RetryEvent } from './retrying-model.ts';
import { readDialogueRequest, validDialogueReply, validReplyTurns } from './testing/dialogue-replies.ts';
import {
  GEMINI_LOOPBACK_API_KEY,
  geminiReplies,
  startGeminiLoopbackServer,
  type GeminiLoopbackReply,
  type GeminiLoopbackRequest,
  type GeminiLoopbackServer,
} from './testing/gemini-loopback-server.ts';
import {
  openAIReplies,
  startOpenAILoopbackServer,
  type OpenAILoopbackReply,
  type OpenAILoopbackServer,
} from './testing/openai-loopback-server.ts';

const sourceTurns: RewriteTurn[] = [
  { turnNumber: 1, question: 'who designed the eiffel tower', answer: 'Gustave Eiffel' },
  { turnNumber: 2, question: 'when was it finished', answer: '1889' },
  { turnNumber: 3, question: 'which hotel near it is the cheapest', answer: null, answerable: false },
  { turnNumber: 4, question: 'and the other one', answer: null },
];
const spokenTurns: TextTurn[] = [
  { turnNumber: 1, question: 'Who designed the Eiffel Tower?', answer: 'It was designed by Gustave Eiffel.' },
  { turnNumber: 2, question: 'When was it finished?', answer: 'It was finished in eighteen eighty-nine.' },
  { turnNumber: 3, question: 'How tall is it?', answer: 'It is three hundred thirty meters tall.' },
  { turnNumber: 4, question: 'And the other one?', answer: null },
];
const translateInput = {
  dialogueId: 'topiocqa_dev_0001',
  sourceLanguage: 'en' as const,
  targetLanguage: 'ja' as const,
  turns: spokenTurns,
};
const rewriteInput = { dialogueId: 'topiocqa_dev_0001', language: 'en' as const, turns: sourceTurns };

/** What the correct translation of `spokenTurns` is (the loopback responder's answer). */
const expectedJapanese: TextTurn[] = validReplyTurns({
  task: 'translate',
  isRepair: false,
  turns: spokenTurns.map((turn) => ({ turn: turn.turnNumber, question: turn.question, answer: turn.answer })),
}).map((turn, index) => ({ turnNumber: index + 1, ...turn }));

let directory: string;
let gemini: GeminiLoopbackServer | undefined;
let openAI: OpenAILoopbackServer | undefined;
let retries: RetryEvent[];
beforeEach(async () => {
  directory = await mkdtemp(join(tmpdir(), 'llm-backends-'));
  retries = [];
});
afterEach(async () => {
  vi.useRealTimers();
  await gemini?.close();
  await openAI?.close();
  gemini = undefined;
  openAI = undefined;
  await rm(directory, { recursive: true, force: true });
});

function environment(
  variables: Record<string, string | undefined> = { GEMINI_API_KEY: GEMINI_LOOPBACK_API_KEY },
): BackendEnvironment {
  return {
    baseDirectory: directory,
    environmentVariables: variables,
    endpointPools: new EndpointPools(),
    onRetry: (event) => retries.push(event),
  };
}

const fastRetry = { maxRetries: 4, initialDelaySeconds: 0.02, maxDelaySeconds: 2, jitter: 0 };

/**
 * Fake timers for the waits (client timeout, retry backoff, pool hold, server delay): the clock moves
 * only when a test advances it, so waits are asserted to the millisecond. setImmediate stays real, so
 * the loopback sockets keep working.
 */
function useFakeClock(): void {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date', 'performance'] });
}

/** Lets real I/O (the loopback exchange) run until `done()` holds; fake time does not move meanwhile. */
async function untilTrue(done: () => boolean): Promise<void> {
  while (!done()) await new Promise((resolve) => setImmediate(resolve));
}

/** Replies with `faults[index]` when set (a reply or a function of the correct reply), else correctly. */
function scripted(
  faults: ReadonlyArray<GeminiLoopbackReply | ((correct: string) => string) | undefined>,
): (request: GeminiLoopbackRequest) => GeminiLoopbackReply | string {
  return (request) => {
    const dialogue = readDialogueRequest(request.system, request.prompt);
    const correct = dialogue === undefined ? 'not a dialogue request' : validDialogueReply(dialogue);
    const fault = faults[request.index];
    if (fault === undefined) return correct;
    return typeof fault === 'function' ? fault(correct) : fault;
  };
}

async function geminiBackend(
  faults: Parameters<typeof scripted>[0],
  settings: Record<string, unknown> = {},
  variables?: Record<string, string | undefined>,
): Promise<DialogueTextBackend> {
  gemini = await startGeminiLoopbackServer({ responder: scripted(faults) });
  return createDialogueTextBackend(
    { backend: 'gemini', baseUrl: gemini.url, retry: fastRetry, ...settings } as never,
    environment(variables),
  );
}

const englishReply = (): string =>
  JSON.stringify({ turns: spokenTurns.map((turn) => ({ question: turn.question, answer: turn.answer })) });

describe('gemini backend: field faults end retried-and-correct', () => {
  it('no fault: one request to gemma-4-31b-it with a system instruction and no JSON mode', async () => {
    const backend = await geminiBackend([]);
    expect(await backend.translate(translateInput)).toEqual(expectedJapanese);
    expect(gemini!.requests).toHaveLength(1);
    expect(gemini!.requests[0]!.model).toBe('gemma-4-31b-it');
    expect(gemini!.requests[0]!.body.systemInstruction).toBeDefined();
    expect(gemini!.requests[0]!.body.generationConfig).toEqual({ temperature: 0, seed: 1234 });
    expect(backend.id).toBe('language-model(gemini)');
    expect(backendFingerprint(backend, 'translate', 'ja')).toMatch(
      /^language-model\|model=gemma-4-31b-it\|prompt=translate\.v1#\w{12}\|temperature=0\|seed=1234\|structured-output=false\|recovery=repair=repair-dialogue\.v1#\w{12},split-depth=2$/,
    );
  });

  it('429 RESOURCE_EXHAUSTED with RetryInfo "0.2s": waits exactly that long, then succeeds', async () => {
    const backend = await geminiBackend([geminiReplies.rateLimited('0.2s')]);
    useFakeClock();
    const translated = backend.translate(translateInput);
    await untilTrue(() => retries.length === 1);
    expect(retries.map((event) => event.delayMilliseconds)).toEqual([200]);
    await vi.advanceTimersByTimeAsync(199);
    expect(gemini!.requests).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(await translated).toEqual(expectedJapanese);
    expect(gemini!.requests).toHaveLength(2);
    expect(performance.now()).toBe(200);
  });

  it('500 and 503 on some requests: retried with backoff', async () => {
    const backend = await geminiBackend([geminiReplies.internalError(), geminiReplies.unavailable()]);
    expect(await backend.translate(translateInput)).toEqual(expectedJapanese);
    expect(gemini!.requests).toHaveLength(3);
    expect(
      retries.map((event) => [(event.error as LanguageModelCallError).statusCode, event.delayMilliseconds]),
    ).toEqual([
      [500, 20],
      [503, 40],
    ]);
  });

  it('a slow response hitting the client timeout: retried', async () => {
    const backend = await geminiBackend([geminiReplies.slow(3000)], { timeoutSeconds: 0.3 });
    useFakeClock();
    const translated = backend.translate(translateInput);
    await untilTrue(() => gemini!.requests.length === 1);
    await vi.advanceTimersByTimeAsync(299);
    expect(retries).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(1);
    await untilTrue(() => retries.length === 1);
    expect((retries[0]?.error as LanguageModelCallError).failure).toBe('timeout');
    expect(retries[0]?.delayMilliseconds).toBe(20);
    await vi.advanceTimersByTimeAsync(20);
    expect(await translated).toEqual(expectedJapanese);
    expect(gemini!.requests).toHaveLength(2);
    expect(performance.now()).toBe(320);
  });

  it('JSON in a markdown fence, and a stray prefix before the JSON: parsed, no extra request', async () => {
    const fenced = await geminiBackend([(correct) => `\`\`\`json\n${correct}\n\`\`\``]);
    expect(await fenced.translate(translateInput)).toEqual(expectedJapanese);
    await gemini!.close();
    const prefixed = await geminiBackend([
      (correct) => `Here is the translation you asked for:\n${correct}\nI hope this helps!`,
    ]);
    expect(await prefixed.translate(translateInput)).toEqual(expectedJapanese);
    expect(gemini!.requests).toHaveLength(1);
  });

  it('MAX_TOKENS: the conversation is halved instead of resent', async () => {
    const backend = await geminiBackend([geminiReplies.maxTokens()]);
    expect(await backend.translate(translateInput)).toEqual(expectedJapanese);
    const turnsPerRequest = gemini!.requests.map((request) =>
      readDialogueRequest(request.system, request.prompt)?.turns.map((turn) => turn.turn),
    );
    expect(turnsPerRequest).toEqual([
      [1, 2, 3, 4],
      [1, 2],
      [3, 4],
    ]);
  });

  it('English left untranslated: one repair request quoting the problems', async () => {
    const backend = await geminiBackend([() => englishReply()]);
    expect(await backend.translate(translateInput)).toEqual(expectedJapanese);
    expect(gemini!.requests).toHaveLength(2);
    const repair = gemini!.requests[1]!;
    expect(repair.prompt).toContain('Your previous reply to this request was:');
    expect(repair.prompt).toContain('- turn 1 question: contains no kana or kanji');
  });

  it('the wrong number of turns: repaired', async () => {
    const backend = await geminiBackend([
      (correct) => JSON.stringify({ turns: (JSON.parse(correct) as { turns: unknown[] }).turns.slice(1) }),
    ]);
    expect(await backend.translate(translateInput)).toEqual(expectedJapanese);
    expect(gemini!.requests[1]!.prompt).toContain('- expected 4 turns, got 3');
  });

  it('the rewrite works the same way (prompt-only JSON, unanswerable and null turns kept)', async () => {
    const backend = await geminiBackend([geminiReplies.unavailable(), (correct) => `\`\`\`\n${correct}\n\`\`\``]);
    const turns = await backend.rewrite(rewriteInput);
    expect(turns.map((turn) => turn.turnNumber)).toEqual([1, 2, 3, 4]);
    expect(turns[1]?.answer).not.toMatch(/\d/);
    expect(turns[3]?.answer).toBeNull();
  });
});

describe('gemini backend: quarantine and non-retryable failures', () => {
  it('English left untranslated after the repair: quarantined with the reason', async () => {
    const backend = await geminiBackend([() => englishReply(), () => englishReply()]);
    const error = await backend.translate(translateInput).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(QuarantinedDialogueError);
    expect((error as Error).message).toMatch(
      /^quarantined: dialogue topiocqa_dev_0001 \(translate\): the reply is invalid after one repair request: turn 1 question: contains no kana or kanji; /,
    );
    expect(gemini!.requests).toHaveLength(2);
  });

  it('MAX_TOKENS on every part: quarantined after the split limit', async () => {
    const cut = geminiReplies.maxTokens();
    const backend = await geminiBackend([cut, cut, cut, cut, cut, cut, cut], { recovery: { maximumSplitDepth: 1 } });
    await expect(backend.translate(translateInput)).rejects.toThrow(
      /^quarantined: dialogue topiocqa_dev_0001 \(translate, turns 1-2\): the reply was cut at the output token limit \(MAX_TOKENS\) and already split 1 times/,
    );
  });

  it('a blocked prompt: quarantined as a safety stop', async () => {
    const backend = await geminiBackend([{ kind: 'blocked', blockReason: 'SAFETY' }]);
    await expect(backend.translate(translateInput)).rejects.toThrow(
      'quarantined: dialogue topiocqa_dev_0001 (translate): the generation ended with finish reason "safety"',
    );
  });

  it('503 on every request: the call error after the retries (not quarantine; the runner lists it)', async () => {
    const down = geminiReplies.unavailable();
    const backend = await geminiBackend([down, down, down], { retry: { ...fastRetry, maxRetries: 2 } });
    await expect(backend.translate(translateInput)).rejects.toMatchObject({ statusCode: 503, isRetryable: true });
    expect(gemini!.requests).toHaveLength(3);
  });

  it('gemma-3: the table sends no system instruction; forcing one gives a 400 that is not retried', async () => {
    const backend = await geminiBackend([], { model: 'gemma-3-27b-it' });
    expect(await backend.translate(translateInput)).toEqual(expectedJapanese);
    expect(gemini!.requests[0]!.body.systemInstruction).toBeUndefined();
    await gemini!.close();

    const forced = await geminiBackend([], { model: 'gemma-3-27b-it', capabilities: { systemInstruction: true } });
    const error = await forced.translate(translateInput).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ModelCapabilityError);
    expect((error as Error).message).toContain(
      'switch it off in the llm settings: capabilities: {systemInstruction: false}',
    );
    expect(gemini!.requests).toHaveLength(1);
  });

  it('the API key comes from the environment on first use: GEMINI_API_KEY, then GOOGLE_API_KEY, or a named variable', async () => {
    const missing = await geminiBackend([], {}, {});
    expect(missing.describe('translate', 'ja').model).toBe('gemma-4-31b-it');
    const error = await missing.translate(translateInput).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(MissingApiKeyError);
    expect((error as Error).message).toContain('set the environment variable GEMINI_API_KEY or GOOGLE_API_KEY');
    expect(gemini!.requests).toHaveLength(0);
    await gemini!.close();

    const google = await geminiBackend([], {}, { GOOGLE_API_KEY: GEMINI_LOOPBACK_API_KEY });
    await expect(google.translate(translateInput)).resolves.toHaveLength(4);
    await gemini!.close();

    const named = await geminiBackend(
      [],
      { apiKeyVariable: 'DUPLEXSYNTH_TEST_KEY' },
      { DUPLEXSYNTH_TEST_KEY: GEMINI_LOOPBACK_API_KEY, GEMINI_API_KEY: 'not this one' },
    );
    await expect(named.translate(translateInput)).resolves.toHaveLength(4);
  });
});

describe('record and replay', () => {
  it('records every request of a run (retries leave no trace, repairs and splits do) and replays it exactly without a server', async () => {
    const settings = { model: 'gemma-4-31b-it', seed: 99, record: 'recorded/llm.jsonl' };
    const backend = await geminiBackend(
      [geminiReplies.rateLimited('0.05s'), () => englishReply(), undefined, geminiReplies.maxTokens()],
      settings,
    );
    const translated = await backend.translate(translateInput);
    const spoken = await backend.rewrite(rewriteInput);
    const requestCount = gemini!.requests.length;
    expect(requestCount).toBe(6);
    await gemini!.close();
    gemini = undefined;

    const lines = (await readFile(join(directory, 'recorded/llm.jsonl'), 'utf8')).trimEnd().split('\n');
    expect(lines).toHaveLength(5);
    const replay = createDialogueTextBackend(
      { backend: 'replay', file: 'recorded/llm.jsonl', model: 'gemma-4-31b-it', seed: 99 },
      { baseDirectory: directory },
    );
    expect(await replay.translate(translateInput)).toEqual(translated);
    expect(await replay.rewrite(rewriteInput)).toEqual(spoken);
    expect(backendFingerprint(replay, 'translate', 'ja')).toBe(backendFingerprint(backend, 'translate', 'ja'));
  });
});

describe('throughput: one queue per endpoint, shared by dialogues and tasks', () => {
  it('never has more than `concurrency` requests in flight at the server', async () => {
    gemini = await startGeminiLoopbackServer({ latencyMs: 40 });
    const shared = environment();
    const settings = {
      backend: 'gemini' as const,
      baseUrl: gemini.url,
      retry: fastRetry,
      throughput: { concurrency: 3 },
    };
    const rewrite = createDialogueTextBackend(settings, shared);
    const translate = createDialogueTextBackend(settings, shared);
    const dialogues = Array.from({ length: 8 }, (_, index) => `dialogue_${index}`);
    const results = await Promise.all(
      dialogues.flatMap((dialogueId) => [
        rewrite.rewrite({ ...rewriteInput, dialogueId }),
        translate.translate({ ...translateInput, dialogueId }),
      ]),
    );
    expect(results).toHaveLength(16);
    expect(gemini.requests).toHaveLength(16);
    expect(gemini.statistics.peakConcurrency).toBe(3);
    expect(shared.endpointPools!.size).toBe(1);
  });

  it('rejects two blocks naming one endpoint with different limits', async () => {
    const shared = environment();
    createDialogueTextBackend({ backend: 'gemini', throughput: { concurrency: 2 } }, shared);
    expect(() => createDialogueTextBackend({ backend: 'gemini', throughput: { concurrency: 5 } }, shared)).toThrow(
      /configured twice with different throughput/,
    );
  });
});

describe('openai-compatible backend', () => {
  async function openAIBackend(
    replies: ReadonlyArray<OpenAILoopbackReply | ((correct: string) => string) | undefined>,
    settings: Record<string, unknown> = {},
  ): Promise<DialogueTextBackend> {
    openAI = await startOpenAILoopbackServer({
      responder: (request) => {
        const dialogue = readDialogueRequest(request.system, request.prompt);
        const correct = dialogue === undefined ? 'not a dialogue request' : validDialogueReply(dialogue);
        const fault = replies[request.index];
        return fault === undefined ? correct : typeof fault === 'function' ? fault(correct) : fault;
      },
    });
    return createDialogueTextBackend(
      {
        backend: 'openai-compatible',
        baseUrl: `${openAI.url}/v1`,
        model: 'google/gemma-3-27b-it',
        retry: fastRetry,
        ...settings,
      } as never,
      environment(),
    );
  }

  it('429 with retry-after, 503, a fenced reply, finish_reason length: retried, parsed, halved', async () => {
    const backend = await openAIBackend([
      openAIReplies.rateLimited(0.1),
      openAIReplies.unavailable(),
      openAIReplies.length(),
      (correct) => `\`\`\`json\n${correct}\n\`\`\``,
    ]);
    expect(await backend.translate(translateInput)).toEqual(expectedJapanese);
    expect(retries.map((event) => (event.error as LanguageModelCallError).statusCode)).toEqual([429, 503]);
    expect(retries[0]?.delayMilliseconds).toBe(100);
    expect(openAI!.requests).toHaveLength(5);
  });

  it('a slow response: retried after the client timeout; untranslated English: repaired', async () => {
    const backend = await openAIBackend([openAIReplies.slow(3000), () => englishReply()], { timeoutSeconds: 0.3 });
    useFakeClock();
    const translated = backend.translate(translateInput);
    await untilTrue(() => openAI!.requests.length === 1);
    await vi.advanceTimersByTimeAsync(299);
    expect(retries).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(1);
    await untilTrue(() => retries.length === 1);
    expect((retries[0]?.error as LanguageModelCallError).failure).toBe('timeout');
    await vi.advanceTimersByTimeAsync(20);
    expect(await translated).toEqual(expectedJapanese);
    expect(openAI!.requests).toHaveLength(3);
    expect(performance.now()).toBe(320);
  });

  it('structuredOutput sends response_format json_schema with the exact turn count; jsonMode off puts it in the prompt', async () => {
    const backend = await openAIBackend([], { structuredOutput: true });
    await backend.translate(translateInput);
    expect(openAI!.requests[0]!.body.response_format).toMatchObject({
      type: 'json_schema',
      json_schema: { name: 'dialogue_turns', schema: { properties: { turns: { minItems: 4, maxItems: 4 } } } },
    });
    await openAI!.close();
    const promptOnly = await openAIBackend([], { structuredOutput: true, capabilities: { jsonMode: false } });
    await promptOnly.translate(translateInput);
    expect(openAI!.requests[0]!.body.response_format).toBeUndefined();
    expect(openAI!.requests[0]!.prompt).toContain('following this JSON schema');
  });
});

describe('settings as YAML', () => {
  it('accepts the documented blocks', () => {
    const yaml = parseYaml(`
rewrite:
  backend: gemini
  model: gemma-4-31b-it
  apiKeyVariable: GEMINI_API_KEY
  baseUrl: https://generativelanguage.googleapis.com
  timeoutSeconds: 120
  temperature: 0
  seed: 1234
  structuredOutput: false
  capabilities: { systemInstruction: true, jsonMode: false }
  throughput: { concurrency: 4, requestsPerInterval: 30, intervalSeconds: 60 }
  retry: { maxRetries: 4, initialDelaySeconds: 2, maxDelaySeconds: 120, backoffFactor: 2, jitter: 0.2 }
  recovery: { repair: true, maximumSplitDepth: 2 }
  record: outputs/recorded/rewrite.jsonl
translate:
  backend: openai-compatible
  baseUrl: http://127.0.0.1:8000/v1
  model: google/gemma-3-27b-it
  timeoutSeconds: 300
  maxOutputTokens: 4096
  structuredOutput: true
  capabilities: { systemInstruction: false }
  allowedLatinWords: [NHK]
  throughput: { concurrency: 8 }
`) as { rewrite: never; translate: never };
    const shared = environment();
    expect(createDialogueTextBackend(yaml.rewrite, shared).id).toBe('language-model(gemini)');
    expect(createDialogueTextBackend(yaml.translate, shared).id).toBe('language-model(openai-compatible)');
    expect(() => createDialogueTextBackend({ backend: 'gemini', apiKey: 'AIza-not-here' } as never, shared)).toThrow(
      /apiKey/,
    );
    expect(() => createDialogueTextBackend({ backend: 'openai-compatible', model: 'm' } as never, shared)).toThrow(
      /baseUrl/,
    );
  });
});
