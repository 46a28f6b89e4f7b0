/**
 * The language of every reply line, end to end: an `openai-compatible` backend built from settings as
 * a build builds it, against a loopback chat-completions server that answers in the wrong language.
 * A wrong language is one repair request, then quarantine naming turn, expected and detected language.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { TextTurn } from '../../model/types.ts';
import { createDialogueTextBackend } from './backend-settings.ts';
import type { RewriteTurn } from './dialogue-text.ts';
import { EndpointPools } from '../endpoint-pool.ts';
import { QuarantinedDialogueError } from './errors.ts';
import { readDialogueRequest } from './testing/dialogue-replies.ts';
import { startOpenAILoopbackServer, type OpenAILoopbackServer } from './testing/openai-loopback-server.ts';

const sourceTurns: RewriteTurn[] = [
  { turnNumber: 1, question: 'when was the eiffel tower built', answer: 'between 1887 and 1889' },
  { turnNumber: 2, question: 'who built it', answer: 'the company of Gustave Eiffel' },
];
const spokenTurns: TextTurn[] = [
  { turnNumber: 1, question: 'When was the Eiffel Tower built?', answer: 'It was built in eighteen eighty-nine.' },
  { turnNumber: 2, question: 'Was it the tallest building then?', answer: 'Yes.' },
];

const french = JSON.stringify({
  turns: [
    { question: 'Quand est-ce que la tour a été construite ?', answer: 'Elle a été construite en mille huit cent.' },
    { question: 'Et qui est-ce qui la construite ?', answer: 'La compagnie de Gustave Eiffel.' },
  ],
});
const english = JSON.stringify({
  turns: [
    { question: 'So when was the Eiffel Tower built?', answer: 'It was built in eighteen eighty-nine.' },
    { question: 'And who was it that built it?', answer: 'It was the company of Gustave Eiffel.' },
  ],
});
const spanish = JSON.stringify({
  turns: [
    { question: '¿Cuándo se construyó la torre Eiffel?', answer: 'Se construyó en mil ochocientos ochenta y nueve.' },
    { question: '¿Era el edificio más alto entonces?', answer: 'Sí.' },
  ],
});
const englishForSpanish = JSON.stringify({
  turns: [
    { question: 'When was the Eiffel Tower built and by whom?', answer: 'It was built in eighteen eighty-nine.' },
    { question: 'Was it the tallest building then?', answer: 'Yes.' },
  ],
});

let server: OpenAILoopbackServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** A backend whose server answers the first request with `first`, every later one with `later`. */
async function backendAnswering(first: string, later: string, settings: Record<string, unknown> = {}) {
  server = await startOpenAILoopbackServer({ responder: (request) => (request.index === 0 ? first : later) });
  return createDialogueTextBackend(
    {
      backend: 'openai-compatible',
      baseUrl: `${server.url}/v1`,
      model: 'loopback',
      retry: { maxRetries: 0 },
      ...settings,
    } as never,
    { baseDirectory: process.cwd(), environmentVariables: {}, endpointPools: new EndpointPools() },
  );
}

describe('reply language', () => {
  it('an English rewrite answered in French: one repair request quoting the problem, then quarantine', async () => {
    const backend = await backendAnswering(french, french);
    const failure = await backend
      .rewrite({ dialogueId: 'd1', language: 'en', turns: sourceTurns })
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(QuarantinedDialogueError);
    const message = (failure as Error).message;
    expect(message).toMatch(
      /^quarantined: dialogue d1 \(rewrite-spoken\): the reply is invalid after one repair request: turn 1 question: is in French \(fr\), not English \(en\): language identification confidence [0-9.]+ over \d+ letters/,
    );
    expect(server!.requests).toHaveLength(2);
    const repair = readDialogueRequest(server!.requests[1]!.system, server!.requests[1]!.prompt);
    expect(repair?.isRepair).toBe(true);
    expect(server!.requests[1]!.prompt).toContain('- turn 1 question: is in French (fr), not English (en)');
  });

  it('a French reply repaired into English is accepted', async () => {
    const backend = await backendAnswering(french, english);
    const turns = await backend.rewrite({ dialogueId: 'd1', language: 'en', turns: sourceTurns });
    expect(turns.map((turn) => turn.question)).toEqual([
      'So when was the Eiffel Tower built?',
      'And who was it that built it?',
    ]);
    expect(server!.requests).toHaveLength(2);
  });

  it('a Spanish translation answered in English is quarantined naming turn, Spanish and English', async () => {
    const backend = await backendAnswering(englishForSpanish, englishForSpanish);
    const failure = await backend
      .translate({ dialogueId: 'd2', sourceLanguage: 'en', targetLanguage: 'es', turns: spokenTurns })
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(QuarantinedDialogueError);
    expect((failure as Error).message).toContain('turn 1 question: is in English (en), not Spanish (es)');
    expect((failure as Error).message).toContain('turn 2 question: is in English (en), not Spanish (es)');
    // "Yes." is too short to be identified
    expect((failure as Error).message).not.toContain('turn 2 answer');
    expect(server!.requests).toHaveLength(2);
  });

  it('a Spanish translation with a one-word answer passes at once', async () => {
    const backend = await backendAnswering(spanish, spanish);
    const turns = await backend.translate({
      dialogueId: 'd3',
      sourceLanguage: 'en',
      targetLanguage: 'es',
      turns: spokenTurns,
    });
    expect(turns[1]?.answer).toBe('Sí.');
    expect(server!.requests).toHaveLength(1);
  });

  it('languageIdentification.enabled: false lets the French reply through', async () => {
    const backend = await backendAnswering(french, french, { languageIdentification: { enabled: false } });
    const turns = await backend.rewrite({ dialogueId: 'd1', language: 'en', turns: sourceTurns });
    expect(turns[0]?.question).toBe('Quand est-ce que la tour a été construite ?');
    expect(server!.requests).toHaveLength(1);
  });
});
