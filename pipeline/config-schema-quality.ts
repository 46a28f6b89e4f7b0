/**
 * The build configuration's `quality` section: scoring (DNSMOS, COMETKiwi, signal checks) and the
 * dev/test split after rendering. On by default; `quality: {enabled: false}` (or `--no-score`) skips
 * both. Every default is written here once.
 */
import { z } from 'zod';
import { DEFAULT_SPLIT_UNIT, SPLIT_UNITS } from './model/split-report.ts';
import {
  DEFAULT_TRANSCRIPTION_MODEL,
  DEFAULT_TRANSCRIPTION_TIMEOUT_MILLISECONDS,
} from './services/asr/openai-transcription.ts';
import { DEFAULT_MAXIMUM_WORD_ERROR_RATE } from './services/tts/synthesis-recognition.ts';
import { DEFAULT_SPEECH_LENGTH_CHECK_OPTIONS } from './services/tts/synthesis-speech-length.ts';

// Scores do not depend on these settings (to float32 rounding of the model outputs), except
// `hopSeconds` (pipeline/services/mos/dnsmos.ts, dnsmos-windows.ts).
const dnsmosSchema = z
  .object({
    executionProvider: z
      .enum(['cpu', 'cuda', 'auto'])
      .default('cpu')
      .describe(
        "onnxruntime execution provider: cpu; cuda (needs onnxruntime-node's CUDA binaries and a GPU); auto tries CUDA, then the CPU.",
      ),
    intraOpThreads: z
      .number()
      .int()
      .positive()
      .nullable()
      .default(null)
      .describe('onnxruntime intra-op threads; null = one per core.'),
    batchWindows: z.number().int().positive().default(4).describe('DNSMOS windows per model run.'),
    concurrentDialogues: z
      .number()
      .int()
      .positive()
      .default(2)
      .describe("Dialogues scored at once (their signal checks and loudness overlap the next one's model runs)."),
    hopSeconds: z
      .number()
      .min(1 / 16000)
      .max(3600)
      .default(1)
      .describe(
        'Seconds between the 9.01 s windows: 1 as the reference (DNS-Challenge dnsmos_local.py, the published numbers); 9.01 = non-overlapping, about 1/8 of the model runs on dialogues of one to three minutes.',
      ),
  })
  .strict()
  .prefault({})
  .describe('How DNSMOS runs (pipeline/services/mos/dnsmos.ts).');

const cometKiwiSchema = z
  .object({
    httpUrl: z
      .string()
      .url()
      .nullable()
      .default(null)
      .describe('URL of an HTTP COMETKiwi scorer; null = run the command.'),
    command: z
      .string()
      .default('comet-score')
      .describe('The comet-score command of unbabel-comet, run when httpUrl is null.'),
    gpus: z
      .number()
      .int()
      .nonnegative()
      .nullable()
      .default(null)
      .describe("GPUs given to comet-score (--gpus); null = comet-score's default."),
    batchSize: z
      .number()
      .int()
      .positive()
      .nullable()
      .default(null)
      .describe("Batch size given to comet-score (--batch_size); null = comet-score's default."),
  })
  .strict()
  .prefault({})
  .describe(
    'COMETKiwi for translated datasets: an HTTP scorer or the comet-score command (docs/quality-and-splits.md).',
  );

// What a recognizer hears compared with the text of every freshly synthesized utterance of a remote
// TTS engine (pipeline/services/tts/synthesis-recognition.ts); a clip from the synthesis cache was
// accepted when it was made and is not transcribed again, so the setting is not part of its cache key.
const speechRecognitionSchema = z
  .object({
    baseUrl: z
      .url()
      .describe(
        'OpenAI-compatible transcription service, base URL including the API prefix (POST <baseUrl>/audio/transcriptions).',
      )
      .meta({ examples: ['http://127.0.0.1:8000/v1'] }),
    model: z
      .string()
      .min(1)
      .default(DEFAULT_TRANSCRIPTION_MODEL)
      .describe("Model name sent with each clip (OpenAI's whisper-1; local servers take their own names)."),
    apiKeyVariable: z
      .string()
      .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'an environment variable name (the key itself never goes into settings)')
      .optional()
      .describe('Environment variable with the API key; unset = no Authorization header.'),
    timeoutSeconds: z
      .number()
      .positive()
      .default(DEFAULT_TRANSCRIPTION_TIMEOUT_MILLISECONDS / 1000)
      .describe('Client-side timeout of one transcription request, seconds.'),
    maximumErrorRate: z
      .number()
      .nonnegative()
      .default(DEFAULT_MAXIMUM_WORD_ERROR_RATE)
      .describe(
        'Highest accepted word error rate of an utterance (character error rate for languages written without spaces); above it the utterance is synthesized again, then its dialogue quarantined.',
      ),
  })
  .strict()
  .describe(
    'Transcribe every utterance a remote TTS engine synthesizes and resynthesize the misspoken ones (a spoken language tag, a leaked prompt transcript); the language of each clip is sent to the service. Clips from the synthesis cache are not transcribed again.',
  );

