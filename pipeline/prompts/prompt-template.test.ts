import { describe, expect, it } from 'vitest';
import { fillPromptTemplate, loadPromptTemplate, parsePromptTemplate } from './prompt-template.ts';

const text =
  '---\nname: demo\nversion: 2\ndescription: test\n---\n<!-- system -->\nYou are {{role}}.\n<!-- prompt -->\nSay {{what}} to {{role}}.\n';

describe('prompt templates', () => {
  it('parses front matter, sections and placeholders', () => {
    const template = parsePromptTemplate('demo.v2', text);
    expect(template).toMatchObject({
      id: 'demo.v2',
      name: 'demo',
      version: 2,
      system: 'You are {{role}}.',
      prompt: 'Say {{what}} to {{role}}.',
      placeholders: ['role', 'what'],
    });
    expect(template.sha256).toMatch(/^[0-9a-f]{64}$/);
  });

  it('fills placeholders once, literally', () => {
    const template = parsePromptTemplate('demo.v2', text);
    expect(fillPromptTemplate(template, { role: 'a {{what}} bot', what: '$& hello' })).toEqual({
      system: 'You are a {{what}} bot.',
      prompt: 'Say $& hello to a {{what}} bot.',
    });
  });

  it('rejects missing and unknown values', () => {
    const template = parsePromptTemplate('demo.v2', text);
    expect(() => fillPromptTemplate(template, { role: 'x' })).toThrow('prompt template demo.v2: no value for {{what}}');
    expect(() => fillPromptTemplate(template, { role: 'x', what: 'y', whom: 'z' })).toThrow(
      'has no placeholder {{whom}}',
    );
  });

  it('rejects malformed files', () => {
    expect(() => parsePromptTemplate('demo.v1', text)).toThrow('front matter declares demo.v2');
    expect(() => parsePromptTemplate('demo.v2', 'no front matter')).toThrow(/front matter/);
    expect(() => parsePromptTemplate('demo.v2', text.replace('<!-- prompt -->', ''))).toThrow(/section/);
  });

  it('loads the shipped templates', () => {
    for (const id of ['rewrite-spoken.v1', 'translate.v1']) {
      const template = loadPromptTemplate(id);
      expect(template.placeholders).toEqual(['dialogueJson', 'turnCount']);
      expect(template.system).toContain('{"turns":[{"question":"...","answer":"..."}]}');
    }
    expect(() => loadPromptTemplate('absent.v1')).toThrow(/cannot read/);
  });
});
