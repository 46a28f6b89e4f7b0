/**
 * One line of a speaker prompt pool manifest (`speaker-prompts.jsonl`, written by `duplexsynth prompts`,
 * corpora/speaker-prompts.ts; read by the TTS voice-prompt roster): a single-speaker clip of a real
 * recording with its exact transcript.
 */
import { z } from 'zod';

export const speakerPromptLineSchema = z.object({
  id: z.string().min(1),
  speaker: z.string().min(1),
  /** The recording's `format` (corpus), e.g. `candor`. */
  corpus: z.string().min(1),
  /** Recording id (absent in hand-made pools). */
  recording: z.string().optional(),
  /** Clip start and end in the recording, seconds (0.01 s resolution). */
  start: z.number().optional(),
  end: z.number().optional(),
  /** Exact transcript of the clip (CosyVoice `prompt_text`); a clip without one is no voice prompt. */
  text: z.string().refine((text) => text.trim() !== '', 'is empty: a clip without its transcript is no voice prompt'),
  /**
   * Who wrote the text when the corpus had none: `asr <service> <model>` (an ASR service) or
   * `filled-in <file>` (a person, in the pool's transcripts TSV). Absent: the corpus's transcript.
   */
  transcribedBy: z.string().min(1).optional(),
  /** WAV file, relative to the manifest's folder (`clips/<id>.wav`) or absolute. */
  path: z.string().min(1),
  /** Seconds. */
  durationSeconds: z.number().positive(),
  /** Signal-to-noise ratio, dB, 0.1 dB resolution (only with `minimumSnrDb`; null for a digitally silent background). */
  snrDb: z.number().nullable().optional(),
  /** Integrated loudness after the gain, LUFS, and the gain applied, dB (only with `loudness`). */
  loudnessLufs: z.number().optional(),
  gainDb: z.number().optional(),
});

/** A speaker prompt manifest line. */
export type SpeakerPromptLine = z.infer<typeof speakerPromptLineSchema>;
