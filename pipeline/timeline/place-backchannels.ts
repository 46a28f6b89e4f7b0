/**
 * Listener backchannels ("uh-huh", "うん") inside the other speaker's utterances of a placed dialogue,
 * at the measured rate and relative positions (timing-statistics.ts `backchannels`). All times are
 * integer centiseconds.
 *
 * ## Model
 * - Hosts: every utterance on the other channel than the listener. Its **host speech** is the summed
 *   length of its TURN IPUs (docs/events.md steps 1–2: its speech segments merged across pauses ≤ 0.50 s,
 *   kept when longer than 0.80 s; without `speechSegments` the whole utterance is one IPU). This is
 *   the denominator of the measured rate ("per minute of the other speaker's TURN speech").
 * - Count per dialogue: the expected count `E = rate per minute × host speech / 6000 cs` over all its
 *   hosts, rounded up with probability equal to its fraction and down otherwise, so its mean is
 *   exactly `E` and it differs from `E` by less than one (a Poisson count, the classic choice, has the
 *   same mean but a variance of `E`, so a build's rate would wander by ±8 % over 150 backchannels).
 * - Host of each backchannel: drawn with probability proportional to its host speech (what
 *   independent Poisson counts per host give, conditioned on their total). When no position inside
 *   that host is accepted within `maximumDraws` draws (a short answer overlapped at both ends has no
 *   room), the next host is drawn among those not yet tried, again in proportion to their speech; a
 *   backchannel is dropped, and counted in `unplaced`, only when no host has room.
 * - Each backchannel: a clip is chosen (the `clipDurationsCs` entry nearest to a duration drawn from the
 *   measured BC durations; ties to the lower index), then a relative position `p` (thousandths) is drawn
 *   from the measured positions and the backchannel starts at `host.start + round(p · host.duration / 1000)`.
 * - A start is accepted only when the whole backchannel `[start, start + clip]` lies inside one TURN
 *   IPU of the host (so its start lies inside a TURN of the other channel, which is what makes the
 *   benchmark keep a BC, docs/events.md "How the benchmark's loader uses the events"), and it is at
 *   least `minimumSameSpeakerGapCs` (default 60 cs, more than the 0.50 s IPU pause of docs/events.md
 *   step 1) away from every listener utterance and every backchannel already placed, so it stays its
 *   own IPU of ≤ 0.80 s, i.e. a BC (step 2), never merges with or overlaps the listener's own speech,
 *   and, being a BC, takes no part in turn-taking (step 3):
 *   the utterances' TURN_SHIFT / BARGE_IN / TURN_HOLD events are unchanged.
 * - A rejected position is redrawn (up to `maximumDraws` per host tried). Positions near a host's
 *   edges are rejected more often (the listener's own question may still run there), so accepted
 *   positions lean slightly inward; the count, and so the rate, is kept unless no host has room.
 */
import { buildIpus, DEFAULT_EVENT_THRESHOLDS } from '../events/index.ts';
import type { Centiseconds, Channel, SpeechSegment } from '../model/types.ts';
import { drawFromDistribution } from './empirical-distribution.ts';
import { dialogueRandomStream } from '../model/random.ts';
import type { TimingModel } from './timing-statistics.ts';

/** What the caller asks for: who backchannels, and the clips available (synthesized "uh-huh"s). */
export interface BackchannelRequest {
  /**
   * Channel that speaks the backchannels (MT-QA: 1, the user, docs/dataset-format.md); hosts are on
   * the other channel.
   */
  listenerChannel: Channel;
  /**
   * Speech durations of the available backchannel clips, integer centiseconds, each 1–80 (≤ 0.80 s, so
   * the rules label them BC, docs/events.md step 2). At least one.
   */
  clipDurationsCs: readonly Centiseconds[];
}

/** One placed backchannel. */
export interface PlacedBackchannel {
  /** Index (in the input utterances) of the host utterance it lies inside. */
  hostUtteranceIndex: number;
  /** The listener channel. */
  channel: Channel;
  /** Speech start and end on the dialogue timeline, centiseconds (`end = start + durationCs`). */
  start: Centiseconds;
  end: Centiseconds;
  durationCs: Centiseconds;
  /** Index of the clip used, in `BackchannelRequest.clipDurationsCs`. */
  clipIndex: number;
}

