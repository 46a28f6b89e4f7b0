import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { builtInLanguagePacks } from '../../model/language-pack.ts';
import { espeakNgVoiceNames } from './espeak-ng.ts';

// the head of `espeak-ng --voices` of espeak-ng 1.51 (Debian 12), where French is listed only as fr-fr,
// fr-be and fr-ch, with `fr` in the Other Languages column
const VOICES_TABLE = `Pty Language       Age/Gender VoiceName          File                 Other Languages
 5  af              --/M      Afrikaans          gmw/af
 2  en-gb           --/M      English_(Great_Britain) gmw/en               (en 2)
 5  en-us           --/M      English_(America)  gmw/en-US            (en 3)
 5  fr-be           --/M      French_(Belgium)   roa/fr-BE            (fr 8)
 5  fr-fr           --/M      French_(France)    roa/fr               (fr 5)
`;

const folder = await mkdtemp(path.join(tmpdir(), 'duplexsynth-espeak-voices-'));
afterAll(() => rm(folder, { recursive: true, force: true }));

describe('espeak-ng voice names', () => {
  it('are the Language column, the Other Languages names and the voice files, lower-cased', async () => {
    const binary = path.join(folder, 'espeak-ng');
    await writeFile(path.join(folder, 'voices.txt'), VOICES_TABLE);
    await writeFile(binary, `#!/bin/sh\ncat "${path.join(folder, 'voices.txt')}"\n`);
    await chmod(binary, 0o755);
    const names = await espeakNgVoiceNames(binary);
    expect([...names].sort()).toEqual([
      'af',
      'en',
      'en-gb',
      'en-us',
      'fr',
      'fr-be',
      'fr-fr',
      'gmw/af',
      'gmw/en',
      'gmw/en-us',
      'roa/fr',
      'roa/fr-be',
    ]);
    // a voice name in parentheses is not an alias
    expect(names.has('belgium')).toBe(false);
  });

  it('include every espeak-ng voice the built-in packs name, on the installed espeak-ng', async () => {
    const names = await espeakNgVoiceNames();
    const voices = [...builtInLanguagePacks().values()]
      .filter((pack) => pack.offlineVoice?.engine === 'espeak-ng')
      .map((pack) => pack.offlineVoice!.voice);
    expect(voices).toContain('fr');
    for (const voice of voices) expect(names, voice).toContain(voice);
    // voice files, which -v takes too
    for (const voice of ['roa/fr', 'sit/cmn', 'fr-be']) expect(names, voice).toContain(voice);
  });
});
