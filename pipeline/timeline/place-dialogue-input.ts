/**
 * What `placeDialogue` (./place-dialogue.ts) takes and returns: the utterances to place, the options
 * (centiseconds) with their defaults, the placed dialogue, the error for bad input, and the checks of
 * options and utterances.
 */
import { DEFAULT_EVENT_THRESHOLDS } from '../events/index.ts';
import type { Centiseconds, Channel, SpeechSegment } from '../model/types.ts';
import type { BackchannelPlacementReport, BackchannelRequest, PlacedBackchannel } from './place-backchannels.ts';
import type { TimingStatistics } from './timing-statistics.ts';

/** One utterance to place: its channel and the length of its speech (first to last speech sample). */
export interface UtteranceToPlace {
  channel: Channel;
  /** Speech duration in integer centiseconds, > 0 (leading and trailing silence of the audio excluded). */
  durationCs: Centiseconds;
  /**
   * Optional: the utterance's own speech segments, centiseconds relative to its first speech sample
   * (sorted, inside `[0, durationCs]`). Used only to keep backchannels inside this utterance's speech
   * (its IPUs); without it the whole `[0, durationCs]` counts as speech.
   */
  speechSegments?: readonly SpeechSegment[];
}

/** Placement options, all integer centiseconds. See the module comment for each rule. */
export interface PlaceDialogueOptions {
  /** Silence before the first utterance (default 50 = 0.5 s). */
  leadingSilenceCs: Centiseconds;
  /** Silence after the latest utterance end (default 50 = 0.5 s). */
  trailingSilenceCs: Centiseconds;
  /** Smallest silence between two units of one speaker, utterances or backchannels (default 60; must exceed the 50 cs IPU pause threshold). */
  minimumSameSpeakerGapCs: Centiseconds;
  /** For a speaker change, the previous utterance's speech before the new one may start (default 100). */
  minimumLeadCs: Centiseconds;
  /** How much later than the floor the new utterance must end (default 50; at least 1). */
  minimumOutlastCs: Centiseconds;
  /** Largest allowed offset (gap) of any transition, or null for no limit (default null). */
  maximumGapCs: Centiseconds | null;
  /** Half-width of the uniform integer jitter added to each drawn value (default 0). */
  jitterCs: Centiseconds;
  /** Fresh draws per transition (and per backchannel position) before the fallback (default 100, at least 1). */
  maximumDraws: number;
  /**
   * Smooth the measured distributions (default true: empirical-distribution.ts, kernel widths from
   * Silverman's rule capped by the data's spacing); false draws the measured values exactly.
   */
  smoothing: boolean;
  /** Deferred draws kept per queue (direction or same-speaker); the oldest is dropped (and counted unplaced) beyond it (default 32). */
  maximumDeferredDraws: number;
  /**
   * A channel whose speaker never overlaps on taking the turn (default null: none). Speaker changes
   * *to* this channel draw from the positive part of the direction's offsets (gaps ≥ 0.01 s,
   * timing-statistics.ts `speakerChangeGaps`): the benchmark profile's system, whose TURN_SHIFTs the
   * evaluation only keeps when the system is silent at the user's TURN end (closed interval, so a gap
   * of 0 is dropped too; pipeline/events/evaluable-events.ts).
   */
  gapOnlyChannel: Channel | null;
}

/** The defaults of `PlaceDialogueOptions`. */
export const DEFAULT_PLACE_DIALOGUE_OPTIONS: Readonly<PlaceDialogueOptions> = Object.freeze({
  leadingSilenceCs: 50,
  trailingSilenceCs: 50,
  minimumSameSpeakerGapCs: 60,
  minimumLeadCs: 100,
  minimumOutlastCs: 50,
  maximumGapCs: null,
  jitterCs: 0,
  maximumDraws: 100,
  smoothing: true,
  maximumDeferredDraws: 32,
  gapOnlyChannel: null,
});

