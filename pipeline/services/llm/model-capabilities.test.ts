import { describe, expect, it } from 'vitest';
import { adaptRequestToCapabilities, geminiModelCapabilities } from './model-capabilities.ts';

describe('geminiModelCapabilities', () => {
  it('follows the table: Gemma 3 neither, Gemma 4 system only, Gemini both, unknown neither', () => {
    expect(geminiModelCapabilities('gemma-3-27b-it')).toEqual({ systemInstruction: false, jsonMode: false });
    expect(geminiModelCapabilities('models/gemma-3n-e4b-it')).toEqual({ systemInstruction: false, jsonMode: false });
    expect(geminiModelCapabilities('gemma-4-31b-it')).toEqual({ systemInstruction: true, jsonMode: false });
    expect(geminiModelCapabilities('gemini-2.5-flash')).toEqual({ systemInstruction: true, jsonMode: true });
    expect(geminiModelCapabilities('learnlm-2.0')).toEqual({ systemInstruction: false, jsonMode: false });
  });

  it('lets settings override the table', () => {
    expect(geminiModelCapabilities('gemma-4-31b-it', { jsonMode: true })).toEqual({
      systemInstruction: true,
      jsonMode: true,
    });
    expect(geminiModelCapabilities('gemini-2.5-flash', { systemInstruction: undefined, jsonMode: false })).toEqual({
      systemInstruction: true,
      jsonMode: false,
    });
  });
});

describe('adaptRequestToCapabilities', () => {
  const schema = {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    type: 'object',
    properties: { turns: { type: 'array' } },
  };

  it('sends system text and schema separately when the model takes them (without $schema)', () => {
    expect(
      adaptRequestToCapabilities(
        { system: 'S', prompt: 'P', responseSchema: schema },
        { systemInstruction: true, jsonMode: true },
      ),
    ).toEqual({
      system: 'S',
      prompt: 'P',
      responseSchema: { type: 'object', properties: { turns: { type: 'array' } } },
    });
  });

  it('puts the system text before the prompt and the schema into the prompt otherwise', () => {
    const adapted = adaptRequestToCapabilities(
      { system: 'S', prompt: 'P', responseSchema: schema },
      { systemInstruction: false, jsonMode: false },
    );
    expect(adapted.system).toBeUndefined();
    expect(adapted.responseSchema).toBeUndefined();
    expect(adapted.prompt).toBe(
      'S\n\nP\n\nReply with one JSON object only, no other text, following this JSON schema:\n{"type":"object","properties":{"turns":{"type":"array"}}}',
    );
    expect(adaptRequestToCapabilities({ prompt: 'P' }, { systemInstruction: false, jsonMode: false })).toEqual({
      system: undefined,
      prompt: 'P',
      responseSchema: undefined,
    });
  });
});
