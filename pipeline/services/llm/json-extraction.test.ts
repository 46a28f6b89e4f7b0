import { describe, expect, it } from 'vitest';
import { extractJsonObject } from './json-extraction.ts';

const value = { turns: [{ question: 'q', answer: 'a' }] };

describe('extractJsonObject', () => {
  it('takes a plain JSON reply as a whole', () => {
    expect(extractJsonObject(`  ${JSON.stringify(value)}\n`)).toEqual({ found: true, value, source: 'whole' });
  });

  it('takes the JSON from a markdown fence', () => {
    const reply = `Here you go:\n\`\`\`json\n${JSON.stringify(value, null, 2)}\n\`\`\`\nHope this helps!`;
    expect(extractJsonObject(reply)).toEqual({ found: true, value, source: 'fenced' });
  });

  it('takes the last fenced block that parses', () => {
    const reply = '```json\n{"turns": []}\n```\nCorrected:\n```\n' + JSON.stringify(value) + '\n```';
    expect(extractJsonObject(reply)).toMatchObject({ found: true, value });
  });

  it('skips a stray prefix without a fence', () => {
    expect(extractJsonObject(`Sure! ${JSON.stringify(value)}`)).toEqual({ found: true, value, source: 'balanced' });
  });

  it('takes the last balanced object when there are several', () => {
    const reply = `Draft: {"turns": []} Final: ${JSON.stringify(value)} done.`;
    expect(extractJsonObject(reply)).toEqual({ found: true, value, source: 'balanced' });
  });

  it('is not fooled by braces and quotes inside strings', () => {
    const tricky = { turns: [{ question: 'What is {this} "thing" }?', answer: 'A brace: { and \\ backslash' }] };
    expect(extractJsonObject(`Result → ${JSON.stringify(tricky)} (end)`)).toEqual({
      found: true,
      value: tricky,
      source: 'balanced',
    });
  });

  it('recovers after an unbalanced stray brace in the prose', () => {
    expect(extractJsonObject(`Oops { here is it: ${JSON.stringify(value)}`)).toMatchObject({ found: true, value });
  });

  it('reports a reply without an object', () => {
    expect(extractJsonObject('I cannot help with that.')).toEqual({
      found: false,
      reason: 'the reply contains no parseable JSON object',
    });
    expect(extractJsonObject('')).toEqual({ found: false, reason: 'the reply is empty' });
    expect(extractJsonObject('{"turns": [')).toMatchObject({ found: false });
    expect(extractJsonObject('[1, 2]')).toMatchObject({ found: false });
  });
});
