/**
 * `quality.json` of a dataset folder: what stages/score-quality.ts measured for every dialogue
 * (DNSMOS, COMETKiwi, signal checks) and the aggregates over the dataset, with the thresholds and
 * methods used (format: pipeline/quality/quality-report.ts, signal-checks.ts, thresholds.ts).
 * {@link datasetQualityReportSchema} is checked before the file is written and when it is read
 * (pipeline/quality/quality-report.ts `writeQualityReport`, `readQualityReport`).
 */
import { z } from 'zod';
import { languageCodeSchema } from './language-code.ts';

/** A plausible range of a rate, in units per second, with its source. */
export const rateRangeSchema = z.object({
  minimum: z.number(),
  maximum: z.number(),
  /** Where the range comes from. */
  source: z.string(),
});

/** A plausible range of a rate, in units per second, with its source. */
export type RateRange = z.infer<typeof rateRangeSchema>;

/** Every threshold of the quality checks (defaults and their sources: pipeline/quality/thresholds.ts). */
export const qualityThresholdsSchema = z.object({
  /**
   * A sample counts as full scale when its absolute value is at least this, on the [-1, 1] scale.
   * Default 32767 / 32768: the largest positive 16-bit PCM value as `decodeWav` scales it (-32768
   * reads as -1.0), so every sample at either 16-bit rail counts.
   */
  fullScaleLevel: z.number(),
  /**
   * Consecutive full-scale samples that make one clipping run. Default 3: the default "start
   * threshold" of Audacity's Analyze > Find Clipping (3 samples); a single full-scale sample is a
   * peak, not yet clipping.
   */
  minimumClippingRunSamples: z.number(),
  /**
   * A 10 ms frame is silent when its RMS level is below this, dBFS (full scale 1.0). Default -50, the
   * speech detector's threshold (pipeline/audio/speech-regions.ts, measured on this project's engines)
   * and DNSMOS's `channelHasSpeech` threshold, so "silence" means the same everywhere.
   */
  silenceThresholdDbfs: z.number(),
  /**
   * An utterance is flagged when more than this fraction of its span [start, end] is silent frames.
   * Default 0.4: espeak-ng and Open JTalk place 0.15-0.5 s pauses at punctuation
   * (speech-regions.ts measurements), so a multi-clause answer is typically 10-25 % silent; above
   * 40 % points to hallucinated silence or a stretched tail (services.md, CosyVoice faults).
   */
  maximumUtteranceSilenceRatio: z.number(),
  /**
   * Target programme loudness, LUFS. Default -23: EBU R 128 (2020), "Loudness normalisation and
   * permitted maximum level of audio signals", section 2.
   */
  targetLoudnessLufs: z.number(),
  /**
   * Permitted deviation from the target, LU. Default 1.0: EBU R 128 allows +-1.0 LU where exact
   * normalisation is not practical (the general tolerance is +-0.5 LU). The build does not normalise
   * loudness, so this flags, not rejects.
   */
  loudnessToleranceLu: z.number(),
  /** Maximum true peak, dBTP. Default -1: EBU R 128 (2020), "Maximum True Peak Level ... -1 dBTP". */
  maximumTruePeakDbtp: z.number(),
  /**
   * Plausible articulation rates (speech time only, pauses of the speech detector excluded):
   * English in syllables per second, Japanese in morae per second. Defaults:
   * - English 3.0-7.5 syllables/s: D. Jones (An Outline of English Phonetics, 1967, section 43) puts
   *   conversational English at 300 syllables per minute = 5 syllables/s; F. Pellegrino, C. Coupe and
   *   E. Marsico ("A cross-language perspective on speech information rate", Language 87(3),
   *   539-558, 2011) measured 6.19 syllables/s for English read speech; the range spans slow, careful
   *   speech to fast reading, widened by the ~10 % error of the heuristic syllable count;
   * - Japanese 4.5-10.0 morae/s: Pellegrino et al. (2011) measured 7.84 syllables per second for
   *   Japanese read speech (the fastest of their languages; a Japanese syllable is one or two morae); H. Prafiyanto, T. Nose, Y. Chiba and A. Ito (Acoustical
   *   Science and Technology 39(2), 92-100, 2018) found 320-360 morae per minute (5.3-6.0 morae/s)
   *   the preferred slow rate for non-native listeners; the range spans that slow rate (less a
   *   margin) to fast reading.
   */
  speechRate: z.record(languageCodeSchema, rateRangeSchema),
  /**
   * The BC rule of the benchmark: an inter-pausal unit of at most this many seconds is a BC
   * (docs/events.md rule 2). Used only to explain the role/label check in reports.
   */
  backchannelMaximumSeconds: z.number(),
});

