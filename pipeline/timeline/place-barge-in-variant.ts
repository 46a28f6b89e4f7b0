/**
 * The barge-in variant of a dialogue (the benchmark's `*_bargein` datasets, evaluated with
 * `--ignored-events TURN_SHIFT,TURN_HOLD,BC` and context): the same utterances, in which the user
 * starts the next question while the system is still answering, on every answer long enough to
 * hold it. All times are integer centiseconds.
 *
 * ## Where the user comes in, and where the system stops
 * For each system answer followed by a user question (a speaker change from the system channel to
 * the user channel), two values are drawn from the measured barge-ins of that direction
 * (timing-statistics.ts `fitTimingModel`):
 * - the **overlap** `o` (> 0.40 s): minus a floor-transfer offset from the barge-in part of the
 *   direction's offsets (`speakerChangeBargeIns`). In a real barge-in whose interrupted speaker
 *   yields, the measured overlap is how long the interrupted speaker kept talking after the
 *   interrupter started (the floor ends when they stop);
 * - the **lead** `L`: how far into the interrupted TURN the interrupter starts (`bargeInLeads`,
 *   measured as `turn.start − floor.start` of the same barge-ins); when the statistics have no leads
 *   (files written before them) `L` is drawn uniformly over the feasible range.
 * Then, by `systemYields`:
 * - `next-word-boundary` (default): the user starts `L` into the answer; the system stops at the first
 *   word end at or after `L + o` (a speaker yields at a word boundary, not mid-word), so the actual
 *   overlap is `cut − L ≥ o`; the rest of the answer is not spoken (its words leave the alignment);
 * - `runs-on`: the system finishes its answer; the user starts `o` before its end (`L = d − o`).
 * A pair is feasible when `L ≥ minimumLeadCs` (the system has spoken 1 s), the cut exists, and the
 * question outlasts the rest of the answer (`question ≥ cut − L + minimumOutlastCs`), so the
 * question takes the floor and the event is a BARGE_IN anchored at the question's TURN start; and,
 * under `next-word-boundary`, when the cut leaves at least `minimumUnspokenCs` of the answer or
 * `minimumUnspokenWords` of its words unspoken (default 1 s or 3 words: a barge-in after
 * which the answer would have ended anyway is no test of stopping, and is not placed). Up to
 * `maximumDraws` pairs are drawn per answer; when none fits, the smallest barge-in (`L` =
 * `minimumLeadCs`, `o` = 0.41 s) is tried; an answer where even that does not fit is too short to
 * hold a barge-in and keeps the ordinary (benchmark profile) transition, drawn without overlaps beyond
 * 0.40 s (`minimumOffsets`): every BARGE_IN of the variant is a planned one, which leaves words unspoken.
 *
 * The barge-in offsets are then pinned (`placeDialogue` `pinnedOffsets`) and the rest of the
 * dialogue is placed as usual, with the truncated answers' durations; the system never overlaps the
 * user (`gapOnlyChannel`). A separate random stream (`barge-in-variant`) is used for the draws, so
 * the base dataset's timeline is not disturbed.
 */
import { DEFAULT_EVENT_THRESHOLDS } from '../events/index.ts';
import type { Centiseconds, Channel, SpeechSegment } from '../model/types.ts';
import { drawFromDistribution } from './empirical-distribution.ts';
import {
  DEFAULT_PLACE_DIALOGUE_OPTIONS,
  placeDialogue,
  TimelinePlacementError,
  type PlaceDialogueInput,
  type PlacedDialogue,
  type UtteranceToPlace,
} from './place-dialogue.ts';
import { dialogueRandomStream } from '../model/random.ts';
import { channelDirection, fitTimingModel } from './timing-statistics.ts';

/** Shortest stretch of speech kept before a cut (the speech detector drops blips under 3 cs; margin). */
const MINIMUM_KEPT_SPEECH_CS = 5;

/** Where the interrupted system stops. */
export type SystemYields = 'next-word-boundary' | 'runs-on';

