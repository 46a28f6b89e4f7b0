/**
 * `metadata/{id}.json`, the record of one dialogue of a dataset (docs/dataset-format.md: duplexsynth's own
 * addition beside the benchmark files). {@link dialogueMetadataSchema} is what every dataset's
 * metadata has (MT-QA builds, `duplexsynth chat`, datasets of earlier versions): readers use it.
 * {@link taskDialogueMetadataSchema} is what an MT-QA build writes (the render stage validates each
 * record with it before writing), {@link chatDialogueMetadataSchema} what `duplexsynth chat` writes.
 * Times are seconds (0.01 s resolution) from the start of the dialogue's WAV.
 */
import { z } from 'zod';
import { languageCodeSchema } from './language-code.ts';

const language = languageCodeSchema;

/** One speaker of a dialogue: who speaks on which channel. */
export const metadataSpeakerSchema = z.object({
  speakerId: z.string().min(1),
  /** WAV channel (0 or 1); absent in metadata of earlier versions, where the key (`user`, `system`, `channel0`) says it. */
  channel: z.number().int().nonnegative().optional(),
});

/**
 * Texts of an utterance through the pipeline, in the order the stages make them; null when the stage
 * has none (an unanswered turn). The field names are the stages' (docs/dataset-format.md, "metadata/{id}.json"), not what is
 * heard: **`spoken` is the spoken-style rewrite** (a stage's output, written before any audio exists,
 * in English also for a translated dataset), **`transcript` is what the audio says**. `spoken` keeps
 * its name: the datasets of earlier versions have it and this schema reads them. For the turn's
 * texts (`source`, `spoken`, `final`) a question spoken in two parts (TURN_HOLD) carries the whole
 * question in each part.
 */
const utteranceTextSchema = z.object({
  /** The corpus's text as written (TopiOCQA), in the corpus's language. */
  source: z.string().nullable().optional(),
  /**
   * The spoken-style rewrite of `source` (numbers, dates, symbols to words), in the corpus's language
   * (English): the source of a translation (COMETKiwi scores `spoken` → `final`). Not what the audio
   * says: that is `transcript`.
   */
  spoken: z.string().nullable().optional(),
  /** The text to speak in the dataset's language: the translation of `spoken`, or `spoken` itself when not translated. */
  final: z.string().nullable().optional(),
  /**
   * What the speech engine was given for this utterance: `final` (one part of it for a two-part
   * question), after any rephrasing for the speech rate or padding. A cut-off utterance's whole planned
   * text (also in `cutOff.plannedText`).
   */
  synthesized: z.string().nullable().optional(),
  /** What the audio says: `synthesized`, or for an utterance cut off (a barge-in variant's answer) the words spoken before the cut. Absent in metadata of earlier versions. */
  transcript: z.string().nullable().optional(),
});

/**
 * An utterance cut off before its end (the barge-in variant's answer where the user barged in): the
 * text it was to say, where it stopped and the words it did not say. Its `text.transcript`, `end` and
 * words hold what was spoken.
 */
export const utteranceCutOffSchema = z.object({
  /** The whole text as synthesized (what was planned). */
  plannedText: z.string(),
  /** Where the audio stops, seconds from the start of the dialogue's WAV (= the utterance's `end`). */
  atSeconds: z.number(),
  /** Length the whole utterance has in the base dataset, seconds. */
  plannedDurationSeconds: z.number(),
  /** The planned words not spoken, in order. */
  unspokenWords: z.array(z.string()),
});

/** One utterance as placed in the dialogue. */
export const metadataUtteranceSchema = z.object({
  index: z.number().int().nonnegative(),
  role: z.string(),
  kind: z.string(),
  channel: z.number().int().nonnegative(),
  /** Seconds. */
  start: z.number(),
  end: z.number(),
  text: utteranceTextSchema,
  /** Present only on an utterance cut off before its end. */
  cutOff: utteranceCutOffSchema.optional(),
});

/** What every dataset's dialogue metadata holds (the fields readers may rely on). */
export const dialogueMetadataSchema = z.object({
  id: z.string().min(1),
  language: z.string().optional(),
  source: z
    .object({ corpus: z.string().optional(), file: z.string().optional(), conversationNumber: z.number().optional() })
    .optional(),
  text: z.object({ translatedBy: z.string().nullable().optional() }).optional(),
  /** By role (`user`, `system`) or by channel (`channel0`, `channel1`). */
  speakers: z.record(z.string(), metadataSpeakerSchema),
  /** Length of the WAV, seconds. */
  durationSeconds: z.number().nonnegative(),
  utterances: z.array(metadataUtteranceSchema),
});

/** Any dataset's dialogue metadata, as read. */
export type DialogueMetadata = z.infer<typeof dialogueMetadataSchema>;

const voiceSettingsSchema = z.record(z.string(), z.union([z.string(), z.number(), z.boolean()]));

/** A speaker of an MT-QA dialogue: role, channel, identity and the engine and voice that spoke. */
const taskSpeakerSchema = metadataSpeakerSchema.extend({
  role: z.enum(['user', 'system']),
  channel: z.number().int().nonnegative(),
  engine: z.string(),
  engineVersion: z.string(),
  voice: voiceSettingsSchema,
});

