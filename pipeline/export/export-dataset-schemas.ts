/**
 * The parts of a dataset's `manifest.json` and `metadata/{id}.json` that export reads
 * (./export-dataset.ts), as zod schemas: fields it does not use are ignored, so a
 * dataset written by another version of duplexsynth still exports.
 */
import { z } from 'zod';

const channelSchema = z.union([z.literal(0), z.literal(1)]);
/** What export reads of `manifest.json`. */
export const exportManifestSchema = z.object({
  sampleRate: z.number().int().positive().optional(),
  sampleRates: z.array(z.number().int().positive()).optional(),
  channels: z.object({ user: channelSchema, system: channelSchema }).optional(),
  fullBand: z
    .object({ directory: z.string().regex(/^[A-Za-z0-9._-]+$/), sampleRates: z.array(z.number().int().positive()) })
    .optional(),
  files: z.record(z.string(), z.string()).optional(),
});
const textSchema = z.object({
  synthesized: z.string().nullable().optional(),
  final: z.string().nullable().optional(),
  spoken: z.string().nullable().optional(),
  source: z.string().nullable().optional(),
  transcript: z.string().nullable().optional(),
});
/** What export reads of `metadata/{id}.json`. */
export const exportMetadataSchema = z.object({
  /** MT-QA: `user` and `system`; chat: `channel0` and `channel1`; each with its channel. */
  speakers: z.record(z.string(), z.object({ speakerId: z.string().min(1), channel: channelSchema.optional() })),
  utterances: z.array(
    z.object({
      turnNumber: z.number().int().optional(),
      role: z.string(),
      kind: z.enum(['question', 'answer', 'backchannel', 'turn']),
      channel: channelSchema,
      start: z.number().nonnegative(),
      end: z.number().nonnegative(),
      text: textSchema,
      cutOff: z.object({ plannedText: z.string(), unspokenWords: z.array(z.string()) }).optional(),
    }),
  ),
  backchannels: z
    .array(
      z.object({
        channel: channelSchema,
        start: z.number().nonnegative(),
        end: z.number().nonnegative(),
        text: z.string(),
      }),
    )
    .default([]),
});
