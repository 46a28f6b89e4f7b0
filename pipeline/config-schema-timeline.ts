/**
 * The build configuration's sections about timing: `speechDetection` (where speech starts and ends in
 * synthesized audio) and `timeline` (silences, speaker-change offsets, TURN_HOLD pauses, barge-in and
 * backchannels). Every default is written here once, except the backchannel phrases, which come from
 * the language packs (config-resolve.ts).
 */
import { z } from 'zod';
import { languageCodeSchema } from './model/language-code.ts';

/** `speechDetection`: the energy detector's settings; each unset key keeps the detector's own default. */
export const speechDetectionSchema = z
  .object({
    thresholdDbfs: z
      .number()
      .max(0)
      .optional()
      .describe("Frame RMS threshold, dBFS, above which a 10 ms frame is speech; unset = the detector's default."),
    minimumSilenceSeconds: z
      .number()
      .positive()
      .optional()
      .describe("Silences shorter than this, seconds, are bridged; unset = the detector's default."),
    minimumSpeechSeconds: z
      .number()
      .positive()
      .optional()
      .describe("Speech shorter than this, seconds, is dropped; unset = the detector's default."),
  })
  .strict()
  .prefault({})
  .describe('Speech detection in synthesized audio (10 ms frames).');

/** `timeline.bargeIn`: where the interrupted system stops in the barge-in variant. */
const bargeInSchema = z
  .object({
    systemYields: z
      .enum(['next-word-boundary', 'runs-on'])
      .default('next-word-boundary')
      .describe(
        'next-word-boundary: the system stops at the first word end after the drawn overlap; runs-on: the answer plays to its end.',
      ),
    // a barge-in the system need not stop for tests little, so it must leave enough of the answer unspoken
    minimumUnspoken: z
      .object({
        seconds: z
          .number()
          .nonnegative()
          .default(1)
          .describe('A barge-in must leave at least this many seconds of the answer unspoken.'),
        words: z
          .number()
          .int()
          .nonnegative()
          .default(3)
          .describe('A barge-in must leave at least this many words of the answer unspoken.'),
      })
      .strict()
      .prefault({})
      .describe(
        'next-word-boundary: a barge-in must leave this much of the answer unspoken (either limit suffices), else the answer keeps its ordinary transition.',
      ),
  })
  .strict()
  .prefault({})
  .describe('The barge-in variant (datasets.bargeIn): where the interrupted system stops.');

/** `timeline.backchannels`: the user's backchannels inside the system's answers. */
const backchannelsSchema = z
  .object({
    enabled: z.boolean().default(true).describe("Place the user's backchannels at the measured rate and positions."),
    phrases: z
      .record(
        languageCodeSchema,
        z
          .array(z.string().min(1))
          .nonempty()
          .describe('Backchannel phrases of this language code.')
          .meta({ examples: [['mhm', 'yeah', 'right']] }),
      )
      .default({})
      .describe(
        "Phrases per language code, synthesized with the user's voice (those longer than 0.8 s are not used); a language not listed uses its pack's phrases.backchannels.",
      ),
    maximumPhrases: z
      .number()
      .int()
      .positive()
      .default(100)
      .describe("Most phrases per language (each one is synthesized for every dialogue's user voice)."),
  })
  .strict()
  .prefault({})
  .describe("The user's backchannels inside the system's answers, at the measured rate and positions.");

/** `timeline`: the turn-taking timeline drawn from measured timing statistics. */
export const timelineSchema = z
  .object({
    statistics: z
      .record(
        languageCodeSchema,
        z
          .string()
          .nullable()
          .describe('Timing-statistics JSON of this language code (relative to the config file), or null.')
          .meta({ examples: ['../timing/en.timing.json'] }),
      )
      .default({})
      .describe(
        "Timing-statistics JSON per language code; absent or null = the language pack's shipped statistics, measured on real telephone calls.",
      ),
    leadingSilenceSeconds: z
      .number()
      .nonnegative()
      .default(0.5)
      .describe('Silence before the first utterance of a dialogue, seconds.'),
    trailingSilenceSeconds: z
      .number()
      .nonnegative()
      .default(0.5)
      .describe('Silence after the last utterance of a dialogue, seconds.'),
    // Telephone calls hold rare silences of 10-20 s (a topic runs out); in a question/answer exchange
    // they read as a broken recording.
    maximumGapSeconds: z
      .number()
      .positive()
      .nullable()
      .default(5)
      .describe(
        'Longest silence a speaker change may get, seconds (null = no limit); longer draws are redrawn, never clipped.',
      ),
    // The benchmark evaluates a system TURN_SHIFT only when the system is silent at the user's TURN end.
    profile: z
      .enum(['benchmark', 'natural'])
      .default('benchmark')
      .describe(
        'benchmark: the system answers after a positive measured gap, never overlapping the user, and a share of the questions is spoken in two parts (TURN_HOLD); natural: measured offsets in both signs, no split question (training data).',
      ),
    turnHoldShare: z
      .number()
      .min(0)
      .max(1)
      .nullable()
      .default(null)
      .describe(
        "Share of questions spoken in two parts with a pause > 0.5 s (a user TURN_HOLD); null = the profile's (benchmark 0.15, natural 0).",
      ),
    bargeIn: bargeInSchema,
    backchannels: backchannelsSchema,
  })
  .strict()
  .prefault({})
  .describe('The turn-taking timeline: silences, speaker-change offsets, TURN_HOLD pauses, barge-in, backchannels.');
