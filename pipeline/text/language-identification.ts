/**
 * Language identification of one line of text against the language it must be in, with the `eld`
 * n-gram detector (npm `eld`, its `small` database: 60 languages, ISO 639-1 codes). The confidence is
 * length-aware, so that short turns ("yes", a name) that no detector can place pass, and a line is
 * called wrong only when the detector places it clearly in another language.
 *
 * The detector's database takes about a second to load, so it is loaded only when a reply is to be
 * checked: {@link loadLanguageIdentification} (an ES module import, hence asynchronous) once before
 * the first check (pipeline/services/llm/dialogue-text.ts does it before each task's replies); the
 * settings and defaults here load nothing, so reading a build config does not load it.
 */
import { countGraphemeClusters } from '../model/grapheme-clusters.ts';
import type { Language } from '../model/types.ts';

/** Thresholds of {@link identifyWrongLanguage}; the config key `languageIdentification` of a backend. */
export interface LanguageIdentificationSettings {
  /** Check replies at all. */
  enabled: boolean;
  /** Lines with fewer letters (grapheme clusters of letters and marks) are never called wrong. */
  minimumLetters: number;
  /** Letters at which the length factor of the confidence reaches 1 (it grows linearly up to it). */
  fullConfidenceLetters: number;
  /** Relative lead of the detected language's score over the expected one's at which the lead factor reaches 1. */
  decisiveLead: number;
  /** A line is in the wrong language when the confidence is at least this (0..1). */
  minimumConfidence: number;
}

/**
 * Defaults, chosen on the demo replies and hand-written lines: 20 letters keep names and one-word
 * answers out ("François Mitterrand" has 18); at 60 letters (one spoken sentence) the length factor is
 * 1; a French question in an English reply leads English by 25 % of its score ("Quand a-t-elle été
 * construite et par qui ?": 0.84 against 0.63), an English question with a German name
 * ("Who was Karl von Frisch?") by 13 %; a confidence of 0.4 calls a line of 24 letters or more with a
 * decisive lead wrong.
 */
export const DEFAULT_LANGUAGE_IDENTIFICATION: LanguageIdentificationSettings = {
  enabled: true,
  minimumLetters: 20,
  fullConfidenceLetters: 60,
  decisiveLead: 0.25,
  minimumConfidence: 0.4,
};

/** A line placed in another language than the expected one. */
export interface WrongLanguage {
  /** ISO 639-1 code of the language the detector found. */
  detected: string;
  /** The length-aware confidence, 0..1 (see {@link identifyWrongLanguage}). */
  confidence: number;
  /** Letters counted in the line. */
  letters: number;
}

/** The loaded detector (`eld/small`) and the languages it knows (ISO 639-1). */
interface LoadedDetector {
  detect: (text: string) => { language: string; getScores: () => Record<string, number> };
  knownLanguages: ReadonlySet<string>;
}

let loaded: LoadedDetector | null = null;
let loading: Promise<void> | null = null;

/**
 * Loads the detector's database (`eld/small`), once per process; later calls return at once.
 * @returns when {@link identifyWrongLanguage} and {@link isIdentifiableLanguage} can be called
 * @throws the module's import error (eld missing from node_modules); a later call tries again
 */
export function loadLanguageIdentification(): Promise<void> {
  loading ??= import('eld/small').then(
    ({ eld }) => {
      loaded = { detect: (text) => eld.detect(text), knownLanguages: new Set(Object.values(eld.info().Languages)) };
    },
    (error: unknown) => {
      loading = null;
      throw error;
    },
  );
  return loading;
}

/** Whether the detector's database has been loaded in this process ({@link loadLanguageIdentification}). */
export function isLanguageIdentificationLoaded(): boolean {
  return loaded !== null;
}

/** @throws Error when the detector is not loaded yet */
function detector(): LoadedDetector {
  if (loaded === null)
    throw new Error('language identification is not loaded: await loadLanguageIdentification() before the first check');
  return loaded;
}

/**
 * The number of letters of a line, in grapheme clusters that hold a letter (so Devanagari or Thai
 * vowel signs count with their consonant, not on their own).
 *
 * @param text any text.
 * @returns the count.
 */
export function countLetters(text: string): number {
  return countGraphemeClusters(text, 'und');
}

/**
 * Whether the detector can identify a language at all (its primary subtag, e.g. `pt` of `pt-BR`).
 *
 * @param language a BCP 47 code.
 * @returns false for languages outside the detector's 60, whose replies are not checked.
 * @throws Error when {@link loadLanguageIdentification} has not finished
 */
export function isIdentifiableLanguage(language: Language): boolean {
  return detector().knownLanguages.has(primarySubtag(language));
}

/**
 * Identifies the language of a line and says whether it is clearly not the expected one.
 *
 * The confidence is `min(1, lead / decisiveLead) × min(1, letters / fullConfidenceLetters)` with
 * `lead = (s_detected − s_expected) / s_detected`, where `s` are the detector's scores (0 for a
 * language it does not list): the relative lead of the detected language over the expected one,
 * scaled down for short lines.
 *
 * @param text the line.
 * @param expected the language it must be in.
 * @param settings thresholds; {@link DEFAULT_LANGUAGE_IDENTIFICATION} by default.
 * @returns the wrong language, or undefined when the line is in the expected language, too short,
 *   not identifiable (the detector finds nothing, or does not know the expected language), or the
 *   check is disabled.
 * @throws Error when the check is enabled and {@link loadLanguageIdentification} has not finished
 */
export function identifyWrongLanguage(
  text: string,
  expected: Language,
  settings: LanguageIdentificationSettings = DEFAULT_LANGUAGE_IDENTIFICATION,
): WrongLanguage | undefined {
  if (!settings.enabled) return undefined;
  const { detect, knownLanguages } = detector();
  const expectedCode = primarySubtag(expected);
  if (!knownLanguages.has(expectedCode)) return undefined;
  const words = withoutNames(text);
  const letters = countLetters(words);
  if (letters < settings.minimumLetters) return undefined;
  const result = detect(words);
  const detected = result.language;
  if (detected === '' || detected === expectedCode) return undefined;
  const scores = result.getScores();
  const detectedScore = scores[detected] ?? 0;
  if (detectedScore <= 0) return undefined;
  const expectedScore = scores[expectedCode] ?? 0;
  const lengthFactor = Math.min(1, letters / settings.fullConfidenceLetters);
  const lead = Math.max(0, (detectedScore - expectedScore) / detectedScore);
  const confidence = Math.min(1, lead / settings.decisiveLead) * lengthFactor;
  if (confidence < settings.minimumConfidence) return undefined;
  return { detected, confidence: Math.round(confidence * 100) / 100, letters };
}

/**
 * The line without the words that look like names: capitalised words (`Meredith`, `DiMartino`, `ATP`)
 * that do not open a sentence, and quoted titles. Names and titles carry the n-grams of their own
 * language, so a list of names in an English answer would otherwise read as Tagalog or Spanish.
 */
function withoutNames(text: string): string {
  const unquoted = text.replace(/["“”«»„][^"“”«»„]*["“”«»„]/gu, ' ');
  const kept: string[] = [];
  let sentenceStart = true;
  for (const word of unquoted.split(/\s+/u)) {
    if (word === '') continue;
    const isName = !sentenceStart && /^[^\p{L}]*\p{Lu}/u.test(word);
    if (!isName) kept.push(word);
    sentenceStart = /[.!?:;]["”»]?$/u.test(word);
  }
  return kept.join(' ');
}

function primarySubtag(language: Language): string {
  return language.toLowerCase().split(/[-_]/)[0] ?? language;
}