/** The barge-in variant's record (`{dataset}_bargein`): where the user barged in and what went unspoken. */
export const bargeInVariantSchema = z.object({
  kind: z.literal('barge-in'),
  /** The dataset the variant is made from (same synthesized audio). */
  of: z.string(),
  systemYields: z.enum(['next-word-boundary', 'runs-on']),
  bargeIns: z.array(
    z.object({
      /** Utterance indices of the answer barged in on and of the question that barges in. */
      answerIndex: z.number().int().nonnegative(),
      questionIndex: z.number().int().nonnegative(),
      userStartsIntoAnswerSeconds: z.number(),
      drawnOverlapSeconds: z.number(),
      overlapSeconds: z.number(),
      answerSpokenSeconds: z.number(),
      answerFullSeconds: z.number(),
      unspokenWords: z.array(z.string()),
      /** True when no drawn overlap fitted and the smallest barge-in was placed. */
      fallback: z.boolean(),
    }),
  ),
  /** Utterance indices of the answers too short to hold a barge-in. */
  answersTooShort: z.array(z.number().int().nonnegative()),
});

/** One utterance of an MT-QA dialogue, with its texts through the pipeline and how it was made. */
const taskUtteranceSchema = metadataUtteranceSchema.extend({
  turnNumber: z.number().int().nonnegative(),
  role: z.enum(['user', 'system']),
  kind: z.enum(['question', 'answer', 'backchannel']),
  /** Gap (positive) or overlap (negative) from the end of the floor holder's speech, seconds; null for the first utterance. */
  offsetFromFloor: z.number().nullable(),
  /** Part 1 or 2 of a question spoken in two parts around a TURN_HOLD pause; absent for a whole question. */
  questionPart: z.union([z.literal(1), z.literal(2)]).optional(),
  /** The texts of {@link utteranceTextSchema} (what each holds is said there), `synthesized` and `transcript` always present. */
  text: z.object({
    source: z.string().nullable(),
    spoken: z.string().nullable(),
    final: z.string().nullable(),
    synthesized: z.string(),
    transcript: z.string(),
  }),
  paddingSteps: z.number().int().nonnegative(),
  rephrasedForSpeechRate: z.boolean(),
  wordTimingSource: z.enum(['engine', 'spread']),
});

/** What an MT-QA build writes for each dialogue (stages/render-dataset.ts). */
export const taskDialogueMetadataSchema = dialogueMetadataSchema.extend({
  language,
  dataset: z.string(),
  seed: z.number().int().nonnegative(),
  source: z.object({
    corpus: z.literal('TopiOCQA'),
    file: z.string(),
    conversationNumber: z.number().int(),
    turns: z.array(
      z.object({ turnNumber: z.number().int(), topic: z.string(), topicSwitch: z.boolean(), answerable: z.boolean() }),
    ),
  }),
  text: z.object({ rewrittenBy: z.string(), translatedBy: z.string().nullable() }),
  speakers: z.object({ user: taskSpeakerSchema, system: taskSpeakerSchema }),
  /** The timing statistics file the offsets were drawn from (its name), draws redrawn and fallbacks. */
  timing: z.object({
    statistics: z.string(),
    resampledDraws: z.number().int().nonnegative(),
    fallbacks: z.number().int().nonnegative(),
  }),
  backchannels: z.array(
    z.object({
      channel: z.number().int().nonnegative(),
      start: z.number(),
      end: z.number(),
      text: z.string(),
      hostUtteranceIndex: z.number().int().nonnegative(),
    }),
  ),
  /** Hz of `audio/{id}.wav`. */
  sampleRate: z.number().int().positive(),
  /** Hz of the full-band master `audio_fullband/{id}.wav` (the TTS engine's rate); absent when none was written. */
  fullBandSampleRate: z.number().int().positive().optional(),
  utterances: z.array(taskUtteranceSchema),
  /** Only in a barge-in variant. */
  variant: bargeInVariantSchema.optional(),
});

/** An MT-QA dialogue's metadata. */
export type TaskDialogueMetadata = z.infer<typeof taskDialogueMetadataSchema>;

/** What `duplexsynth chat` writes for each segment of a real recording. */
export const chatDialogueMetadataSchema = dialogueMetadataSchema.extend({
  language,
  domain: z.literal('chat'),
  source: z.object({
    corpus: z.string(),
    recording: z.string(),
    files: z.array(z.string()),
    startSeconds: z.number(),
    endSeconds: z.number(),
  }),
  speakers: z.object({ channel0: metadataSpeakerSchema, channel1: metadataSpeakerSchema }),
  /** What the words' times come from (the corpus's word or segment timings). */
  alignment: z.enum(['words', 'supervisions', 'none']),
  /**
   * The speech segments the events were derived from, `[start, end]` seconds per channel: written when
   * they are in no other file (speaker turns without text, e.g. RTTM), so `verify` can re-derive them.
   */
  speech: z
    .object({
      channel0: z.array(z.tuple([z.number(), z.number()])),
      channel1: z.array(z.tuple([z.number(), z.number()])),
    })
    .optional(),
  recordingNotes: z.array(z.string()),
});

/** A chat segment's metadata. */
export type ChatDialogueMetadata = z.infer<typeof chatDialogueMetadataSchema>;