/** Input of `placeDialogue`. */
export interface PlaceDialogueInput {
  dialogueId: string;
  /** Build seed; with `dialogueId` it seeds the dialogue's random streams. */
  seed: number;
  /** Utterances in speaking order. */
  utterances: readonly UtteranceToPlace[];
  statistics: TimingStatistics;
  /** Overrides of `DEFAULT_PLACE_DIALOGUE_OPTIONS`. */
  options?: Partial<PlaceDialogueOptions>;
  /** When given, listener backchannels are placed too (place-backchannels.ts). */
  backchannels?: BackchannelRequest;
  /**
   * Offsets fixed by the caller, by utterance index (≥ 1), integer centiseconds from the floor end
   * (the barge-in variant pins its barge-ins). They are not drawn, count as assigned values in the
   * own-channel windows, and must satisfy the constraints (else TimelinePlacementError).
   */
  pinnedOffsets?: ReadonlyMap<number, Centiseconds>;
  /**
   * Lower bounds of drawn offsets set by the caller, by utterance index (≥ 1), integer centiseconds
   * from the floor end: a draw below is not used there (the barge-in variant keeps the answers it
   * does not barge in on free of overlaps beyond 0.40 s, so no BARGE_IN appears where the system
   * need not stop).
   */
  minimumOffsets?: ReadonlyMap<number, Centiseconds>;
}

/** How one utterance (index ≥ 1) was placed. */
export interface PlacedTransition {
  /** Index of the utterance placed. */
  index: number;
  /** `speaker-change` when utterance `index − 1` is on the other channel, else `same-speaker`. */
  kind: 'speaker-change' | 'same-speaker';
  /** Index of the floor utterance the offset is measured from (always `index − 1` under the constraints). */
  floorIndex: number;
  /** `start − floor end`, centiseconds (negative = overlap). */
  offset: Centiseconds;
  /** `drawn` (its assigned value or a fresh draw), `deferred` (a value that did not fit an earlier transition), `fallback`, `pinned` (given by the caller). */
  source: 'drawn' | 'deferred' | 'fallback' | 'pinned';
  /** Values (assigned or freshly drawn) that did not fit this transition and were deferred. */
  rejectedDraws: number;
  /** True when the deterministic fallback was used. */
  fallback: boolean;
}

/** A placed dialogue. All times integer centiseconds on the dialogue timeline (0 = start of audio). */
export interface PlacedDialogue {
  /** Speech start of each utterance, in input order. */
  starts: Centiseconds[];
  /** Speech end of each utterance (`start + durationCs`). */
  ends: Centiseconds[];
  /** Floor-transfer offset of each transition: `offsets[i − 1]` belongs to utterance `i`. */
  offsets: Centiseconds[];
  /** Details per transition, same order as `offsets`. */
  transitions: PlacedTransition[];
  /**
   * Values that did not fit, over the whole dialogue: `unassignableDraws` plus every transition's
   * `rejectedDraws`.
   */
  resampled: number;
  /** Values replaced during the assignment because no transition of their kind could take them. */
  unassignableDraws: number;
  /** Transitions that used a deferred draw. */
  deferredUsed: number;
  /** Values never used: replaced during assignment, still deferred at the end, or pushed out of a full queue. */
  unplacedDraws: number;
  /** Transitions placed by the deterministic fallback. */
  fallbacks: number;
  leadingSilenceCs: Centiseconds;
  /** Latest utterance end plus the trailing silence. */
  totalDurationCs: Centiseconds;
  /**
   * Indices of utterances of at most 0.80 s (80 cs): as one IPU they become `BC`, not `TURN`
   * (docs/events.md step 2), and take no part in turn-taking, so the transitions around them will not
   * be labelled as placed. Upstream should lengthen them (docs/dataset-format.md "Known defects of the
   * synthetic reference"); listed for the quality report.
   */
  backchannelLengthIndices: number[];
  /** Listener backchannels placed (empty unless requested), sorted by start. */
  backchannels: PlacedBackchannel[];
  /** What the backchannel placement did, or null when none were requested. */
  backchannelReport: BackchannelPlacementReport | null;
}

/** Invalid input to `placeDialogue`; the message names the dialogue. */
export class TimelinePlacementError extends Error {
  override readonly name = 'TimelinePlacementError';
  constructor(
    readonly dialogueId: string,
    detail: string,
  ) {
    super(`dialogue ${dialogueId}: ${detail}`);
  }
}