/** Every threshold of the quality checks. */
export type QualityThresholds = z.infer<typeof qualityThresholdsSchema>;

/** Check codes; an item carries the codes of the checks it failed. */
export const qualityFlagSchema = z.enum([
  'clipping',
  'silence-ratio-high',
  'speech-rate-low',
  'speech-rate-high',
  'labelled-bc',
  'labelled-turn',
  'no-speech',
  'loudness-off-target',
  'true-peak-over-limit',
  'channel-silent',
]);

/** Check codes; an item carries the codes of the checks it failed. */
export type QualityFlag = z.infer<typeof qualityFlagSchema>;

/**
 * How the benchmark's rules labelled an utterance's speech, compared with its role:
 * `agrees`; `labelled-bc-whole` / `labelled-bc-part` (a question or answer wholly or partly labelled
 * BC by the 0.8 s rule); `labelled-turn` (a backchannel labelled TURN); `no-speech` (no TURN or BC
 * overlaps the utterance).
 */
export const roleLabelAgreementSchema = z.enum([
  'agrees',
  'labelled-bc-whole',
  'labelled-bc-part',
  'labelled-turn',
  'no-speech',
]);

/** How the benchmark's rules labelled an utterance's speech, compared with its role (see {@link roleLabelAgreementSchema}). */
export type RoleLabelAgreement = z.infer<typeof roleLabelAgreementSchema>;

/** Clipping of a stretch of samples. */
export const clippingMeasurementSchema = z.object({
  /** Samples whose absolute value is at least the full-scale level. */
  fullScaleSamples: z.number(),
  /** `fullScaleSamples` / samples examined (0 for an empty stretch). */
  fullScaleRatio: z.number(),
  /** Runs of at least `minimumClippingRunSamples` consecutive full-scale samples. */
  clippedRuns: z.number(),
  /** Longest run of consecutive full-scale samples. */
  longestRunSamples: z.number(),
});

/** Clipping of a stretch of samples. */
export type ClippingMeasurement = z.infer<typeof clippingMeasurementSchema>;

/** EBU R 128 measurements of one programme (a channel, or the whole file). */
export const loudnessMeasurementSchema = z.object({
  /** Integrated loudness, LUFS (gated, BS.1770-4); null when nothing passes the -70 LUFS gate. */
  integratedLufs: z.number().nullable(),
  /** Maximum true peak (4x oversampled), dBTP (ffmpeg prints the unit as dBFS); null for digital silence. */
  truePeakDbtp: z.number().nullable(),
  /** Loudness range, LU (EBU Tech 3342). */
  loudnessRangeLu: z.number(),
});

/** EBU R 128 measurements of one programme (a channel, or the whole file). */
export type LoudnessMeasurement = z.infer<typeof loudnessMeasurementSchema>;

/** Checks of one utterance. */
export const utteranceChecksSchema = z.object({
  index: z.number(),
  role: z.string(),
  kind: z.string(),
  channel: z.number(),
  start: z.number(),
  end: z.number(),
  clipping: clippingMeasurementSchema,
  /** Sample peak in the utterance span, dBFS; null when silent. */
  samplePeakDbfs: z.number().nullable(),
  /** Silent 10 ms frames / frames of the span. */
  silenceRatio: z.number(),
  /** Seconds of speech (events) in the span. */
  speechSeconds: z.number(),
  /** Spoken units of the text (syllables or morae). */
  units: z.number(),
  unit: z.enum(['syllable', 'mora']),
  /** `units / speechSeconds`, rounded to 0.01; null when there is no speech. */
  speechRate: z.number().nullable(),
  roleLabel: roleLabelAgreementSchema,
  flags: z.array(qualityFlagSchema),
});

