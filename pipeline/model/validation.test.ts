import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { describeIssues, issuePath } from './validation.ts';

describe('describeIssues', () => {
  const schema = z.object({
    audio: z.object({ sampleRate: z.number().positive() }),
    utterances: z.array(z.object({ start: z.number() })),
  });

  it('names each field by its dotted path, array positions too', () => {
    const result = schema.safeParse({ audio: { sampleRate: -1 }, utterances: [{ start: 0 }, { start: 'x' }] });
    expect(result.success).toBe(false);
    const message = describeIssues(result.error!.issues);
    expect(message).toMatch(/^audio\.sampleRate: .+; utterances\.1\.start: .+$/);
  });

  it('labels a problem of the value itself, puts a prefix before paths, and counts what it leaves out', () => {
    expect(describeIssues(z.number().safeParse('a').error!.issues, { root: '(line)' })).toMatch(/^\(line\): /);
    expect(describeIssues(schema.safeParse({ audio: {}, utterances: [] }).error!.issues, { prefix: 'tts.en' })).toMatch(
      /^tts\.en\.audio\.sampleRate: /,
    );
    const many = z.array(z.number()).safeParse(['a', 'b', 'c']).error!.issues;
    expect(describeIssues(many, { limit: 1 })).toMatch(/^0: .+ \(and 2 more problems\)$/);
    expect(issuePath([])).toBe('');
  });
});
