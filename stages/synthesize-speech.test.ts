import { describe, expect, it } from 'vitest';
import { detectSpeechSegments } from '../pipeline/audio/speech-regions.ts';
import type { SynthesizedUtterance } from '../pipeline/services/tts/synthesize-utterance.ts';
import { access, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ContentCache } from '../pipeline/storage/content-cache.ts';
import { createSpeechSynthesizer } from '../pipeline/services/tts/synthesizer-registry.ts';
import { OFFLINE_SPEAKER_ROSTERS } from '../pipeline/services/tts/offline-speaker-roster.ts';
import { estimateMorae } from '../pipeline/alignment/japanese-morae.ts';
import {
  capInternalPauses,
  createSynthesisQueue,
  japanesePhraseBreaks,
  MINIMUM_JAPANESE_MORAE_PER_SECOND,
  synthesisCacheKey,
  synthesizeDialogue,
  synthesizeSpeechStage,
  type SpokenUtterance,
} from './synthesize-speech.ts';
import { FakeSpeechSynthesizer } from '../pipeline/services/tts/fake-speech-synthesizer.ts';
import { contentHash } from '../pipeline/storage/content-cache.ts';
import { samplesDigest } from '../pipeline/audio/samples-digest.ts';
import { loadTimingStatistics, shippedTimingStatisticsOf } from '../pipeline/timeline/timing-statistics.ts';
import { placementCacheKey } from './place-timeline.ts';
import type { DialogueText } from '../pipeline/model/types.ts';

/** 16 kHz tone bursts at the given centisecond spans, silence elsewhere. */
function bursts(spans: [number, number][], totalCs: number): SynthesizedUtterance {
  const audio = new Float32Array(totalCs * 160);
  for (const [start, end] of spans)
    for (let i = start * 160; i < end * 160; i += 1) audio[i] = 0.3 * Math.sin((2 * Math.PI * 220 * i) / 16000);
  return {
    audio,
    sampleRate: 16000,
    durationCs: totalCs,
    segments: spans.map(([start, end]) => ({ start, end })),
    words: spans.map(([start, end], index) => ({ start, end, word: `w${index}` })),
    wordTimingSource: 'spread',
  };
}

describe('capInternalPauses', () => {
  it('shortens only the silences longer than the cap, shifting later segments and words; the audio agrees', () => {
    const input = bursts(
      [
        [0, 50],
        [70, 120],
        [190, 260],
      ],
      260,
    ); // gaps 20 cs and 70 cs
    const capped = capInternalPauses(input, 40);
    expect(capped.segments).toEqual([
      { start: 0, end: 50 },
      { start: 70, end: 120 },
      { start: 160, end: 230 },
    ]);
    expect(capped.words.map((word) => [word.start, word.end])).toEqual([
      [0, 50],
      [70, 120],
      [160, 230],
    ]);
    expect(capped.durationCs).toBe(230);
    expect(capped.audio.length).toBe(230 * 160);
    expect(detectSpeechSegments(capped.audio, 16000)).toEqual(capped.segments);
    expect(input.audio.length).toBe(260 * 160); // input untouched
  });

  it('returns the same value when no silence exceeds the cap', () => {
    const input = bursts(
      [
        [0, 50],
        [80, 120],
      ],
      120,
    );
    expect(capInternalPauses(input, 40)).toBe(input);
  });
});

