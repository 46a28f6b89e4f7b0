/**
 * The whole utterance pipeline on real engines (espeak-ng, Open JTalk), no mocks.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { Language, SpeechSegment } from '../../model/types.ts';
import { placeOnTrackInPlace, quantizeToPcm16 } from '../../audio/raw-audio.ts';
import { detectSpeechSegments, frameLevelsDbfs } from '../../audio/speech-regions.ts';
import { createEspeakNgSynthesizer, ESPEAK_NG_DEFAULT_VOICES } from './espeak-ng.ts';
import { FakeSpeechSynthesizer } from './fake-speech-synthesizer.ts';
import { createOpenJtalkSynthesizer, OPEN_JTALK_DEFAULT_VOICES } from './open-jtalk.ts';
import { SpeechSynthesisError, type SpeechSynthesizer } from './speech-synthesizer.ts';
import { loadJapaneseTokenizer } from '../../alignment/spoken-words.ts';
import { synthesizeUtterance, type SynthesizedUtterance } from './synthesize-utterance.ts';
import { assertWordTiling, mergeTouchingWords } from '../../alignment/word-timing.ts';

const SAMPLE_RATE = 16000;

const ENGLISH = [
  'Hello there, how are you today? I bought a stamp.',
  'Yes.',
  'Okay',
  'The Eiffel Tower, which was completed in 1889, is 330 metres tall; it was the tallest structure in the world until 1930.',
  'Well, I think so. But, honestly, I am not sure!',
  'Who wrote "Pride and Prejudice"?',
  'It was written by Jane Austen, and published in 1813 - a long time ago.',
  'Mm-hmm.',
  'Could you tell me more about its history, please?',
  'Sure: it started as a small village, then grew into a town, and finally, after many years, a city.',
];

const JAPANESE = [
  'こんにちは、今日はいい天気ですね。切手とコーヒーを買いました。',
  'はい。',
  'ええ',
  '2024年に東京でAIの会議がありました！',
  'エッフェル塔は、1889年に完成し、高さは330メートルです。',
  'なるほど、それは知りませんでした。',
  '「高慢と偏見」を書いたのは誰ですか？',
  'ジェーン・オースティンです。1813年に出版されました。',
  'もう少し詳しく教えてもらえますか。',
  'はい、最初は小さな村でしたが、やがて町になり、最後には都市になりました。',
];

let espeak: SpeechSynthesizer;
let openJtalk: SpeechSynthesizer;
const results: { language: Language; text: string; utterance: SynthesizedUtterance }[] = [];

beforeAll(async () => {
  espeak = await createEspeakNgSynthesizer();
  openJtalk = await createOpenJtalkSynthesizer();
  await loadJapaneseTokenizer();
  const jobs = [
    ...ENGLISH.map((text, index) => ({
      language: 'en' as const,
      text,
      synthesizer: espeak,
      voice: index % 2 === 0 ? ESPEAK_NG_DEFAULT_VOICES.user : ESPEAK_NG_DEFAULT_VOICES.system,
    })),
    ...JAPANESE.map((text, index) => ({
      language: 'ja' as const,
      text,
      synthesizer: openJtalk,
      voice: index % 2 === 0 ? OPEN_JTALK_DEFAULT_VOICES.user : OPEN_JTALK_DEFAULT_VOICES.system,
    })),
  ];
  for (const job of jobs) {
    const utterance = await synthesizeUtterance(
      job.synthesizer,
      { text: job.text, language: job.language, voice: job.voice },
      { sampleRate: SAMPLE_RATE },
    );
    results.push({ language: job.language, text: job.text, utterance });
  }
});

describe('synthesizeUtterance on real engines', () => {
  it('returns 16-bit-grid audio trimmed exactly to speech (no leading or trailing silence)', () => {
    for (const { text, utterance } of results) {
      const { audio, segments, durationCs } = utterance;
      expect(audio.length, text).toBe(durationCs * (SAMPLE_RATE / 100));
      expect(Array.from(quantizeToPcm16(audio.subarray(0, 2000))), text).toEqual(Array.from(audio.subarray(0, 2000)));
      expect(segments[0]?.start, text).toBe(0);
      expect(segments[segments.length - 1]?.end, text).toBe(durationCs);
      const levels = frameLevelsDbfs(audio, SAMPLE_RATE);
      expect(levels[0], text).toBeGreaterThanOrEqual(-50);
      expect(levels[levels.length - 1], text).toBeGreaterThanOrEqual(-50);
    }
  });

  it('returns segments that the detector finds again in the returned audio (unless merged for lack of words)', () => {
    for (const { text, utterance } of results) {
      const redetected = detectSpeechSegments(utterance.audio, SAMPLE_RATE);
      if (utterance.words.length >= redetected.length) expect(redetected, text).toEqual(utterance.segments);
      else expect(utterance.segments.length, text).toBe(utterance.words.length);
    }
  });

  it('keeps the word tiling contract on every sentence, and merging the words gives exactly the segments', () => {
    for (const { text, utterance } of results) {
      expect(() => assertWordTiling(utterance.words, utterance.segments), text).not.toThrow();
      expect(mergeTouchingWords(utterance.words), text).toEqual(utterance.segments);
      for (const word of utterance.words) {
        expect(Number.isInteger(word.start) && Number.isInteger(word.end), text).toBe(true);
        expect(word.end - word.start, text).toBeGreaterThanOrEqual(1);
      }
    }
  });

  it('shows pauses at commas and periods as separate segments', () => {
    const multiPause = results.filter(({ text }) => [ENGLISH[0], ENGLISH[3], JAPANESE[0], JAPANESE[4]].includes(text));
    for (const { text, utterance } of multiPause) expect(utterance.segments.length, text).toBeGreaterThanOrEqual(2);
  });

  it('writes English words as whitespace tokens without punctuation, spread by length', () => {
    const hello = results.find(({ text }) => text === ENGLISH[0])?.utterance as SynthesizedUtterance;
    expect(hello.wordTimingSource).toBe('spread');
    expect(hello.words.map((word) => word.word)).toEqual([
      'Hello',
      'there',
      'how',
      'are',
      'you',
      'today',
      'I',
      'bought',
      'a',
      'stamp',
    ]);
    // three segments (pauses after "there," and "today?"), with the breaks at the punctuation
    expect(hello.segments).toHaveLength(3);
    expect(
      hello.words
        .filter((word) => hello.segments.some((segment) => segment.start === word.start))
        .map((word) => word.word),
    ).toEqual(['Hello', 'how', 'I']);
  });

  it('writes Japanese morphemes without punctuation, placed at the Open JTalk mora times when counts match', () => {
    const greeting = results.find(({ text }) => text === JAPANESE[0])?.utterance as SynthesizedUtterance;
    expect(greeting.wordTimingSource).toBe('engine');
    expect(greeting.words.map((word) => word.word)).toEqual([
      'こんにちは',
      '今日',
      'は',
      'いい',
      '天気',
      'です',
      'ね',
      '切手',
      'と',
      'コーヒー',
      'を',
      '買い',
      'まし',
      'た',
    ]);
    expect(greeting.segments).toHaveLength(3);
    expect(
      greeting.words
        .filter((word) => greeting.segments.some((segment) => segment.start === word.start))
        .map((word) => word.word),
    ).toEqual(['こんにちは', '今日', '切手']);
    // numbers and Latin letters have no kuromoji reading: mora counts cannot be checked, so words are spread
    expect(results.find(({ text }) => text === JAPANESE[3])?.utterance.wordTimingSource).toBe('spread');
    expect(
      results.filter(({ language, utterance }) => language === 'ja' && utterance.wordTimingSource === 'engine').length,
    ).toBeGreaterThanOrEqual(6);
  });

  it('is frame-local on real speech: utterances placed on a silent track at centisecond offsets are detected at the same segments, shifted', () => {
    const pieces = results.slice(0, 6).map(({ utterance }) => utterance);
    let position = 37;
    const placements = pieces.map((utterance) => {
      const start = position;
      position += utterance.durationCs + 40; // 0.4 s of silence between utterances (>= minSilence)
      return start;
    });
    const track = new Float32Array((position + 50) * (SAMPLE_RATE / 100));
    const expected: SpeechSegment[] = [];
    pieces.forEach((utterance, index) => {
      placeOnTrackInPlace(track, utterance.audio, (placements[index] as number) * (SAMPLE_RATE / 100));
      for (const segment of utterance.segments)
        expected.push({
          start: segment.start + (placements[index] as number),
          end: segment.end + (placements[index] as number),
        });
    });
    expect(detectSpeechSegments(track, SAMPLE_RATE)).toEqual(expected);
  });

  it('is deterministic end to end', async () => {
    const again = await synthesizeUtterance(
      openJtalk,
      { text: JAPANESE[0] as string, language: 'ja', voice: OPEN_JTALK_DEFAULT_VOICES.user },
      { sampleRate: SAMPLE_RATE },
    );
    const first = results.find(({ text }) => text === JAPANESE[0])?.utterance as SynthesizedUtterance;
    expect(again.audio).toEqual(first.audio);
    expect(again.words).toEqual(first.words);
  });

  it('works at 48 kHz output too, and rejects an output rate that is not a multiple of 100 Hz', async () => {
    const utterance = await synthesizeUtterance(
      espeak,
      { text: 'Good morning, everyone.', language: 'en', voice: ESPEAK_NG_DEFAULT_VOICES.user },
      { sampleRate: 48000 },
    );
    expect(utterance.audio.length).toBe(utterance.durationCs * 480);
    expect(mergeTouchingWords(utterance.words)).toEqual(utterance.segments);
    await expect(
      synthesizeUtterance(
        espeak,
        { text: 'Hi', language: 'en', voice: ESPEAK_NG_DEFAULT_VOICES.user },
        { sampleRate: 22050 },
      ),
    ).rejects.toThrow(/multiple of 100/);
  });
});

describe('synthesizeUtterance with the fake engine', () => {
  it('records calls and produces segments at the fake pauses', async () => {
    const fake = new FakeSpeechSynthesizer();
    const utterance = await synthesizeUtterance(
      fake,
      { text: 'one two, three four.', language: 'en', voice: {} },
      { sampleRate: SAMPLE_RATE },
    );
    expect(fake.calls).toEqual([{ text: 'one two, three four.', language: 'en', voice: {} }]);
    // 0.1 s edge silence, "one" 0.18 s, 0.05 s gap (bridged), "two" 0.18 s, 0.3 s pause, "three" 0.30 s, 0.05 s, "four" 0.24 s
    expect(utterance.segments).toEqual([
      { start: 0, end: 41 },
      { start: 71, end: 130 },
    ]);
    expect(utterance.words.map((word) => word.word)).toEqual(['one', 'two', 'three', 'four']);
    expect(utterance.words[2]?.start).toBe(71);
  });

  it('rejects text without words with a typed error', async () => {
    const fake = new FakeSpeechSynthesizer();
    await expect(
      synthesizeUtterance(
        fake,
        { text: '1 2 3', language: 'en', voice: {} },
        { sampleRate: SAMPLE_RATE, tokenizer: { tokenize: async () => [] } },
      ),
    ).rejects.toThrow(SpeechSynthesisError);
  });
});
