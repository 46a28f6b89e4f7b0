/**
 * Real engines (espeak-ng, Open JTalk), no mocks. They must be installed (`npm run setup`).
 */
import { describe, expect, it } from 'vitest';
import { createEspeakNgSynthesizer, ESPEAK_NG_DEFAULT_VOICES } from './espeak-ng.ts';
import { createOpenJtalkSynthesizer, OPEN_JTALK_DEFAULT_VOICES, parseOpenJtalkTrace } from './open-jtalk.ts';
import { moraeFromOpenJtalkPhonemes } from '../../alignment/japanese-morae.ts';
import { SpeechSynthesisError, type SynthesisOutput } from './speech-synthesizer.ts';
import { DEFAULT_VOICES, createSpeechSynthesizer } from './synthesizer-registry.ts';

function samplesOf(output: SynthesisOutput): Float32Array {
  return output.audio.channels[0] as Float32Array;
}

/**
 * Median fundamental frequency (Hz) over loud 40 ms frames, by the autocorrelation peak between 60 and
 * 400 Hz. Crude, but enough to tell two voice settings apart.
 */
function medianPitch(samples: Float32Array, sampleRate: number): number {
  const frame = Math.round(0.04 * sampleRate);
  const shortestLag = Math.floor(sampleRate / 400);
  const longestLag = Math.ceil(sampleRate / 60);
  const pitches: number[] = [];
  for (let start = 0; start + frame + longestLag < samples.length; start += frame) {
    let energy = 0;
    for (let index = start; index < start + frame; index++) energy += (samples[index] as number) ** 2;
    if (energy / frame < 1e-3) continue;
    let bestLag = 0;
    let best = 0;
    for (let lag = shortestLag; lag <= longestLag; lag++) {
      let sum = 0;
      for (let index = start; index < start + frame; index++)
        sum += (samples[index] as number) * (samples[index + lag] as number);
      if (sum > best) [best, bestLag] = [sum, lag];
    }
    if (bestLag > 0 && best > 0.3 * energy) pitches.push(sampleRate / bestLag);
  }
  pitches.sort((a, b) => a - b);
  return pitches[Math.floor(pitches.length / 2)] ?? 0;
}

async function rejection(promise: Promise<unknown>): Promise<SpeechSynthesisError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(SpeechSynthesisError);
  return error as SpeechSynthesisError;
}

describe('espeak-ng', () => {
  it('reports its version, and is deterministic: same input -> identical samples', async () => {
    const engine = await createEspeakNgSynthesizer();
    expect(engine.version).toMatch(/^espeak-ng \d+\.\d+/);
    const request = {
      text: 'Hello there, how are you today?',
      language: 'en' as const,
      voice: ESPEAK_NG_DEFAULT_VOICES.user,
    };
    const first = await engine.synthesize(request);
    const second = await engine.synthesize(request);
    expect(first.audio.sampleRate).toBe(22050);
    expect(first.audio.channels).toHaveLength(1);
    expect(samplesOf(first).length).toBeGreaterThan(22050);
    expect(samplesOf(second)).toEqual(samplesOf(first));
    expect(first.engineTimings).toBeUndefined();
  });

  it('gives the user and the system different voices (system higher)', async () => {
    const engine = await createEspeakNgSynthesizer();
    const text = 'The museum opens at nine in the morning.';
    const user = await engine.synthesize({ text, language: 'en', voice: ESPEAK_NG_DEFAULT_VOICES.user });
    const system = await engine.synthesize({ text, language: 'en', voice: ESPEAK_NG_DEFAULT_VOICES.system });
    expect(samplesOf(user)).not.toEqual(samplesOf(system));
    expect(medianPitch(samplesOf(system), 22050)).toBeGreaterThan(medianPitch(samplesOf(user), 22050) * 1.15);
  });

  it('speaks text that starts with a dash (text goes through standard input, not the command line)', async () => {
    const engine = await createEspeakNgSynthesizer();
    const output = await engine.synthesize({
      text: '-v nonsense --stdout and more words',
      language: 'en',
      voice: ESPEAK_NG_DEFAULT_VOICES.user,
    });
    expect(samplesOf(output).length).toBeGreaterThan(22050);
  });

  it('rejects a missing binary with the setup hint, and bad voices, languages and empty text with typed errors', async () => {
    const missing = await rejection(createEspeakNgSynthesizer({ binary: 'espeak-ng-not-installed-here' }));
    expect(missing.failure).toBe('missing-binary');
    expect(missing.engine).toBe('espeak-ng');
    expect(missing.message).toContain('npm run setup');
    expect(missing.message).toContain('scripts/setup-system.sh');

    const engine = await createEspeakNgSynthesizer();
    const badVoice = await rejection(
      engine.synthesize({ text: 'Hello', language: 'en', voice: { voice: '-x', pitch: 500, speed: 165 } }),
    );
    expect(badVoice.failure).toBe('invalid-voice');
    expect(badVoice.message).toContain('"Hello"');
    const unknownVoice = await rejection(
      engine.synthesize({
        text: 'Hello world',
        language: 'en',
        voice: { voice: 'xx-nosuchvoice', pitch: 50, speed: 165 },
      }),
    );
    expect(unknownVoice.failure).toBe('non-zero-exit');
    expect(unknownVoice.message).toMatch(/voice does not exist/);
    expect(
      (await rejection(engine.synthesize({ text: 'こんにちは', language: 'ja', voice: ESPEAK_NG_DEFAULT_VOICES.user })))
        .failure,
    ).toBe('unsupported-language');
    expect(
      (await rejection(engine.synthesize({ text: ' \n ', language: 'en', voice: ESPEAK_NG_DEFAULT_VOICES.user })))
        .failure,
    ).toBe('empty-text');
  });
});