/** One utterance of the variant: what placement needs plus its word ends (the possible cut points). */
export interface VariantUtterance extends UtteranceToPlace {
  /** Where the utterance can stop (word ends, or yield points near them), centiseconds from its speech start, ascending. */
  wordEndsCs: readonly Centiseconds[];
}

/** A barge-in placed on one answer. */
export interface PlannedBargeIn {
  /** Index of the interrupted answer. */
  answerIndex: number;
  /** Index of the question that barges in. */
  questionIndex: number;
  /** Where the question starts, centiseconds into the answer's speech. */
  leadCs: Centiseconds;
  /** The drawn overlap, centiseconds (> 40). */
  drawnOverlapCs: Centiseconds;
  /** Where the answer's speech stops, centiseconds from its speech start (its full length under `runs-on`). */
  cutCs: Centiseconds;
  /** Words of the answer not spoken (cut off). */
  wordsCut: number;
  /** Length of the answer's speech not spoken, centiseconds (`answer duration − cut`; 0 under `runs-on`). */
  unspokenCs: Centiseconds;
  /** The smallest barge-in was used because no drawn pair fitted. */
  fallback: boolean;
}

/** The variant's placement and what it did. */
export interface BargeInVariantPlacement {
  placement: PlacedDialogue;
  /** Durations and speech segments of the utterances as placed (answers cut where the system yields). */
  utterances: UtteranceToPlace[];
  bargeIns: PlannedBargeIn[];
  /** Answers followed by a question that are too short to hold a barge-in (indices). */
  answersTooShort: number[];
}

/** Settings of the variant. */
export interface BargeInVariantOptions {
  systemChannel: Channel;
  systemYields: SystemYields;
  /** Pairs drawn per answer before the smallest barge-in is tried (default 100). */
  maximumDraws: number;
  /** `next-word-boundary`: the least of the answer a barge-in leaves unspoken, centiseconds or words (either suffices); default 100 cs, 3 words. */
  minimumUnspokenCs?: Centiseconds;
  minimumUnspokenWords?: number;
}

/**
 * Plans and places the barge-in variant of one dialogue (module comment).
 * @param input as `placeDialogue` (seed, statistics, options, backchannels), with each utterance's
 *   word ends; `options.gapOnlyChannel` is set to the system channel
 * @throws TimelinePlacementError for invalid input (as `placeDialogue`) or statistics without barge-ins
 *   in the system→user direction
 */
