/**
 * `split.json` of a dataset: how its dialogues were split into test, test_other (dev) and test_small
 * (stages/split-dev-test.ts), ranked by dialogue-level DNSMOS OVRL.
 */
import { z } from 'zod';

/**
 * How test is filled: `speaker-group` (whole groups of dialogues connected by shared speakers, so dev
 * loses nothing to speaker overlap) or `dialogue` (the best dialogues one by one, then dev drops every
 * dialogue sharing a speaker with test). pipeline/quality/split-selection.ts.
 */
export const SPLIT_UNITS = ['speaker-group', 'dialogue'] as const;
export type SplitUnit = (typeof SPLIT_UNITS)[number];
/** The default of the config (`quality.splitUnit`), the `split` command and the split stage alike. */
export const DEFAULT_SPLIT_UNIT: SplitUnit = 'speaker-group';

const split = z.object({
  ids: z.array(z.string()),
  dialogues: z.number().int().nonnegative(),
  hours: z.number().nonnegative(),
});

export const splitReportSchema = z.object({
  format: z.literal('duplexsynth-split'),
  version: z.literal(1),
  language: z.string(),
  dataset: z.string(),
  settings: z.object({
    rankedBy: z.string(),
    unit: z.enum(SPLIT_UNITS),
    testHours: z.number().nonnegative(),
    testSmall: z.number().nullable(),
    speakerDisjoint: z.boolean(),
    speakerKey: z.string(),
  }),
  /** A split left out (none chosen) is absent. */
  splits: z.object({ test: split.optional(), dev: split.optional(), test_small: split.optional() }),
  /** Dialogues left out of dev because they share a speaker with test, with the shared speakers. */
  excludedForSpeakerOverlap: z.array(z.object({ id: z.string(), sharedSpeakers: z.array(z.string()) })),
  /**
   * Every dialogue of the dataset that is in neither test nor test_other, with the reason (speaker
   * overlap with test; for a variant, missing here). Absent in files written before it existed.
   */
  excluded: z.array(z.object({ id: z.string(), reason: z.string() })).default([]),
  devEmptyBecauseOfSpeakerOverlap: z.boolean(),
  devSharingSpeakersWithTest: z.array(z.string()),
  testSpeakers: z.array(z.string()),
  /** Groups of dialogues connected by shared speakers, and the size of the largest. */
  speakerGroups: z.object({ count: z.number().int().nonnegative(), largest: z.number().int().nonnegative() }),
  targetReached: z.boolean(),
  withoutDnsmos: z.array(z.string()),
  /** The ranking with each dialogue's OVRL. */
  ranking: z.array(z.object({ id: z.string(), ovrl: z.number().nullable() })),
  /** Filled when several languages are split together: this dataset's ids also in another language's test set. */
  sharedTestWithOtherLanguages: z.array(
    z.object({ language: z.string(), dataset: z.string(), ids: z.array(z.string()) }),
  ),
  warnings: z.array(z.string()),
});

/** A dataset's split. */
export type SplitReport = z.infer<typeof splitReportSchema>;
