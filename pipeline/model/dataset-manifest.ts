/**
 * `manifest.json` of a dataset folder: what it is and the sha256 of every file in it (docs/dataset-format.md).
 * {@link datasetManifestSchema} is what readers rely on (datasets of any version and domain);
 * {@link writtenManifestSchema} is what duplexsynth writes (stages/render-dataset.ts `commit`), the
 * settings of the build in the middle.
 */
import { z } from 'zod';
import { languageCodeSchema } from './language-code.ts';

const channel = z.number().int().min(0).max(1);

/**
 * How a Chat-track dataset's events were derived (`duplexsynth chat`), so that `duplexsynth verify`
 * judges it by the same rules: `words` (word timings, written to `txt_align`), `supervisions`
 * (utterance timings, one `txt_align` line each), `turns` (speaker turns without text, e.g. RTTM: the
 * segments are in each dialogue's metadata `speech`), `voice-activity` (no transcript: the detector in
 * `voiceActivity`, run on each written WAV). `thresholds` are the docs/events.md thresholds in centiseconds.
 */
export const eventDerivationSchema = z.object({
  from: z.enum(['words', 'supervisions', 'turns', 'voice-activity']),
  /** True when `txt_align` holds word or utterance timings; false: the files are empty (no transcript). */
  hasWords: z.boolean(),
  thresholds: z.object({
    maxPauseInIpu: z.number().int().nonnegative(),
    maxBackchannel: z.number().int().nonnegative(),
    bargeInOverlap: z.number().int().nonnegative(),
  }),
  /** The detector and its resolved settings (pipeline/services/vad `voiceActivitySettings`), for `voice-activity`. */
  voiceActivity: z
    .object({ engine: z.enum(['silero', 'webrtc']), options: z.record(z.string(), z.unknown()) })
    .optional(),
});

/** A dataset's {@link eventDerivationSchema} record. */
export type EventDerivation = z.infer<typeof eventDerivationSchema>;

/** The fields every dataset manifest has or may have. */
export const datasetManifestSchema = z.object({
  format: z.string().optional(),
  manifestVersion: z.number().int().optional(),
  language: z.string().optional(),
  dataset: z.string().optional(),
  /** `task` (MT-QA) or `chat`; `task` when absent. */
  domain: z.string().optional(),
  /** Hz: one rate for every file (MT-QA builds), or the rates found (`duplexsynth chat`). */
  sampleRate: z.number().int().positive().optional(),
  sampleRates: z.array(z.number().int().positive()).optional(),
  /** Channel of each role (MT-QA); absent for chat data. */
  channels: z.object({ user: channel, system: channel }).optional(),
  /** The channels the benchmark evaluates for chat data (`--channels 0,1`). */
  channelsEvaluated: z.array(channel).optional(),
  /** The speech detector the events were derived with (pipeline/audio/speech-regions.ts). */
  speechDetection: z
    .object({ thresholdDbfs: z.number(), minSilenceSeconds: z.number(), minSpeechSeconds: z.number() })
    .optional(),
  /** Chat datasets: what the events were derived from and with which thresholds and detector. */
  eventDerivation: eventDerivationSchema.optional(),
  build: z.object({ name: z.string(), seed: z.number().int().nonnegative() }).optional(),
  timeline: z.object({ profile: z.enum(['benchmark', 'natural']), turnHoldShare: z.number().min(0).max(1) }).optional(),
  /** A barge-in variant's origin (`{dataset}_bargein`). */
  variant: z
    .object({ kind: z.literal('barge-in'), of: z.string(), systemYields: z.enum(['next-word-boundary', 'runs-on']) })
    .optional(),
  /**
   * The full-band masters (`audio_fullband/{id}.wav`: each dialogue's mix at the TTS engine's own
   * rate, above `sampleRate`), when written: their folder, their rates (Hz; one per engine) and how
   * many dialogues have one. Absent when none was written.
   */
  fullBand: z
    .object({
      directory: z.string(),
      sampleRates: z.array(z.number().int().positive()).min(1),
      dialogues: z.number().int().nonnegative(),
    })
    .optional(),
  /** Dialogue ids, sorted (the lines of all.jsonl). */
  dialogues: z.array(z.string()).optional(),
  /** Relative path -> sha256 (hex) of every file of the folder but manifest.json. */
  files: z.record(z.string(), z.string().regex(/^[0-9a-f]{64}$/)).optional(),
});

/** A dataset manifest as read. */
export type DatasetManifest = z.infer<typeof datasetManifestSchema>;

/** What duplexsynth writes: format, version, language, dataset, dialogues and files always there. */
export const writtenManifestSchema = datasetManifestSchema.extend({
  format: z.literal('m3-duplexbench'),
  manifestVersion: z.literal(1),
  language: languageCodeSchema,
  dataset: z.string().min(1),
  domain: z.enum(['task', 'chat']),
  dialogues: z.array(z.string()),
  files: z.record(z.string(), z.string().regex(/^[0-9a-f]{64}$/)),
});

/** A manifest as written. */
export type WrittenManifest = z.infer<typeof writtenManifestSchema>;

/** The settings a dataset's writer puts in its manifest (all but format, version, dialogues and files). */
export type ManifestSettings = Omit<WrittenManifest, 'format' | 'manifestVersion' | 'dialogues' | 'files'>;