/** Counts of one dialogue's backchannel placement. */
export interface BackchannelPlacementReport {
  /** Listener channel. */
  listenerChannel: Channel;
  /** Host speech (TURN IPU length) of all host utterances, centiseconds: the rate's denominator. */
  hostSpeechCs: Centiseconds;
  /** Rate used, per minute of host speech. */
  ratePerMinute: number;
  /** Expected count, `ratePerMinute × hostSpeechCs / 6000`, rounded to 4 decimals. */
  expected: number;
  /** Backchannels asked for: `expected` rounded up or down (module comment). */
  requested: number;
  placed: number;
  /** Asked for but dropped: no host had an accepted position within `maximumDraws` draws each. */
  unplaced: number;
  /** Position draws rejected (and redrawn). */
  rejectedPositionDraws: number;
}

/** Input of `placeBackchannels`: a placed dialogue plus the fitted model. */
export interface PlaceBackchannelsInput {
  dialogueId: string;
  seed: number;
  utterances: readonly { channel: Channel; durationCs: Centiseconds; speechSegments?: readonly SpeechSegment[] }[];
  /** Placed starts and ends of the utterances, centiseconds. */
  starts: readonly Centiseconds[];
  ends: readonly Centiseconds[];
  model: TimingModel;
  request: BackchannelRequest;
  /** Smallest silence between two units of the listener (default 60 cs; must exceed 50 cs). */
  minimumSameSpeakerGapCs?: Centiseconds;
  /** Position draws per backchannel (default 100). */
  maximumDraws?: number;
}

/** Invalid backchannel request; the message names the dialogue. */
export class BackchannelPlacementError extends Error {
  override readonly name = 'BackchannelPlacementError';
  constructor(
    readonly dialogueId: string,
    detail: string,
  ) {
    super(`dialogue ${dialogueId}: backchannels: ${detail}`);
  }
}

/**
 * The TURN IPUs of a host utterance placed at `start`, absolute centiseconds (docs/events.md steps 1–2).
 * @param utterance duration and optional relative speech segments (validated by the caller)
 */
export function hostTurnSpans(
  utterance: { durationCs: Centiseconds; speechSegments?: readonly SpeechSegment[] },
  start: Centiseconds,
): SpeechSegment[] {
  const relative = utterance.speechSegments ?? [{ start: 0, end: utterance.durationCs }];
  const absolute = relative.map((segment) => ({ start: start + segment.start, end: start + segment.end }));
  return buildIpus(absolute).flatMap((ipu) => (ipu.kind === 'TURN' ? [{ start: ipu.start, end: ipu.end }] : []));
}

/**
 * Host speech of one utterance, centiseconds: summed length of its TURN IPUs (docs/events.md steps 1–2).
 * The per-dialogue sum over the host channel is the denominator the fidelity report needs.
 */
export function hostSpeechCs(utterance: {
  durationCs: Centiseconds;
  speechSegments?: readonly SpeechSegment[];
}): Centiseconds {
  return hostTurnSpans(utterance, 0).reduce((sum, span) => sum + (span.end - span.start), 0);
}

/**
 * Places listener backchannels in a placed dialogue (model in the module comment). Uses its own
 * random stream (`backchannels`), so the utterance placement does not depend on it.
 * @returns the backchannels sorted by start, and the counts
 * @throws BackchannelPlacementError when `clipDurationsCs` is empty or holds a value that is not an
 *   integer in [1, 80] cs, or the listener channel is not 0 or 1
 */