describe('Open JTalk', () => {
  it('reports its version with the voice hash, and is deterministic with a phoneme trace that covers the audio', async () => {
    const engine = await createOpenJtalkSynthesizer();
    expect(engine.version).toMatch(
      /^open_jtalk \d+\.\d+; hts_engine \S+; voice nitech_jp_atr503_m001\.htsvoice sha256:[0-9a-f]{12}; dictionary naist-jdic$/,
    );
    const request = {
      text: '切手とコーヒーを買いました。',
      language: 'ja' as const,
      voice: OPEN_JTALK_DEFAULT_VOICES.user,
    };
    const first = await engine.synthesize(request);
    const second = await engine.synthesize(request);
    expect(first.audio.sampleRate).toBe(48000);
    expect(samplesOf(second)).toEqual(samplesOf(first));
    expect(second.engineTimings).toEqual(first.engineTimings);
    const timings = first.engineTimings ?? [];
    expect(timings[0]?.label).toBe('sil');
    expect(timings[timings.length - 1]?.label).toBe('sil');
    expect(timings[timings.length - 1]?.end).toBeCloseTo(samplesOf(first).length / 48000, 2);
    // キッテ(3) ト(1) コーヒー(4) ヲ(1) カイ(2) マシ(2) タ(1) = 14 morae
    expect(moraeFromOpenJtalkPhonemes(timings)).toHaveLength(14);
  });

  it('gives the user and the system different voices (system higher), and speaks a line break like a space', async () => {
    const engine = await createOpenJtalkSynthesizer();
    const text = '博物館は朝九時に開きます。';
    const user = await engine.synthesize({ text, language: 'ja', voice: OPEN_JTALK_DEFAULT_VOICES.user });
    const system = await engine.synthesize({ text, language: 'ja', voice: OPEN_JTALK_DEFAULT_VOICES.system });
    expect(samplesOf(user)).not.toEqual(samplesOf(system));
    expect(medianPitch(samplesOf(system), 48000)).toBeGreaterThan(medianPitch(samplesOf(user), 48000) * 1.15);
    // Open JTalk itself speaks only the first line of its input; the backend collapses whitespace.
    const oneLine = await engine.synthesize({
      text: '今日は いい天気です。',
      language: 'ja',
      voice: OPEN_JTALK_DEFAULT_VOICES.user,
    });
    const twoLines = await engine.synthesize({
      text: '今日は\nいい天気です。',
      language: 'ja',
      voice: OPEN_JTALK_DEFAULT_VOICES.user,
    });
    expect(samplesOf(twoLines)).toEqual(samplesOf(oneLine));
  });

  it('rejects missing installation parts with the setup hint, and text without phonemes as a non-zero exit', async () => {
    const missingBinary = await rejection(createOpenJtalkSynthesizer({ binary: 'open_jtalk_not_installed_here' }));
    expect(missingBinary.failure).toBe('missing-binary');
    expect(missingBinary.message).toContain('npm run setup');
    const missingVoice = await rejection(createOpenJtalkSynthesizer({ voicePath: '/nonexistent/voice.htsvoice' }));
    expect(missingVoice.failure).toBe('missing-binary');
    expect(missingVoice.message).toContain('/nonexistent/voice.htsvoice');

    const engine = await createOpenJtalkSynthesizer();
    const punctuationOnly = await rejection(
      engine.synthesize({ text: '。', language: 'ja', voice: OPEN_JTALK_DEFAULT_VOICES.user }),
    );
    expect(punctuationOnly.failure).toBe('non-zero-exit');
    expect(punctuationOnly.message).toMatch(/open-jtalk: synthesis failed for "。"/);
    expect(
      (await rejection(engine.synthesize({ text: 'Hello', language: 'en', voice: OPEN_JTALK_DEFAULT_VOICES.user })))
        .failure,
    ).toBe('unsupported-language');
    expect(
      (await rejection(engine.synthesize({ text: 'はい', language: 'ja', voice: { halfToneShift: 0 } }))).failure,
    ).toBe('invalid-voice');
  });
});

describe('parseOpenJtalkTrace', () => {
  it('reads phonemes and times (100 ns units) from the [Output label] section', () => {
    const trace = [
      '[Text analysis result]',
      'は,助詞,係助詞,*,*,*,*,は,ハ,ワ,0/1,*,0',
      '',
      '[Output label]',
      '0 3100000 xx^xx-sil+w=a/A:xx+xx+xx/B:xx',
      '3100000 4350000 xx^sil-w+a=sil/A:-4+1+5/B:xx',
      '4350000 5150000 sil^w-a+sil=xx/A:-4+1+5/B:xx',
      '5150000 9000000 w^a-sil+xx=xx/A:xx+xx+xx/B:xx',
      '',
      '[Global parameter]',
    ].join('\n');
    expect(parseOpenJtalkTrace(trace)).toEqual([
      { label: 'sil', start: 0, end: 0.31 },
      { label: 'w', start: 0.31, end: 0.435 },
      { label: 'a', start: 0.435, end: 0.515 },
      { label: 'sil', start: 0.515, end: 0.9 },
    ]);
    expect(() => parseOpenJtalkTrace('[Text analysis result]\n')).toThrow(SyntaxError);
  });
});

describe('synthesizer registry', () => {
  it('creates each default engine by name and has distinct user/system voices per language', async () => {
    for (const language of ['en', 'ja'] as const) {
      const { engine, voices } = DEFAULT_VOICES[language]!;
      const synthesizer = await createSpeechSynthesizer(engine);
      expect(synthesizer.id).toBe(engine);
      expect(synthesizer.languages).toContain(language);
      expect(voices.user).not.toEqual(voices.system);
    }
  });
});
