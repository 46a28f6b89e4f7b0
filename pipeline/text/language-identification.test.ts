import { beforeAll, describe, expect, it, vi } from 'vitest';
import {
  countLetters,
  DEFAULT_LANGUAGE_IDENTIFICATION,
  identifyWrongLanguage,
  isIdentifiableLanguage,
  loadLanguageIdentification,
} from './language-identification.ts';

describe('loading the detector', () => {
  it('reading the default build config loads no detector; a check loads it and identifies', async () => {
    // a module graph of its own: the unit files share one, where another file may have loaded it
    vi.resetModules();
    const fresh = await import('./language-identification.ts');
    const { DEFAULT_CONFIG_FILE, loadConfigFile } = await import('../config.ts');
    const config = await loadConfigFile(DEFAULT_CONFIG_FILE);
    expect(config.llm.rewrite.backend).toBeDefined();
    expect(fresh.isLanguageIdentificationLoaded()).toBe(false);
    // a disabled check needs no detector; an enabled one names the missing load
    const disabled = { ...fresh.DEFAULT_LANGUAGE_IDENTIFICATION, enabled: false };
    expect(fresh.identifyWrongLanguage('Quand a-t-elle été construite et par qui ?', 'en', disabled)).toBeUndefined();
    expect(() => fresh.identifyWrongLanguage('Quand a-t-elle été construite et par qui ?', 'en')).toThrow(
      /not loaded: await loadLanguageIdentification\(\)/,
    );
    await Promise.all([fresh.loadLanguageIdentification(), fresh.loadLanguageIdentification()]);
    expect(fresh.isLanguageIdentificationLoaded()).toBe(true);
    expect(fresh.identifyWrongLanguage('Quand a-t-elle été construite et par qui ?', 'en')?.detected).toBe('fr');
    vi.resetModules();
  });
});

beforeAll(loadLanguageIdentification);

describe('identifyWrongLanguage', () => {
  it('finds French in an English line and English in a Spanish line', () => {
    expect(identifyWrongLanguage('Quand a-t-elle été construite et par qui ?', 'en')).toMatchObject({
      detected: 'fr',
      letters: 32,
    });
    expect(identifyWrongLanguage('When was the tower built and by whom?', 'es')?.detected).toBe('en');
  });

  it('passes lines in their language, short lines and English lines with foreign names', () => {
    expect(identifyWrongLanguage('¿Cuándo se construyó la torre Eiffel?', 'es')).toBeUndefined();
    expect(identifyWrongLanguage('Oui.', 'en')).toBeUndefined();
    expect(identifyWrongLanguage('François Mitterrand', 'en')).toBeUndefined();
    expect(identifyWrongLanguage('Who was Karl von Frisch?', 'en')).toBeUndefined();
    expect(
      identifyWrongLanguage(
        'The main characters are Meredith Grey, Alex Karev, Miranda Bailey and Richard Webber.',
        'en',
      ),
    ).toBeUndefined();
  });

  it('scales the confidence down for short lines, and can be disabled', () => {
    const long = identifyWrongLanguage(
      'Elle a été construite entre mille huit cent quatre-vingt-sept et mille huit cent quatre-vingt-neuf.',
      'en',
    );
    const short = identifyWrongLanguage('Quand a-t-elle été construite et par qui ?', 'en');
    expect(long!.confidence).toBeGreaterThan(short!.confidence);
    const disabled = { ...DEFAULT_LANGUAGE_IDENTIFICATION, enabled: false };
    expect(identifyWrongLanguage('Quand a-t-elle été construite et par qui ?', 'en', disabled)).toBeUndefined();
  });

  it('does not check a language the detector does not know', () => {
    expect(isIdentifiableLanguage('pt-BR')).toBe(true);
    expect(isIdentifiableLanguage('xx')).toBe(false);
    expect(identifyWrongLanguage('When was the tower built and by whom?', 'xx')).toBeUndefined();
  });
});

describe('countLetters', () => {
  it('counts a Devanagari consonant with its vowel sign once', () => {
    expect(countLetters('नमस्ते')).toBe(3);
    expect(countLetters('a b, c!')).toBe(3);
  });
});