// Without a recognizer, how long the speech of every freshly synthesized utterance of a remote TTS
// engine runs against what its text takes at the voice's tempo (pipeline/services/tts/synthesis-speech-length.ts,
// where the defaults are measured); like the recognition check, not part of the synthesis cache key.
const speechLengthSchema = z
  .object({
    relativeMargin: z
      .number()
      .nonnegative()
      .default(DEFAULT_SPEECH_LENGTH_CHECK_OPTIONS.relativeMargin)
      .describe(
        "Share of the text's expected seconds (at the voice prompt's tempo; at the language's typical rate for a voice without a prompt transcript) the speech may run over.",
      ),
    pauseSeconds: z
      .number()
      .nonnegative()
      .default(DEFAULT_SPEECH_LENGTH_CHECK_OPTIONS.pauseSeconds)
      .describe('Seconds each pausing punctuation mark inside the text may add.'),
    digitSeconds: z
      .number()
      .nonnegative()
      .default(DEFAULT_SPEECH_LENGTH_CHECK_OPTIONS.digitSeconds)
      .describe('Seconds each digit of the text may add (numbers read out run longer than their letters predict).'),
    marginSeconds: z
      .number()
      .nonnegative()
      .default(DEFAULT_SPEECH_LENGTH_CHECK_OPTIONS.marginSeconds)
      .describe('Fixed seconds the speech may run over (short utterances vary most).'),
  })
  .strict()
  .describe(
    "When quality.speechRecognition is null: speech of a remote TTS engine's utterance longer than its text takes at the voice's tempo, by more than the margins, is speech before its first or after its last word (a leaked voice prompt); the utterance is synthesized once more, then its dialogue quarantined. Clips from the synthesis cache are not checked again.",
  );

/** `quality`: scoring and the dev/test split, after rendering. */
export const qualitySchema = z
  .object({
    enabled: z
      .boolean()
      .default(true)
      .describe('Score and split at the end of the build; false (or --no-score) writes the datasets only.'),
    dnsmosModelDirectory: z
      .string()
      .nullable()
      .default(null)
      .describe(
        'DNSMOS model folder; null = DUPLEXSYNTH_DNSMOS_DIR, then ../shared/models/dnsmos, the user cache, a download.',
      ),
    dnsmos: dnsmosSchema,
    testHours: z
      .number()
      .positive()
      .default(1)
      .describe('Target test duration per language, hours (the benchmark uses about one hour).'),
    testSmall: z
      .number()
      .int()
      .positive()
      .nullable()
      .default(null)
      .describe('Size of the optional test_small split (the best N dialogues of test); null = none.'),
    // speaker-group keeps dev speaker-disjoint and non-empty; dialogue is the paper's method.
    splitUnit: z
      .enum(SPLIT_UNITS)
      .default(DEFAULT_SPLIT_UNIT)
      .describe(
        'speaker-group: test takes whole groups of dialogues sharing speakers, best mean DNSMOS first; dialogue: best dialogues one by one, then dev drops those sharing a speaker with test.',
      ),
    devAlias: z
      .boolean()
      .default(true)
      .describe('Also write the dialogues not in test (test_other.jsonl) as dev.jsonl, the same lines.'),
    cometKiwi: cometKiwiSchema,
    speechRecognition: speechRecognitionSchema
      .nullable()
      .default(null)
      .describe(
        'Speech recognition check of freshly synthesized utterances of remote TTS engines (independent of enabled); null = off.',
      ),
    speechLength: speechLengthSchema
      .nullable()
      .prefault({})
      .describe(
        'Speech-length check of freshly synthesized utterances of remote TTS engines without a recognizer (independent of enabled); null = off.',
      ),
  })
  .strict()
  .prefault({})
  .describe('Quality scoring (DNSMOS, COMETKiwi, signal checks) and the dev/test split, after rendering.');
