import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createDialogueTextBackend, DEFAULT_SEED } from './backend-settings.ts';
import { LanguageModelTextBackend } from './dialogue-text-backend.ts';
import { ReplayModel } from './replay-model.ts';
import { RulesTextBackend } from './rules-backend.ts';

describe('createDialogueTextBackend', () => {
  it('builds the rules backend', () => {
    expect(createDialogueTextBackend({ backend: 'rules' })).toBeInstanceOf(RulesTextBackend);
  });

  it('builds a replay backend with defaults and a path resolved against the base directory', () => {
    const backend = createDialogueTextBackend(
      { backend: 'replay', file: 'recordings/demo.jsonl', model: 'hand-written-demo' },
      { baseDirectory: '/project' },
    );
    expect(backend).toBeInstanceOf(LanguageModelTextBackend);
    const model = (backend as LanguageModelTextBackend).model;
    expect(model).toBeInstanceOf(ReplayModel);
    expect((model as ReplayModel).file).toBe(join('/project', 'recordings/demo.jsonl'));
    expect(backend.describe('rewrite-spoken')).toMatchObject({
      model: 'hand-written-demo',
      temperature: 0,
      seed: DEFAULT_SEED,
      structuredOutput: false,
    });
  });

  it('rejects unknown backends and missing fields', () => {
    expect(() => createDialogueTextBackend({ backend: 'unknown' } as never)).toThrow();
    expect(() => createDialogueTextBackend({ backend: 'replay', file: 'x.jsonl' } as never)).toThrow(/model/);
  });
});