/**
 * The options of one dialogue: the defaults with `overrides` applied, checked.
 * @throws TimelinePlacementError naming the dialogue and the option when one is out of range
 */
export function resolveOptions(
  dialogueId: string,
  overrides: Partial<PlaceDialogueOptions> | undefined,
): PlaceDialogueOptions {
  const options: PlaceDialogueOptions = { ...DEFAULT_PLACE_DIALOGUE_OPTIONS, ...overrides };
  const fail = (detail: string): never => {
    throw new TimelinePlacementError(dialogueId, `option ${detail}`);
  };
  for (const key of [
    'leadingSilenceCs',
    'trailingSilenceCs',
    'minimumSameSpeakerGapCs',
    'minimumLeadCs',
    'minimumOutlastCs',
    'jitterCs',
    'maximumDraws',
    'maximumDeferredDraws',
  ] as const) {
    const value = options[key];
    if (!Number.isSafeInteger(value) || value < 0) fail(`${key} must be a non-negative integer, got ${value}`);
  }
  if (options.maximumGapCs !== null && (!Number.isSafeInteger(options.maximumGapCs) || options.maximumGapCs < 0)) {
    fail(`maximumGapCs must be null or a non-negative integer, got ${options.maximumGapCs}`);
  }
  if (options.minimumSameSpeakerGapCs <= DEFAULT_EVENT_THRESHOLDS.maxPauseInIpu) {
    fail(
      `minimumSameSpeakerGapCs must exceed the IPU pause threshold of ${DEFAULT_EVENT_THRESHOLDS.maxPauseInIpu} cs ` +
        `(docs/events.md step 1), got ${options.minimumSameSpeakerGapCs}`,
    );
  }
  if (options.minimumOutlastCs < 1)
    fail('minimumOutlastCs must be at least 1 (the new utterance must end after the floor)');
  if (options.maximumDraws < 1) fail('maximumDraws must be at least 1');
  if (typeof options.smoothing !== 'boolean') fail(`smoothing must be true or false, got ${String(options.smoothing)}`);
  if (options.gapOnlyChannel !== null && options.gapOnlyChannel !== 0 && options.gapOnlyChannel !== 1)
    fail(`gapOnlyChannel must be 0, 1 or null, got ${String(options.gapOnlyChannel)}`);
  return options;
}

/**
 * Checks the utterances of one dialogue: at least one, channels 0 or 1, positive integer durations,
 * speech segments sorted, non-overlapping, inside the utterance (centiseconds).
 * @throws TimelinePlacementError naming the dialogue and the utterance
 */
export function validateUtterances(dialogueId: string, utterances: readonly UtteranceToPlace[]): void {
  if (utterances.length === 0) throw new TimelinePlacementError(dialogueId, 'no utterances to place');
  utterances.forEach((utterance, index) => {
    if (utterance.channel !== 0 && utterance.channel !== 1) {
      throw new TimelinePlacementError(
        dialogueId,
        `utterance ${index}: channel must be 0 or 1, got ${String(utterance.channel)}`,
      );
    }
    if (!Number.isSafeInteger(utterance.durationCs) || utterance.durationCs <= 0) {
      throw new TimelinePlacementError(
        dialogueId,
        `utterance ${index}: durationCs must be a positive integer (centiseconds), got ${utterance.durationCs}`,
      );
    }
    utterance.speechSegments?.forEach((segment, segmentIndex) => {
      const previous = utterance.speechSegments?.[segmentIndex - 1];
      const valid =
        Number.isSafeInteger(segment.start) &&
        Number.isSafeInteger(segment.end) &&
        segment.start >= 0 &&
        segment.end > segment.start &&
        segment.end <= utterance.durationCs &&
        (previous === undefined || segment.start >= previous.end);
      if (!valid) {
        throw new TimelinePlacementError(
          dialogueId,
          `utterance ${index}: speech segment ${segmentIndex} [${segment.start}, ${segment.end}] must be integer centiseconds, ` +
            `sorted, non-overlapping, inside [0, ${utterance.durationCs}]`,
        );
      }
    });
  });
}
