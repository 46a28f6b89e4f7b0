import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { placementCodeFiles } from './place-timeline-cache-key.ts';

const stages = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(stages, '..');

describe("the placement cache key's code", () => {
  it('hashes every placement and synthesis stage module, and none of their tests', () => {
    const files = placementCodeFiles().map((file) => path.relative(root, file).split(path.sep).join('/'));
    const stageModules = readdirSync(stages)
      .filter((name) => /^(place-timeline|synthesize-speech)\b.*\.ts$/.test(name) && !name.endsWith('.test.ts'))
      .sort()
      .map((name) => `stages/${name}`);
    expect(stageModules).toContain('stages/place-timeline.ts');
    expect(stageModules).toContain('stages/place-timeline-compose.ts');
    expect(stageModules).toContain('stages/synthesize-speech-cache.ts');
    expect(files.filter((file) => file.startsWith('stages/'))).toEqual(stageModules);
    expect(files).toContain('pipeline/timeline/place-dialogue.ts');
    expect(files).toContain('pipeline/audio/master-mix.ts');
    expect(files.some((file) => /\.(test|bench)\.ts$/.test(file))).toBe(false);
  });
});
