/**
 * The build configuration's sections about speech: `tts` (the speech engine of each language, typed per
 * backend so that each remote backend's service settings are checked and documented) and `synthesis`
 * (re-synthesis of too-short utterances, pause shortening, resampling). Every default is written here
 * once, except the engine of a language the config names none for: its language pack's offline voice
 * (config-resolve.ts).
 */
import { z } from 'zod';
import { languageCodeSchema } from './model/language-code.ts';
import { REMOTE_SPEECH_ENGINE_SETTINGS_SCHEMAS } from './services/tts/synthesizer-registry.ts';

const voiceSettings = z.record(
  z.string(),
  z.union([z.string(), z.number()]).describe('One engine-specific voice setting.'),
);

const voicesSchema = z
  .object({
    user: voiceSettings
      .describe("Voice settings of the user's speaker identity (engine-specific keys).")
      .meta({ examples: [{ voice: 'en-us+m3', pitch: 40, speed: 165 }] }),
    system: voiceSettings
      .describe("Voice settings of the system's speaker identity (engine-specific keys).")
      .meta({ examples: [{ voice: 'en-us+f3', pitch: 60, speed: 160 }] }),
  })
  .strict()
  .optional()
  .describe("Voice settings of the two speaker identities; unset = the engine's default voices.");

/** `tts.<language>.speakerPrompts`: the voice prompt pool of a remote backend. */
const speakerPromptsSchema = z
  .object({
    manifest: z
      .string()
      .describe('Speaker prompt pool manifest (duplexsynth prompts), relative to the config file.')
      .meta({ examples: ['prompts/en/speaker-prompts.jsonl'] }),
    mode: z
      .enum(['zero-shot', 'cross-lingual'])
      .default('zero-shot')
      .describe('zero-shot: the prompt transcript is sent with the prompt; cross-lingual: the prompt audio only.'),
    durationTolerance: z
      .number()
      .min(0)
      .max(1)
      .default(0.05)
      .describe(
        "How far a clip's WAV may last from its manifest's durationSeconds, as a fraction (checked before any request).",
      ),
  })
  .strict()
  .optional()
  .describe('Voice prompts of a remote backend: a speaker prompt pool (corpora/speaker-prompts.ts).');

/** An offline engine: only voices. */
function offlineBackend<Name extends 'espeak-ng' | 'open-jtalk'>(name: Name, meaning: string) {
  return z
    .strictObject(
      { backend: z.literal(name).describe(meaning), voices: voicesSchema },
      {
        error: (issue) =>
          issue.code === 'unrecognized_keys' && issue.keys.some((key) => key === 'service' || key === 'speakerPrompts')
            ? `service and speakerPrompts are for remote backends, not ${name}`
            : undefined,
      },
    )
    .describe(meaning);
}

/** A remote engine: voices, its service settings and a speaker prompt pool. */
function remoteBackend<Name extends keyof typeof REMOTE_SPEECH_ENGINE_SETTINGS_SCHEMAS>(name: Name, meaning: string) {
  return z
    .object({
      backend: z.literal(name).describe(meaning),
      voices: voicesSchema,
      service: REMOTE_SPEECH_ENGINE_SETTINGS_SCHEMAS[name]
        .optional()
        .describe(`Service settings of ${name} (urls, sample rate, retries, checks); a build needs at least urls.`),
      speakerPrompts: speakerPromptsSchema,
    })
    .strict()
    .describe(meaning);
}

/** `tts.<language>`: one speech engine, discriminated by `backend`. */
export const ttsLanguageSchema = z
  .discriminatedUnion('backend', [
    offlineBackend('espeak-ng', 'espeak-ng: the offline formant synthesizer (npm run setup installs it).'),
    offlineBackend('open-jtalk', 'open-jtalk: the offline Japanese HMM synthesizer (npm run setup installs it).'),
    remoteBackend('cosyvoice2', 'cosyvoice2: CosyVoice2 servers behind the FastAPI of the CosyVoice repository.'),
    remoteBackend('cosyvoice2-triton', 'cosyvoice2-triton: CosyVoice2 on Triton Inference Server (KServe v2).'),
    remoteBackend('openai-speech', 'openai-speech: a server of the OpenAI /v1/audio/speech protocol.'),
  ])
  .describe('Speech engine of this language code, by backend.');

/** The speech engine of one language in a resolved config: service settings as the file wrote them. */
export interface ResolvedTtsLanguage {
  backend: 'espeak-ng' | 'open-jtalk' | 'cosyvoice2' | 'cosyvoice2-triton' | 'openai-speech';
  voices?: { user: Record<string, string | number>; system: Record<string, string | number> };
  /** The service settings as written (the engine applies their defaults when it is created). */
  service?: Record<string, unknown>;
  speakerPrompts?: { manifest: string; mode: 'zero-shot' | 'cross-lingual'; durationTolerance: number };
}

/** `tts`: the speech engine per language code. */
export const ttsSchema = z
  .record(languageCodeSchema, ttsLanguageSchema)
  .default({})
  .describe(
    "Speech engine per language code; a language not listed uses its language pack's offline voice (Open JTalk for Japanese, espeak-ng otherwise).",
  );

/** `synthesis`: what happens to synthesized utterances before they are placed. */
export const synthesisSchema = z
  .object({
    // An IPU of <= 0.8 s is labelled BC (docs/events.md rule 2); 1.0 s leaves a margin.
    minimumUtteranceSeconds: z
      .number()
      .positive()
      .default(1.0)
      .describe(
        'A question or answer whose speech lasts at most this long, seconds, is synthesized again with padded phrasing (an IPU <= 0.8 s is a BC).',
      ),
    // 0.4 s stays below the 0.5 s IPU rule (docs/events.md rule 1) with a margin for the detector, and
    // above the median SHORTPAUSE of real calls (0.17 s en, 0.33 s ja; pipeline/timeline/defaults).
    maximumInternalPauseSeconds: z
      .number()
      .positive()
      .nullable()
      .default(0.4)
      .describe(
        'Silences inside one synthesized utterance longer than this, seconds, are shortened to it (null: kept); below the 0.5 s IPU rule.',
      ),
    concurrency: z
      .number()
      .int()
      .positive()
      .default(2)
      .describe('Parallel TTS processes (utterances synthesized at once).'),
    // speex: SpeexDSP quality 7, about 3000 s of audio per CPU second at 24 -> 16 kHz, in-band error
    // below -110 dB on tones, written samples within two 16-bit steps of 'best'. 'best' (libsamplerate's
    // best sinc filter) costs about 100 times more (35 s of audio per CPU second) and bounds a build
    // against fast TTS servers to one core; its cache entries keep their keys.
    resampleQuality: z
      .enum(['best', 'medium', 'fastest', 'speex'])
      .default('speex')
      .describe(
        "Resampler from the engine's rate to audio.sampleRate: speex (SpeexDSP quality 7) or libsamplerate's sinc converters best, medium, fastest.",
      ),
    // With 'best' and both cores of a 2-core machine free, 2 threads resample 1.7 x as much audio per
    // second as the build's thread alone; no gain when the other core is busy.
    resampleThreads: z
      .number()
      .int()
      .nonnegative()
      .max(64)
      .default(0)
      .describe("Worker threads that resample; 0 = the build's thread. The samples are the same."),
  })
  .strict()
  .prefault({})
  .describe('Synthesis of each utterance: too-short utterances, long internal pauses, resampling.');