/** Checks of one utterance. */
export type UtteranceChecks = z.infer<typeof utteranceChecksSchema>;

/** Checks of one channel of the file. */
export const channelChecksSchema = z.object({
  channel: z.number(),
  clipping: clippingMeasurementSchema,
  silenceRatio: z.number(),
  /** EBU R 128 of the channel alone as a mono programme; null when loudness was not measured. */
  loudness: loudnessMeasurementSchema.nullable(),
  flags: z.array(qualityFlagSchema),
});

/** Checks of one channel of the file. */
export type ChannelChecks = z.infer<typeof channelChecksSchema>;

/** Every flag, counted. */
const flagCountsSchema = z.partialRecord(qualityFlagSchema, z.number());

/** Checks of one dialogue. */
export const dialogueSignalChecksSchema = z.object({
  durationSeconds: z.number(),
  /** Share of 10 ms frames in which both channels are silent (dead air), 0..1. */
  mutualSilenceRatio: z.number(),
  channels: z.array(channelChecksSchema),
  /** EBU R 128 of the whole file (all channels); null when loudness was not measured. */
  programmeLoudness: loudnessMeasurementSchema.nullable(),
  utterances: z.array(utteranceChecksSchema),
  /** Units and speech seconds summed over utterances, per role, with the resulting rate. */
  speechRateByRole: z.record(
    z.string(),
    z.object({ units: z.number(), speechSeconds: z.number(), speechRate: z.number().nullable() }),
  ),
  /** Name of the counter that counted the units. */
  unitCounter: z.string(),
  /** Every flag of the dialogue's channels and utterances, counted. */
  flagCounts: flagCountsSchema,
});

/** Checks of one dialogue. */
export type DialogueSignalChecks = z.infer<typeof dialogueSignalChecksSchema>;

/** DNSMOS values of one channel or one dialogue (1..5 scale), rounded to 4 decimals. */
export const dnsmosValuesSchema = z.object({ ovrl: z.number(), sig: z.number(), bak: z.number(), p808: z.number() });

/** DNSMOS values of one channel or one dialogue (1..5 scale), rounded to 4 decimals. */
export type DnsmosValues = z.infer<typeof dnsmosValuesSchema>;

/** DNSMOS of one dialogue. */
export const dialogueDnsmosSchema = z.object({
  /** Mean over the channels with speech (DnsmosScorer.scoreRecording); null when no channel has speech. */
  dialogue: dnsmosValuesSchema.nullable(),
  channels: z.array(
    z.object({
      channel: z.number(),
      hasSpeech: z.boolean(),
      scores: dnsmosValuesSchema.extend({ windows: z.number() }).nullable(),
    }),
  ),
});

/** DNSMOS of one dialogue. */
export type DialogueDnsmos = z.infer<typeof dialogueDnsmosSchema>;

/** COMETKiwi of one dialogue's translated utterances. */
export const dialogueCometKiwiSchema = z.object({
  /** Mean of the segment scores; null when the dataset's COMETKiwi was not computed. */
  mean: z.number().nullable(),
  /** Per translated utterance: its index in the metadata and its score (null when not computed). */
  segments: z.array(z.object({ utteranceIndex: z.number(), score: z.number().nullable() })),
});

/** COMETKiwi of one dialogue's translated utterances. */
export type DialogueCometKiwi = z.infer<typeof dialogueCometKiwiSchema>;

