/**
 * `summary.json`: of a dataset folder (its statistics, failures and evaluable events; written by
 * pipeline/orchestration/dataset-output.ts) and of a build's output folder (its name, seed and every dataset's
 * summary; pipeline/orchestration/build.ts). `duplexsynth chat` writes its own dataset summary
 * ({@link chatSummarySchema}). {@link summaryFailuresSchema} is what readers of any of them use.
 */
import { z } from 'zod';
import { languageCodeSchema } from './language-code.ts';

const eventType = z.enum(['TURN', 'TURN_SHIFT', 'TURN_HOLD', 'BC', 'BARGE_IN', 'SHORTPAUSE']);
/**
 * Why the benchmark's loader drops an event, in the loader's order of checks (for tables); the rules
 * are pipeline/events/evaluable-events.ts's, which re-exports these.
 */
export const DROP_REASONS = [
  'short-pause-ignored',
  'event-type-ignored',
  'needs-context',
  'channel-not-evaluated',
  'no-turn-starts-there',
  'no-turn-ends-there',
  'no-turn-contains-it',
  'system-speaking',
  'system-not-speaking',
] as const;
/** One of {@link DROP_REASONS}. */
export type DropReason = (typeof DROP_REASONS)[number];
const dropReason = z.enum(DROP_REASONS);

/** A dialogue that failed (was quarantined), at which stage and why. */
export const failedDialogueSchema = z.object({ id: z.string(), stage: z.string(), reason: z.string() });
export type FailedDialogue = z.infer<typeof failedDialogueSchema>;

/** An utterance whose role disagrees with its benchmark label (a question or answer labelled BC). */
export const roleLabelDisagreementSchema = z.object({
  dialogueId: z.string(),
  utteranceIndex: z.number().int().nonnegative(),
  turnNumber: z.number().int().nonnegative(),
  role: z.enum(['user', 'system']),
  kind: z.enum(['question', 'answer', 'backchannel']),
  text: z.string(),
  /** `whole` when the utterance is one BC; `part` when a stretch of it after a long pause is a BC. */
  extent: z.enum(['whole', 'part']),
  /** The BC span(s), seconds. */
  backchannelSpans: z.array(z.tuple([z.number(), z.number()])),
});
export type RoleLabelDisagreement = z.infer<typeof roleLabelDisagreementSchema>;

/** What the benchmark's loader turns into samples under one setting (pipeline/events/evaluable-events.ts). */
export const evaluableEventsReportSchema = z.object({
  setting: z.string(),
  settings: z.object({
    channels: z.array(z.union([z.literal(0), z.literal(1)])).readonly(),
    ignoreShortPause: z.boolean(),
    ignoredEvents: z.array(eventType).readonly(),
    useContext: z.boolean(),
  }),
  dialogues: z.number().int().nonnegative(),
  byType: z.record(
    z.enum(['TURN_SHIFT', 'TURN_HOLD', 'SHORTPAUSE', 'BC', 'BARGE_IN']),
    z.object({
      inFile: z.number().int(),
      samples: z.number().int(),
      dropped: z.partialRecord(dropReason, z.number().int()),
    }),
  ),
  dialoguesWithDrops: z.array(
    z.object({
      id: z.string(),
      event: z.enum(['TURN_SHIFT', 'TURN_HOLD', 'SHORTPAUSE', 'BC', 'BARGE_IN']),
      start: z.number(),
      reason: dropReason,
    }),
  ),
});