export function placeBargeInVariant(
  input: Omit<PlaceDialogueInput, 'utterances' | 'pinnedOffsets'> & { utterances: readonly VariantUtterance[] },
  variant: BargeInVariantOptions,
): BargeInVariantPlacement {
  const { dialogueId } = input;
  const options = { ...DEFAULT_PLACE_DIALOGUE_OPTIONS, ...input.options, gapOnlyChannel: variant.systemChannel };
  const model = fitTimingModel(input.statistics);
  const userChannel: Channel = variant.systemChannel === 0 ? 1 : 0;
  const direction = channelDirection(variant.systemChannel, userChannel);
  const overlaps = model.speakerChangeBargeIns[direction];
  if (overlaps === null)
    throw new TimelinePlacementError(dialogueId, `the timing statistics have no barge-ins (${direction}) to draw from`);
  const leads = model.bargeInLeads[direction];
  const random = dialogueRandomStream(input.seed, dialogueId, 'barge-in-variant');
  const smallestOverlap = DEFAULT_EVENT_THRESHOLDS.bargeInOverlap + 1;
  const minimumUnspokenCs = variant.minimumUnspokenCs ?? 100;
  const minimumUnspokenWords = variant.minimumUnspokenWords ?? 3;

  const placed: UtteranceToPlace[] = input.utterances.map((utterance) => ({
    channel: utterance.channel,
    durationCs: utterance.durationCs,
    ...(utterance.speechSegments ? { speechSegments: utterance.speechSegments } : {}),
  }));
  const pinned = new Map<number, Centiseconds>();
  const bargeIns: PlannedBargeIn[] = [];
  const answersTooShort: number[] = [];

  for (let index = 0; index + 1 < input.utterances.length; index += 1) {
    const answer = input.utterances[index] as VariantUtterance;
    const question = input.utterances[index + 1] as VariantUtterance;
    if (answer.channel !== variant.systemChannel || question.channel !== userChannel) continue;
    /** The cut for a lead and overlap, or null when the pair does not fit. */
    const cutFor = (leadCs: number, overlapCs: number): number | null => {
      if (leadCs < options.minimumLeadCs) return null;
      const cut =
        variant.systemYields === 'runs-on'
          ? answer.durationCs
          : answer.wordEndsCs.find(
              (end) => end >= leadCs + overlapCs && end - leadCs > DEFAULT_EVENT_THRESHOLDS.bargeInOverlap,
            );
      if (cut === undefined || cut > answer.durationCs || cut - leadCs < overlapCs) return null;
      // the speech kept of the segment the cut falls in must stay a detectable stretch (≥ 5 cs)
      const across = answer.speechSegments?.find((segment) => segment.start < cut && cut <= segment.end);
      if (across !== undefined && cut - across.start < MINIMUM_KEPT_SPEECH_CS) return null;
      if (question.durationCs < cut - leadCs + options.minimumOutlastCs) return null;
      if (variant.systemYields === 'next-word-boundary') {
        const unspokenWords = answer.wordEndsCs.filter((end) => end > cut).length;
        if (answer.durationCs - cut < minimumUnspokenCs && unspokenWords < minimumUnspokenWords) return null;
      }
      return cut;
    };
    let chosen: { leadCs: number; overlapCs: number; cutCs: number; fallback: boolean } | null = null;
    for (let draw = 0; draw < variant.maximumDraws && chosen === null; draw += 1) {
      const overlapCs = -drawFromDistribution(overlaps, random);
      const leadCs =
        variant.systemYields === 'runs-on'
          ? answer.durationCs - overlapCs
          : leads !== null
            ? drawFromDistribution(leads, random)
            : random.integer(options.minimumLeadCs, Math.max(options.minimumLeadCs, answer.durationCs - overlapCs));
      const cutCs = cutFor(leadCs, overlapCs);
      if (cutCs !== null) chosen = { leadCs, overlapCs, cutCs, fallback: false };
    }
    if (chosen === null) {
      const leadCs = variant.systemYields === 'runs-on' ? answer.durationCs - smallestOverlap : options.minimumLeadCs;
      const cutCs = cutFor(leadCs, smallestOverlap);
      if (cutCs !== null) chosen = { leadCs, overlapCs: smallestOverlap, cutCs, fallback: true };
    }
    if (chosen === null) {
      answersTooShort.push(index);
      continue;
    }
    const { leadCs, overlapCs, cutCs, fallback } = chosen;
    placed[index] = {
      channel: answer.channel,
      durationCs: cutCs,
      ...(answer.speechSegments ? { speechSegments: clipSegments(answer.speechSegments, cutCs) } : {}),
    };
    pinned.set(index + 1, leadCs - cutCs);
    bargeIns.push({
      answerIndex: index,
      questionIndex: index + 1,
      leadCs,
      drawnOverlapCs: overlapCs,
      cutCs,
      wordsCut: answer.wordEndsCs.filter((end) => end > cutCs).length,
      unspokenCs: answer.durationCs - cutCs,
      fallback,
    });
  }

  // an answer not barged in on keeps an ordinary transition, but never one the rules would call a
  // BARGE_IN (overlap > 0.40 s): the system would not stop, and the benchmark would test it as one
  const minimumOffsets = new Map(answersTooShort.map((index) => [index + 1, -DEFAULT_EVENT_THRESHOLDS.bargeInOverlap]));
  const placement = placeDialogue({ ...input, utterances: placed, options, pinnedOffsets: pinned, minimumOffsets });
  return { placement, utterances: placed, bargeIns, answersTooShort };
}

/** Speech segments clipped to `[0, cutCs]` (segments after the cut dropped, the one across it shortened). */
export function clipSegments(segments: readonly SpeechSegment[], cutCs: Centiseconds): SpeechSegment[] {
  return segments
    .filter((segment) => segment.start < cutCs)
    .map((segment) => ({ start: segment.start, end: Math.min(segment.end, cutCs) }));
}