/** Everything measured for one dialogue. */
export const dialogueQualitySchema = z.object({
  id: z.string(),
  durationSeconds: z.number(),
  /** sha256 of the WAV scored, from manifest.json (null when unlisted); lets later stages detect staleness. */
  audioSha256: z.string().nullable(),
  /** Speaker identities of both roles (metadata speakers.*.speakerId), sorted. */
  speakerIds: z.array(z.string()),
  /** Source conversation key shared across languages (pipeline/quality/dataset-files.ts sourceConversationKey). */
  sourceConversation: z.string(),
  dnsmos: dialogueDnsmosSchema,
  /** null for a dataset that is not a translation. */
  cometKiwi: dialogueCometKiwiSchema.nullable(),
  signal: dialogueSignalChecksSchema,
});

/** Everything measured for one dialogue. */
export type DialogueQuality = z.infer<typeof dialogueQualitySchema>;

/** Dataset-level COMETKiwi: computed with its scorer and system score, or not computed with the reason. */
export const datasetCometKiwiSchema = z.discriminatedUnion('computed', [
  z.object({
    computed: z.literal(true),
    scorer: z.enum(['command', 'http']),
    model: z.string(),
    systemScore: z.number(),
    segments: z.number(),
  }),
  z.object({ computed: z.literal(false), reason: z.string() }),
]);

/** Dataset-level COMETKiwi: computed with its scorer and system score, or not computed with the reason. */
export type DatasetCometKiwi = z.infer<typeof datasetCometKiwiSchema>;

/** Aggregates over a set of dialogues. */
export const qualityAggregatesSchema = z.object({
  dialogues: z.number(),
  hours: z.number(),
  /** Mean over dialogues of the dialogue-level DNSMOS; null when no dialogue has one. */
  dnsmos: dnsmosValuesSchema.nullable(),
  /** Dialogues without a dialogue-level DNSMOS (no speech). */
  dnsmosMissing: z.number(),
  /** Mean of all translated utterances' COMETKiwi scores of these dialogues; null when none. */
  cometKiwi: z.number().nullable(),
  /** Translated utterances with a score. */
  cometKiwiSegments: z.number(),
  /** Mean over dialogues and channels of the per-channel integrated loudness, LUFS (silent channels left out). */
  meanChannelLoudnessLufs: z.number().nullable(),
  /** Highest per-channel true peak, dBTP. */
  maximumTruePeakDbtp: z.number().nullable(),
  /** Units (syllables or morae) per second of speech, pooled over every utterance. */
  speechRate: z.number().nullable(),
  speechRateUnit: z.enum(['syllable', 'mora']),
  /** Share of the total duration in which both channels are silent (duration-weighted mean), 0..1; null for no dialogues. */
  mutualSilenceRatio: z.number().nullable(),
  /** Pooled speech rate per role. */
  speechRateByRole: z.record(z.string(), z.number().nullable()),
  /** Utterances whose role disagrees with the benchmark's label (questions/answers labelled BC, backchannels labelled TURN) or that have no speech in their span. */
  roleLabelDisagreements: z.number(),
  /** Every flag, counted over the dialogues' channels and utterances. */
  flagCounts: flagCountsSchema,
});

/** Aggregates over a set of dialogues. */
export type QualityAggregates = z.infer<typeof qualityAggregatesSchema>;

/** The whole `quality.json`. */
export const datasetQualityReportSchema = z.object({
  format: z.literal('duplexsynth-quality'),
  version: z.literal(1),
  language: languageCodeSchema,
  dataset: z.string(),
  /** How the numbers were made. */
  methods: z.object({
    dnsmos: z.string(),
    cometKiwi: z.string(),
    loudness: z.string(),
    speechRate: z.string(),
  }),
  thresholds: qualityThresholdsSchema,
  /** null when the dataset is not a translation (COMETKiwi does not apply). */
  cometKiwi: datasetCometKiwiSchema.nullable(),
  aggregates: qualityAggregatesSchema,
  /** Dialogues that failed during the build (summary.json), not part of the dataset. */
  quarantined: z.array(z.object({ id: z.string(), stage: z.string(), reason: z.string() })),
  /** In all.jsonl order. */
  dialogues: z.array(dialogueQualitySchema),
});

/** The whole `quality.json`. */
export type DatasetQualityReport = z.infer<typeof datasetQualityReportSchema>;