describe('implausibly slow Japanese speech', () => {
  const sentence = 'エッフェル塔は千八百八十七年から千八百八十九年にかけて建てられました。';

  it('phrase breaks go after phrase-final particles only', async () => {
    expect(await japanesePhraseBreaks(sentence)).toBe(
      'エッフェル塔は、千八百八十七年から、千八百八十九年にかけて、建てられました。',
    );
    expect(await japanesePhraseBreaks('はい、そうです。')).toBe('はい、そうです。');
  });

  it('Open JTalk stretches the sentence; the stage re-synthesizes it with breaks at a plausible rate', async () => {
    const directory = await mkdtemp(path.join(os.tmpdir(), 'duplexsynth-rate-'));
    try {
      const synthesizer = await createSpeechSynthesizer('open-jtalk');
      const roster = OFFLINE_SPEAKER_ROSTERS.ja!;
      const [spoken] = await synthesizeDialogue(
        [{ index: 0, turnNumber: 1, kind: 'answer', role: 'system', text: sentence }],
        synthesizer,
        {
          language: 'ja',
          voices: { user: roster[0]!.voice, system: roster[2]!.voice },
          sampleRate: 16000,
          detector: {},
          minimumUtteranceSeconds: 1,
          maximumInternalPauseSeconds: 0.4,
        },
        new ContentCache(directory),
        createSynthesisQueue(1),
      );
      expect(spoken!.rephrasedForSpeechRate).toBe(true);
      expect(estimateMorae(sentence) / (spoken!.durationCs / 100)).toBeGreaterThanOrEqual(
        MINIMUM_JAPANESE_MORAE_PER_SECOND,
      );
      expect(spoken!.words.map((word) => word.word).join('')).toBe(sentence.replace('。', ''));
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });
});

describe('synthesizeSpeechStage', () => {
  const text: DialogueText = {
    id: 'stage_0001',
    language: 'en',
    source: [],
    spoken: [],
    final: [
      {
        turnNumber: 1,
        question: 'Who built the Eiffel Tower and when was it finished?',
        answer: 'Gustave Eiffel built it, and it was finished in eighteen eighty-nine.',
      },
      { turnNumber: 2, question: 'How tall is it?', answer: null },
    ],
    producedBy: { rewrite: 'rules v1' },
  };

  it('declares the cache entries it synthesizes first: one per script utterance and backchannel phrase, each stored after a run; reports its progress in utterances', async () => {
    const directory = await mkdtemp(path.join(os.tmpdir(), 'duplexsynth-speech-stage-'));
    try {
      const cache = new ContentCache(directory);
      const synthesizer = new FakeSpeechSynthesizer();
      const voices = { user: { voice: 'user' }, system: { voice: 'system' } };
      const parameters = {
        synthesizer,
        queue: createSynthesisQueue(2),
        seed: 7,
        turnHoldShare: 0,
        backchannelPhrases: ['yeah'],
        settings: {
          language: 'en' as const,
          sampleRate: 16000,
          detector: {},
          minimumUtteranceSeconds: 0.5,
          maximumInternalPauseSeconds: null,
        },
        progress: {
          planned: (id: string, utterances: number) => progress.push(`planned ${id} ${utterances}`),
          spoken: (id: string) => progress.push(`spoken ${id}`),
        },
      };
      const progress: string[] = [];
      const input = { dialogueId: text.id, text, voices };
      const keys = await synthesizeSpeechStage.cacheKeys(input, parameters);
      expect(keys.map((key) => (key.keyMaterial as { text: string }).text)).toEqual([
        text.final[0]!.question,
        text.final[0]!.answer,
        text.final[1]!.question,
        'yeah',
      ]);
      expect(keys.every((key) => key.stage === 'synthesize-speech')).toBe(true);
      const speech = await synthesizeSpeechStage.run(input, parameters, { cache });
      expect(speech.spoken.map((utterance) => utterance.scriptText)).toEqual([
        text.final[0]!.question,
        text.final[0]!.answer,
        text.final[1]!.question,
      ]);
      // three script utterances and one backchannel clip: planned first, then one call per utterance spoken
      expect(progress).toEqual(['planned stage_0001 4', ...Array(4).fill('spoken stage_0001')]);
      for (const key of keys)
        await access(
          cache.entryPath(key.stage, contentHash({ stage: key.stage, keyMaterial: key.keyMaterial }), '.wav'),
        );
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });
});

describe("synthesized clips in the placement's cache key", () => {
  it('are named by their synthesis cache entry, the same on the run that synthesized them and on a run that reads them back; an edited clip is hashed', async () => {
    const directory = await mkdtemp(path.join(os.tmpdir(), 'duplexsynth-clip-digest-'));
    try {
      const script = [
        { index: 0, turnNumber: 1, kind: 'question' as const, role: 'user' as const, text: 'Who built the tower?' },
        {
          index: 1,
          turnNumber: 1,
          kind: 'answer' as const,
          role: 'system' as const,
          text: 'Gustave Eiffel, in eighteen eighty-nine.',
        },
      ];
      const settings = {
        language: 'en' as const,
        voices: { user: { voice: 'user' }, system: { voice: 'system' } },
        sampleRate: 16000,
        detector: {},
        minimumUtteranceSeconds: 0.5,
        maximumInternalPauseSeconds: null,
        fullBand: true,
      };
      const speak = () =>
        synthesizeDialogue(
          script,
          new FakeSpeechSynthesizer({ sampleRate: 24000 }),
          settings,
          new ContentCache(directory),
          createSynthesisQueue(2),
        );
      const fresh = await speak();
      const readBack = await speak();
      const statistics = await loadTimingStatistics(shippedTimingStatisticsOf('en').file);
      const keyOf = (utterances: SpokenUtterance[]) =>
        placementCacheKey(
          { dialogueId: 'd1', utterances, backchannelClips: [] },
          { seed: 1, channelOfRole: { user: 1, system: 0 }, statistics, options: {} },
          null,
        );
      for (const [index, utterance] of fresh.entries()) {
        expect(utterance.fullBand?.sampleRate).toBe(24000);
        expect(readBack[index]!.audio).not.toBe(utterance.audio);
        expect(readBack[index]!.audio).toEqual(utterance.audio);
        expect(samplesDigest(utterance.audio)).toMatch(/^stored:[0-9a-f]{64}:audio$/);
        expect(samplesDigest(readBack[index]!.audio)).toBe(samplesDigest(utterance.audio));
        expect(samplesDigest(readBack[index]!.fullBand!.audio)).toBe(samplesDigest(utterance.fullBand!.audio));
        expect(samplesDigest(utterance.fullBand!.audio)).toMatch(/:full-band$/);
      }
      expect(samplesDigest(fresh[0]!.audio)).not.toBe(samplesDigest(fresh[1]!.audio));
      expect(keyOf(readBack)).toEqual(keyOf(fresh));
      // pauses capped: a new array, hashed, so the key changes with its samples
      const capped = capInternalPauses(fresh[1]!, 10);
      expect(capped.audio).not.toBe(fresh[1]!.audio);
      expect(samplesDigest(capped.audio)).toMatch(/^[0-9a-f]{64}$/);
      expect(keyOf([fresh[0]!, { ...fresh[1]!, ...capped }])).not.toEqual(keyOf(fresh));
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });
});

describe('synthesisCacheKey: the resampler', () => {
  const synthesizer = new FakeSpeechSynthesizer();
  const settings = {
    language: 'en' as const,
    voices: { user: { voice: 'user' }, system: { voice: 'system' } },
    sampleRate: 16000,
    detector: {},
    minimumUtteranceSeconds: 0.5,
    maximumInternalPauseSeconds: null,
  };
  const keyOf = (resampleQuality?: 'best' | 'speex') =>
    synthesisCacheKey(synthesizer, 'Hello there.', 'user', {
      ...settings,
      ...(resampleQuality ? { resampleQuality } : {}),
    }).keyMaterial as Record<string, unknown>;

  it("SpeexDSP is the default and is in the key; libsamplerate 'best' keeps the key it had (no resampler field)", () => {
    expect(keyOf().resampleQuality).toBe('speex');
    expect(keyOf()).toEqual(keyOf('speex'));
    expect('resampleQuality' in keyOf('best')).toBe(false);
    expect(contentHash(keyOf('best'))).not.toBe(contentHash(keyOf()));
  });
});
