import { describe, expect, it } from 'vitest';
import { describeRequest, requestKey, type GenerationRequest } from './language-model.ts';

const request: GenerationRequest = { model: 'm', system: 's', prompt: 'p', temperature: 0, seed: 1 };

describe('requestKey', () => {
  it('is a sha256 hex digest independent of key order', () => {
    const reordered: GenerationRequest = { seed: 1, temperature: 0, prompt: 'p', system: 's', model: 'm' };
    expect(requestKey(request)).toMatch(/^[0-9a-f]{64}$/);
    expect(requestKey(reordered)).toBe(requestKey(request));
  });

  it('ignores the trace and unset optional fields', () => {
    expect(requestKey({ ...request, trace: { dialogueId: 'x', task: 'rewrite-spoken' } })).toBe(requestKey(request));
    expect(requestKey({ ...request, responseSchema: undefined })).toBe(requestKey(request));
  });

  it('changes with anything the model sees', () => {
    const key = requestKey(request);
    expect(requestKey({ ...request, model: 'other' })).not.toBe(key);
    expect(requestKey({ ...request, prompt: 'p ' })).not.toBe(key);
    expect(requestKey({ ...request, seed: 2 })).not.toBe(key);
    expect(requestKey({ ...request, temperature: 0.5 })).not.toBe(key);
    expect(requestKey({ ...request, responseSchema: { type: 'object' } })).not.toBe(key);
  });
});

describe('describeRequest', () => {
  it('names the dialogue and task when traced', () => {
    expect(describeRequest({ ...request, trace: { dialogueId: 'd1', task: 'translate' } })).toBe(
      'dialogue d1 (translate)',
    );
    expect(describeRequest(request)).toBe('this request');
  });
});