export function placeBackchannels(input: PlaceBackchannelsInput): {
  backchannels: PlacedBackchannel[];
  report: BackchannelPlacementReport;
} {
  const { request, model, utterances } = input;
  const fail = (detail: string): never => {
    throw new BackchannelPlacementError(input.dialogueId, detail);
  };
  if (request.listenerChannel !== 0 && request.listenerChannel !== 1)
    fail(`listenerChannel must be 0 or 1, got ${String(request.listenerChannel)}`);
  if (request.clipDurationsCs.length === 0) fail('clipDurationsCs must list at least one clip duration');
  request.clipDurationsCs.forEach((duration, index) => {
    if (!Number.isSafeInteger(duration) || duration < 1 || duration > DEFAULT_EVENT_THRESHOLDS.maxBackchannel) {
      fail(
        `clip ${index}: duration must be an integer of 1–${DEFAULT_EVENT_THRESHOLDS.maxBackchannel} cs ` +
          `(a BC lasts at most 0.80 s, docs/events.md step 2), got ${duration}`,
      );
    }
  });
  const gap = input.minimumSameSpeakerGapCs ?? 60;
  const maximumDraws = input.maximumDraws ?? 100;
  const listener = request.listenerChannel;
  const rate = model.backchannelRatePerMinute[listener];
  const random = dialogueRandomStream(input.seed, input.dialogueId, 'backchannels');

  // Listener speech already on the timeline; backchannels join it as they are placed.
  const occupied: SpeechSegment[] = utterances.flatMap((utterance, index) =>
    utterance.channel === listener ? [{ start: input.starts[index] as number, end: input.ends[index] as number }] : [],
  );
  const clear = (start: number, end: number) =>
    occupied.every((span) => start >= span.end + gap || end + gap <= span.start);

  const hosts = utterances.flatMap((utterance, hostIndex) => {
    if (utterance.channel === listener) return [];
    const hostStart = input.starts[hostIndex] as number;
    const spans = hostTurnSpans(utterance, hostStart);
    return [
      {
        hostIndex,
        hostStart,
        durationCs: utterance.durationCs,
        spans,
        speech: spans.reduce((sum, span) => sum + (span.end - span.start), 0),
      },
    ];
  });
  const hostSpeech = hosts.reduce((sum, host) => sum + host.speech, 0);
  const expected = (rate * hostSpeech) / 6000;
  // The dialogue's count: the expected count rounded up with probability equal to its fraction, so
  // its mean is exactly `expected` and it differs from it by less than one.
  const requested = Math.floor(expected) + (random.uniform() < expected - Math.floor(expected) ? 1 : 0);
  const backchannels: PlacedBackchannel[] = [];
  let unplaced = 0;
  let rejectedPositionDraws = 0;
  for (let item = 0; item < requested; item += 1) {
    const target = drawFromDistribution(model.backchannelDurations, random);
    let clipIndex = 0;
    request.clipDurationsCs.forEach((duration, index) => {
      if (Math.abs(duration - target) < Math.abs((request.clipDurationsCs[clipIndex] as number) - target))
        clipIndex = index;
    });
    const duration = request.clipDurationsCs[clipIndex] as number;
    // Hosts in the order they are tried: each next one drawn with probability proportional to its
    // host speech among those not yet tried.
    const untried = hosts.filter((host) => host.speech > 0);
    let placed = false;
    while (!placed && untried.length > 0) {
      const remainingSpeech = untried.reduce((sum, host) => sum + host.speech, 0);
      let pick = random.integer(0, remainingSpeech - 1);
      let at = 0;
      while (pick >= (untried[at] as (typeof hosts)[number]).speech) {
        pick -= (untried[at] as (typeof hosts)[number]).speech;
        at += 1;
      }
      const host = untried.splice(at, 1)[0] as (typeof hosts)[number];
      for (let draw = 0; draw < maximumDraws && !placed; draw += 1) {
        const position = drawFromDistribution(model.backchannelPositions, random);
        const start = host.hostStart + Math.round((position * host.durationCs) / 1000);
        const end = start + duration;
        const inside = host.spans.some((span) => start >= span.start && end <= span.end);
        if (inside && clear(start, end)) {
          backchannels.push({
            hostUtteranceIndex: host.hostIndex,
            channel: listener,
            start,
            end,
            durationCs: duration,
            clipIndex,
          });
          occupied.push({ start, end });
          placed = true;
        } else rejectedPositionDraws += 1;
      }
    }
    if (!placed) unplaced += 1;
  }
  backchannels.sort((a, b) => a.start - b.start);
  return {
    backchannels,
    report: {
      listenerChannel: listener,
      hostSpeechCs: hostSpeech,
      ratePerMinute: rate,
      expected: Number(expected.toFixed(4)),
      requested,
      placed: backchannels.length,
      unplaced,
      rejectedPositionDraws,
    },
  };
}
