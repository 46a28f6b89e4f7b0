/**
 * Choosing the clips of a speaker prompt pool (steps 1 to 5 of ./speaker-prompts.ts, which cuts and
 * writes them): the per-speaker selection (step 5) and the whole plan. The options and clip shapes are
 * in ./speaker-prompt-options.ts, the candidate clips of steps 1 to 4 in ./speaker-prompt-candidates.ts;
 * this module re-exports both. All times integer centiseconds.
 */
import type { ReferenceRecording } from '../pipeline/model/types.ts';
import { dialogueRandomStream } from '../pipeline/model/random.ts';
import { candidateSpeakerPrompts } from './speaker-prompt-candidates.ts';
import {
  resolveSpeakerPromptOptions,
  type PlannedSpeakerPrompt,
  type RejectedSpeakerPrompt,
  type ResolvedSpeakerPromptOptions,
  type SpeakerPromptOptions,
  type SpeakerPromptPlan,
} from './speaker-prompt-options.ts';

export {
  DEFAULT_SPEAKER_PROMPT_OPTIONS,
  EBU_R128_LOUDNESS,
  resolveSpeakerPromptOptions,
  SPEAKER_PROMPT_MANIFEST,
  type PlannedSpeakerPrompt,
  type RejectedSpeakerPrompt,
  type ResolvedSpeakerPromptOptions,
  type SpeakerPromptLoudness,
  type SpeakerPromptOptions,
  type SpeakerPromptPlan,
  type SpeakerPromptTranscriber,
  type SpeakerPromptTranscription,
} from './speaker-prompt-options.ts';
export { candidateSpeakerPrompts, seconds } from './speaker-prompt-candidates.ts';

/** Code-unit string order (locale-independent). */
function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Manifest order: corpus, speaker, recording, start, channel. */
function compareClips(a: PlannedSpeakerPrompt, b: PlannedSpeakerPrompt): number {
  return (
    compareText(a.corpus, b.corpus) ||
    compareText(a.speaker, b.speaker) ||
    compareText(a.recording.id, b.recording.id) ||
    a.start - b.start ||
    a.channel - b.channel
  );
}

/** Step 5 of the module comment of ./speaker-prompts.ts: the clips kept per speaker, in manifest order, and those left out. */
export function selectPerSpeaker(
  candidates: readonly { clip: PlannedSpeakerPrompt; order: number }[],
  resolved: ResolvedSpeakerPromptOptions,
): { clips: PlannedSpeakerPrompt[]; skipped: string[]; rejected: RejectedSpeakerPrompt[] } {
  const bySpeaker = new Map<string, { clip: PlannedSpeakerPrompt; order: number }[]>();
  for (const candidate of candidates) {
    const list = bySpeaker.get(candidate.clip.speaker) ?? [];
    list.push(candidate);
    bySpeaker.set(candidate.clip.speaker, list);
  }
  const kept: PlannedSpeakerPrompt[] = [];
  const skipped: string[] = [];
  const rejected: RejectedSpeakerPrompt[] = [];
  for (const [speaker, list] of bySpeaker) {
    if (resolved.selectionSeed === null) {
      list.sort(
        (a, b) =>
          b.clip.end - b.clip.start - (a.clip.end - a.clip.start) || a.order - b.order || a.clip.start - b.clip.start,
      );
    } else {
      // Fisher-Yates on the manifest order, from a stream seeded by (seed, corpus:speaker).
      list.sort((a, b) => compareClips(a.clip, b.clip));
      const stream = dialogueRandomStream(
        resolved.selectionSeed,
        `${list[0]?.clip.corpus}:${speaker}`,
        'speaker-prompts',
      );
      for (let index = list.length - 1; index > 0; index -= 1) {
        const other = stream.integer(0, index);
        [list[index], list[other]] = [list[other] as (typeof list)[number], list[index] as (typeof list)[number]];
      }
    }
    const limit = resolved.clipsPerSpeaker ?? list.length;
    kept.push(...list.slice(0, limit).map((entry) => entry.clip));
    if (list.length > limit) {
      skipped.push(`speaker ${speaker}: ${list.length - limit} more clips over the limit of ${limit} per speaker`);
      for (const { clip } of list.slice(limit)) {
        rejected.push({
          corpus: clip.corpus,
          recording: clip.recording.id,
          channel: clip.channel,
          speaker,
          start: clip.start,
          end: clip.end,
          reason: `over the limit of ${limit} clips per speaker`,
        });
      }
    }
  }
  kept.sort(compareClips);
  const ids = new Set<string>();
  for (const clip of kept) {
    if (ids.has(clip.id)) throw new Error(`speaker prompts: two clips have the id ${clip.id}`);
    ids.add(clip.id);
  }
  return { clips: kept, skipped, rejected };
}

/**
 * Chooses the clips (no audio is read; `minimumSnrDb` is applied by {@link writeSpeakerPromptPool}).
 *
 * @param recordings reference recordings; those without supervisions or without audio are skipped
 *   (listed in `skipped`).
 * @param options see {@link SpeakerPromptOptions}.
 * @returns the clips in manifest order (corpus, speaker, recording, start), the skip lines and the
 *   rejected candidates with reasons.
 * @throws RangeError for invalid options; Error when two clips get the same id.
 */
export function planSpeakerPrompts(
  recordings: readonly ReferenceRecording[],
  options: SpeakerPromptOptions = {},
): SpeakerPromptPlan {
  const resolved = resolveSpeakerPromptOptions(options);
  const candidates = candidateSpeakerPrompts(recordings, resolved);
  const selected = selectPerSpeaker(candidates.candidates, resolved);
  return {
    clips: selected.clips,
    skipped: [...candidates.skipped, ...selected.skipped],
    rejected: [...candidates.rejected, ...selected.rejected],
  };
}
