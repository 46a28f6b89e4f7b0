/**
 * Stage `annotate-events`: the benchmark events of a placed dialogue, computed from the speech
 * segments inside the placed utterances with the docs/events.md rules (pipeline/events), plus the
 * role-aware check of docs/events.md ("Synthetic dialogues: roles versus labels"): every question or answer that the rules
 * label BC, wholly or in part, is reported. The event file itself always follows the rules.
 */
import { computeEvents, formatEventsLine } from '../pipeline/events/index.ts';
import type { ChannelEvents, ChannelSegments } from '../pipeline/model/types.ts';
import type { RoleLabelDisagreement } from '../pipeline/model/dataset-summary.ts';
import type { PlacedTimeline, PlacedUtterance } from './place-timeline.ts';
import type { Stage } from '../pipeline/run/stage.ts';

/** Events of one dialogue, its JSONL line, and the role/label disagreements. */
export interface AnnotatedDialogue {
  events: ChannelEvents;
  line: string;
  disagreements: RoleLabelDisagreement[];
}

/**
 * Compute events and check roles.
 * @param segments per-channel speech segments, integer centiseconds (from `placeTimeline`)
 * @throws SegmentValidationError (pipeline/events) when segments overlap within a channel
 */
export function annotateDialogue(
  dialogueId: string,
  segments: ChannelSegments,
  timeline: Pick<PlacedTimeline, 'placement' | 'channels'>,
  utterances: readonly PlacedUtterance[],
): AnnotatedDialogue {
  const events = computeEvents(segments);
  const disagreements: RoleLabelDisagreement[] = [];
  utterances.forEach((utterance, index) => {
    if (utterance.kind === 'backchannel') return;
    const channel = timeline.channels[index]!;
    const start = timeline.placement.starts[index]!;
    const end = timeline.placement.ends[index]!;
    const units = events[channel].filter(
      (event) => (event.event === 'TURN' || event.event === 'BC') && event.start < end && event.end > start,
    );
    const backchannels = units.filter((event) => event.event === 'BC');
    if (backchannels.length === 0) return;
    disagreements.push({
      dialogueId,
      utteranceIndex: index,
      turnNumber: utterance.turnNumber,
      role: utterance.role,
      kind: utterance.kind,
      text: utterance.spokenText,
      extent: units.length === backchannels.length ? 'whole' : 'part',
      backchannelSpans: backchannels.map((event) => [event.start / 100, event.end / 100]),
    });
  });
  return { events, line: formatEventsLine(dialogueId, events), disagreements };
}

/** Input of {@link annotateEventsStage}: a placed dialogue and its utterances as placed. */
export interface AnnotateEventsInput {
  dialogueId: string;
  timeline: Pick<PlacedTimeline, 'segments' | 'placement' | 'channels'>;
  /** The utterances in the timeline's order (a barge-in variant's cut answers included). */
  utterances: readonly PlacedUtterance[];
}

/**
 * Stage `annotate-events`: {@link annotateDialogue} of the timeline's speech segments. No parameters
 * (the docs/events.md rules are fixed); not cached.
 * @throws as {@link annotateDialogue}
 */
export const annotateEventsStage: Stage<AnnotateEventsInput, Record<string, never>, AnnotatedDialogue> = {
  name: 'annotate-events',
  inputs: ['dialogueId', 'timeline', 'utterances'],
  parameters: [],
  cacheStages: [],
  cacheKeys: async () => [],
  run: async (input) => annotateDialogue(input.dialogueId, input.timeline.segments, input.timeline, input.utterances),
};
