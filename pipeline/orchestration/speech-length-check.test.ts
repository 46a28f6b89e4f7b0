/**
 * Which builds run the speech-length check: remote engines without a recognizer, with the configured
 * margins; not local engines, not with `quality.speechRecognition`, not with `quality.speechLength: null`.
 */
import { describe, expect, it } from 'vitest';
import { resolveConfig } from '../config.ts';
import { DEFAULT_SPEECH_LENGTH_CHECK_OPTIONS } from '../services/tts/synthesis-speech-length.ts';
import { speechLengthCheckOf } from './speech-length-check.ts';

const COSYVOICE = { backend: 'cosyvoice2', service: { urls: ['http://127.0.0.1:50000'], sampleRate: 24000 } };

function configWith(quality: Record<string, unknown>, tts: Record<string, unknown> = { en: COSYVOICE }) {
  const raw = {
    name: 'check',
    languages: ['en'],
    corpus: { path: 'corpus.json' },
    output: { directory: 'out' },
    tts,
    quality,
  };
  return resolveConfig(raw, 'check (test)', process.cwd());
}

describe('speechLengthCheckOf', () => {
  it('gives a remote engine without a recognizer the default margins', () => {
    expect(speechLengthCheckOf(configWith({}), 'en')).toEqual(DEFAULT_SPEECH_LENGTH_CHECK_OPTIONS);
  });

  it('gives the configured margins', () => {
    const config = configWith({ speechLength: { relativeMargin: 0.5 } });
    expect(speechLengthCheckOf(config, 'en')).toEqual({ ...DEFAULT_SPEECH_LENGTH_CHECK_OPTIONS, relativeMargin: 0.5 });
  });

  it('is off with a recognizer, when set to null, and for a local engine', () => {
    expect(speechLengthCheckOf(configWith({ speechRecognition: { baseUrl: 'http://127.0.0.1:8000/v1' } }), 'en')).toBe(
      undefined,
    );
    expect(speechLengthCheckOf(configWith({ speechLength: null }), 'en')).toBe(undefined);
    expect(speechLengthCheckOf(configWith({}, {}), 'en')).toBe(undefined);
  });
});