/** The statistics of one dataset (its `summary.json`). */
export const datasetSummarySchema = z.object({
  language: languageCodeSchema,
  dataset: z.string(),
  /** `default`, or `barge-in` for a `{dataset}_bargein` variant. */
  variant: z.enum(['default', 'barge-in']),
  dialogues: z.number().int().nonnegative(),
  totalHours: z.number().nonnegative(),
  meanSeconds: z.number().nonnegative(),
  events: z.record(eventType, z.number().int().nonnegative()),
  /** Speaker changes placed with a sampled overlap (negative offset), and of those beyond 0.4 s. */
  sampledOverlaps: z.number().int().nonnegative(),
  sampledOverlapsBeyondBargeInThreshold: z.number().int().nonnegative(),
  sampledTransitions: z.number().int().nonnegative(),
  paddedUtterances: z.number().int().nonnegative(),
  rephrasedUtterances: z.number().int().nonnegative(),
  resampledDraws: z.number().int().nonnegative(),
  placementFallbacks: z.number().int().nonnegative(),
  roleLabelDisagreements: z.array(roleLabelDisagreementSchema),
  failed: z.array(failedDialogueSchema),
  /** Corpus quirks that change what is spoken, per built dialogue (stages/ingest-corpus.ts `notes`). */
  corpusNotes: z.array(z.string()),
  /**
   * The corpus loader's warnings, one line per kind of quirk with its count and what was done (empty
   * answers, dropped turns and conversations, unanswerable turns; corpora/topiocqa-warnings.ts), as the
   * build printed them. Absent from summaries written before it was added.
   */
  corpusWarnings: z.array(z.string()).optional(),
  /** Questions spoken in two parts (user TURN_HOLDs), and those chosen but spoken whole. */
  splitQuestions: z.number().int().nonnegative(),
  splitQuestionsSpokenWhole: z.number().int().nonnegative(),
  /** Barge-in variant only (null otherwise): answers barged in on, too short, fallbacks. */
  bargeIns: z
    .object({
      placed: z.number().int().nonnegative(),
      answersTooShort: z.number().int().nonnegative(),
      fallbacks: z.number().int().nonnegative(),
      /** What the barge-ins leave of the answers unspoken, measured on the placed cuts: seconds and words, least and median (null without barge-ins). */
      unspoken: z
        .object({
          minimumSeconds: z.number().nullable(),
          medianSeconds: z.number().nullable(),
          minimumWords: z.number().int().nullable(),
          medianWords: z.number().nullable(),
          withoutUnspokenWords: z.number().int().nonnegative(),
        })
        .optional(),
    })
    .nullable(),
  /**
   * The speech recognition check (`quality.speechRecognition`) of the dataset's utterances: the
   * counts stored with the synthesis cache entry of the clip each utterance of a committed dialogue
   * is spoken with, summed (utterances counted, their edits and reference words, characters for
   * languages written without spaces), and edits / reference tokens (null without tokens). The same
   * in a cold build, a rebuild from the cache and a queued build; an entry stored without counts is
   * left out. Base datasets only; absent when the check is off or the engine is local.
   */
  speechRecognition: z
    .object({
      unit: z.enum(['word', 'character']),
      utterances: z.number().int().nonnegative(),
      edits: z.number().int().nonnegative(),
      referenceTokens: z.number().int().nonnegative(),
      errorRate: z.number().nonnegative().nullable(),
    })
    .optional(),
  /** The benchmark's evaluation as scripts/pipe.sh calls it for task data, without and with context. */
  evaluableEvents: z.array(evaluableEventsReportSchema),
});
export type DatasetSummary = z.infer<typeof datasetSummarySchema>;

/** The build's `summary.json` in its output folder. */
export const buildSummarySchema = z.object({
  name: z.string(),
  seed: z.number().int().nonnegative(),
  datasets: z.array(datasetSummarySchema),
  /**
   * What the build warns of about its datasets, one line each: a barge-in variant not written for want
   * of barge-ins, a benchmark dimension a dataset gives no sample for, a language the benchmark's
   * evaluation does not know. Absent when there is none.
   */
  warnings: z.array(z.string()).optional(),
});
export type BuildSummary = z.infer<typeof buildSummarySchema>;

/** `duplexsynth chat`'s dataset `summary.json`. */
export const chatSummarySchema = z.object({
  format: z.literal('duplexsynth-chat'),
  version: z.literal(1),
  language: languageCodeSchema,
  dataset: z.string(),
  source: z.object({ format: z.string(), recordings: z.number().int().nonnegative() }),
  /** The segmenting settings and rule (stages/cut-chat-segments.ts). */
  segmenting: z.record(z.string(), z.unknown()),
  segments: z.array(
    z.object({
      id: z.string(),
      recording: z.string(),
      start: z.number(),
      end: z.number(),
      durationSeconds: z.number(),
    }),
  ),
  hours: z.number().nonnegative(),
  events: z.record(z.string(), z.number().int().nonnegative()),
  failed: z.array(failedDialogueSchema),
  notes: z.array(z.string()),
  /** Audio below 16 kHz upsampled to 16 kHz (`--allow-upsample`): file, its rate and the rate written, Hz. */
  upsampled: z
    .array(z.object({ file: z.string(), sampleRate: z.number().int().positive(), to: z.number().int().positive() }))
    .optional(),
});
export type ChatSummary = z.infer<typeof chatSummarySchema>;

/** What readers of any dataset's or build's summary use: the failed dialogues, the build's name and seed. */
export const summaryFailuresSchema = z.object({
  name: z.string().optional(),
  seed: z.number().optional(),
  failed: z.array(failedDialogueSchema.partial({ stage: true, reason: true })).optional(),
});
