/**
 * Stage `place-timeline`: puts a dialogue's synthesized utterances on a two-channel timeline by
 * sampling floor-transfer offsets from timing statistics (pipeline/timeline/place-dialogue.ts), adds the
 * user's backchannels inside the system's answers at the measured rate and positions, then composes the per-channel audio tracks, the absolute speech segments and the absolute word timings.
 *
 * Every utterance starts on a centisecond boundary, and the sample rate is a multiple of 100 Hz, so a
 * speech segment at `c` cs inside an utterance placed at `s` cs lies at exactly `(s + c) * rate / 100`
 * samples in the track: the frame-local speech detector finds the same segments in the written WAV.
 *
 * The stages return the timeline rendered ({@link RenderedTimeline}: the tracks as the WAV files the
 * dataset links to) and cache it by a content hash of everything that determines it: the utterances'
 * samples and timings, the placement parameters and seed, and the code that places and renders
 * (`placementCodeDigest`). A queue worker (pipeline/orchestration/queue-worker.ts) places and renders
 * a dialogue; the coordinator's local pass, like any later build with the same inputs, reads it back
 * (placement with its true-peak limiting was two thirds of that pass's CPU) and writes the same bytes.
 */
import { placeOnTrackInPlace } from '../pipeline/audio/raw-audio.ts';
import { samplesDigest } from '../pipeline/audio/samples-digest.ts';
import { AUDIO_KERNELS_FILE } from '../pipeline/audio/audio-kernels.ts';
import {
  encodeMix,
  limitMixInPlace,
  masterMixPausing,
  type MasteredMix,
  type WavBufferAllocator,
} from '../pipeline/audio/master-mix.ts';
import type { RenderPool } from '../pipeline/audio/render-pool.ts';
import {
  frameLevelsDbfs,
  resolveSpeechDetectorOptions,
  speechSegmentsOfLevels,
  type SpeechDetectorOptions,
} from '../pipeline/audio/speech-regions.ts';
import type { AlignedWord, Centiseconds, Channel, ChannelSegments, SpeakerRole } from '../pipeline/model/types.ts';
import { placeDialogue, type PlaceDialogueOptions, type PlacedDialogue } from '../pipeline/timeline/place-dialogue.ts';
import type { PlacedBackchannel } from '../pipeline/timeline/place-backchannels.ts';
import {
  clipSegments,
  placeBargeInVariant,
  type PlannedBargeIn,
  type SystemYields,
} from '../pipeline/timeline/place-barge-in-variant.ts';
import type { TimingStatistics } from '../pipeline/timeline/timing-statistics.ts';
import type { SpokenUtterance } from './synthesize-speech.ts';
import { fullBandSample } from '../pipeline/services/tts/synthesize-utterance.ts';
import type { Stage, StageCacheKey } from '../pipeline/run/stage.ts';
import { bytesHash, contentHash, type ContentCache, type StoredFile } from '../pipeline/storage/content-cache.ts';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** A dialogue on its timeline: audio per channel, segments and words in absolute centiseconds. */
export interface PlacedTimeline {
  placement: PlacedDialogue;
  /** Channel of each utterance, in utterance order. */
  channels: Channel[];
  /** Two mono tracks (index = benchmark channel) at `sampleRate`, each `totalDurationCs * rate / 100` samples. */
  tracks: [Float32Array, Float32Array];
  sampleRate: number;
  /** Speech segments per channel, sorted, from the utterances' own speech segments shifted by their start. */
  segments: ChannelSegments;
  /** All words of both channels, sorted by (start, channel). */
  words: AlignedWord[];
  totalDurationCs: Centiseconds;
  /** Listener backchannels placed (empty when none were requested), with the clip each one uses. */
  backchannels: (PlacedBackchannel & { text: string })[];
  /**
   * The same mix at the TTS engine's own rate (the full-band master), when every utterance and clip
   * has its full-band clip at one rate: two tracks of `fullBandSample(totalDurationCs, rate)` samples,
   * each clip at `fullBandSample(start, rate)`.
   */
  fullBand?: { tracks: [Float32Array, Float32Array]; sampleRate: number };
}

/** What {@link placeTimeline} reads: one dialogue's synthesized speech and how to place it. */
export interface PlaceTimelineRequest {
  dialogueId: string;
  seed: number;
  utterances: readonly SpokenUtterance[];
  channelOfRole: Record<SpeakerRole, Channel>;
  statistics: TimingStatistics;
  options?: Partial<PlaceDialogueOptions>;
  /** Synthesized backchannel clips of the user (each <= 0.80 s of speech); none = no backchannels. */
  backchannelClips?: readonly SpokenUtterance[];
}

/**
 * Place and compose one dialogue; its tracks (and full-band tracks) true-peak limited to -1 dBTP
 * (pipeline/audio/true-peak-limiter.ts, EBU R 128's maximum true peak level): only the gain around
 * inter-sample overs is lowered, so the loudness and the speech segments stay those of the clips
 * (issue 19: TTS clips reached +0.2 dBTP).
 * @param input synthesized utterances in speaking order (all at the same sample rate); `channelOfRole`
 *   the benchmark channel of each role (default m3-format.md: user 1, system 0)
 * @param allocateTrack where the tracks go: new arrays (default), or {@link TrackAllocator} buffers the caller reuses
 * @throws TimelinePlacementError (pipeline/timeline) on invalid input; RangeError when sample rates differ
 *   or the rate is not a multiple of 100 Hz
 */
export function placeTimeline(input: PlaceTimelineRequest, allocateTrack: TrackAllocator = newTrack): PlacedTimeline {
  return limitedInPlace(composePlacedTimeline(input, allocateTrack));
}

/** The timeline with every track true-peak limited in place (limitMixInPlace, for callers that keep the tracks). */
function limitedInPlace<T extends PlacedTimeline>(timeline: T): T {
  limitMixInPlace(timeline);
  return timeline;
}

/** {@link placeTimeline} without the limiting (the placement stages master the tracks afterwards: masterMix, maybe in a worker). */
function composePlacedTimeline(input: PlaceTimelineRequest, allocateTrack: TrackAllocator): PlacedTimeline {
  const { utterances } = input;
  const clips = input.backchannelClips ?? [];
  const sampleRate = commonSampleRate(input.dialogueId, utterances, clips);
  const channels = utterances.map((utterance) => input.channelOfRole[utterance.role]);
  const placement = placeDialogue({
    dialogueId: input.dialogueId,
    seed: input.seed,
    utterances: utterances.map((utterance, index) => ({
      channel: channels[index]!,
      durationCs: utterance.durationCs,
      speechSegments: utterance.segments,
    })),
    statistics: input.statistics,
    ...(input.options ? { options: input.options } : {}),
    ...(clips.length > 0
      ? {
          backchannels: {
            listenerChannel: input.channelOfRole.user,
            clipDurationsCs: clips.map((clip) => clip.durationCs),
          },
        }
      : {}),
  });
  return composeTimeline(utterances, channels, placement, clips, sampleRate, allocateTrack);
}

/**
 * Checks the sample rates of a dialogue's utterances and backchannel clips.
 * @returns the common sample rate (16000 when there are no utterances)
 * @throws RangeError when rates differ or are not a multiple of 100 Hz
 */
function commonSampleRate(
  dialogueId: string,
  utterances: readonly SpokenUtterance[],
  clips: readonly SpokenUtterance[],
): number {
  const sampleRate = utterances[0]?.sampleRate ?? 16000;
  if (sampleRate % 100 !== 0)
    throw new RangeError(`${dialogueId}: sample rate ${sampleRate} Hz is not a multiple of 100 Hz`);
  if (utterances.some((utterance) => utterance.sampleRate !== sampleRate))
    throw new RangeError(`${dialogueId}: utterances have different sample rates`);
  if (clips.some((clip) => clip.sampleRate !== sampleRate))
    throw new RangeError(`${dialogueId}: backchannel clips have another sample rate`);
  return sampleRate;
}

/**
 * Where a composed timeline's tracks go: `slot` 0 and 1 are the two channels at the output rate, 2 and 3
 * the full-band ones. Returns `length` zero samples.
 */
export type TrackAllocator = (slot: number, length: number) => Float32Array;

/** New arrays: the tracks belong to the caller ({@link placeTimeline}'s default). */
const newTrack: TrackAllocator = (_slot, length) => new Float32Array(length);

/** Longest track kept for reuse by a {@link ScratchBuffers} set: 2^23 samples (32 MiB; 5.8 min at 24 kHz); longer ones are new arrays. */
const SCRATCH_TRACK_SAMPLES = 2 ** 23;

/** Largest WAV buffer kept for reuse by a {@link ScratchBuffers} set: 2^26 bytes (64 MiB; both masters of a 5.8-min dialogue at 16 and 24 kHz); larger ones are new arrays. */
const SCRATCH_WAV_BYTES = 2 ** 26;

/** Where a placement's audio goes: its tracks (`allocateTrack`) and, mastered on this thread, its WAV bytes (`allocateWav`; absent: new arrays). */
interface PlacementBuffers {
  allocateTrack: TrackAllocator;
  allocateWav?: WavBufferAllocator;
}

/**
 * Reused buffers for one placement at a time, from composing to storing: one per track slot, and one
 * for the WAV bytes of both masters. A dialogue's four tracks were 40 % of the build's large
 * allocations, and its WAV bytes 526 MB of a 20-dialogue saturation build's 1.6 GB; every 64 MB of them
 * brought a full garbage collection nearer ("external memory pressure", `node --trace-gc`;
 * pipeline/run/heap-growth.ts): reusing the WAV buffer too took the build from 18-20 full collections to
 * 10-11. Each track is a zero-filled view of its slot's buffer and the WAV bytes a view of theirs, valid
 * until the same buffer of the same set is taken again.
 */
class ScratchBuffers implements PlacementBuffers {
  private readonly tracks: Float32Array[] = [];
  private wav = new Uint8Array(0);

  readonly allocateTrack: TrackAllocator = (slot, length) => {
    if (length > SCRATCH_TRACK_SAMPLES) return new Float32Array(length);
    let buffer = this.tracks[slot];
    if (buffer === undefined || buffer.length < length) {
      buffer = new Float32Array(
        Math.min(SCRATCH_TRACK_SAMPLES, Math.max(length, Math.ceil((buffer?.length ?? 0) * 1.25))),
      );
      this.tracks[slot] = buffer;
    }
    return buffer.subarray(0, length).fill(0);
  };

  readonly allocateWav: WavBufferAllocator = (byteLength) => {
    if (byteLength > SCRATCH_WAV_BYTES) return new Uint8Array(byteLength);
    if (this.wav.byteLength < byteLength)
      this.wav = new Uint8Array(
        Math.min(SCRATCH_WAV_BYTES, Math.max(byteLength, Math.ceil(this.wav.byteLength * 1.25))),
      );
    // every byte is written by the encoder (encodeWavFilesPcm16): no clearing
    return this.wav.subarray(0, byteLength);
  };
}

/** Sets no placement holds now (as many exist as placements ever ran at once). */
const idleScratchBuffers: ScratchBuffers[] = [];

/**
 * Runs `use` with a set of reused buffers that no other placement holds until it settles. The
 * placement stages let the event loop through while they master and store a dialogue
 * (masterMixPausing, the cache's writes), so placements overlap: the barge-in variant of one dialogue
 * beside the next dialogue's base, a queue worker's jobs beside each other. Each takes its own set (a
 * new one when every set is held).
 */
async function withScratchBuffers<T>(use: (buffers: PlacementBuffers) => Promise<T>): Promise<T> {
  const set = idleScratchBuffers.pop() ?? new ScratchBuffers();
  try {
    return await use(set);
  } finally {
    idleScratchBuffers.push(set);
  }
}

/**
 * Runs `use` with the buffers a placement composes and encodes into: new arrays when `renderPool`
 * masters the tracks (the worker takes their buffers and sends new WAV bytes back), else a set of
 * reused buffers ({@link withScratchBuffers}) held until `use` settles, so the WAV bytes must be stored
 * (not kept) by then.
 */
function withPlacementBuffers<T>(
  renderPool: RenderPool | null | undefined,
  use: (buffers: PlacementBuffers) => Promise<T>,
): Promise<T> {
  return renderPool ? use({ allocateTrack: newTrack }) : withScratchBuffers(use);
}

/**
 * Composes placed utterances (and backchannels) into two tracks, absolute speech segments and words
 * (not yet limited: {@link placeTimeline}, masterMix).
 * @param utterances the utterances as placed (audio, segments and words relative to each one's speech start)
 * @param channels channel of each utterance
 * @param placement starts (centiseconds) and total duration; backchannels with their clip index
 * @returns tracks of `totalDurationCs × rate / 100` samples each; segments and words in absolute centiseconds
 */
function composeTimeline(
  utterances: readonly SpokenUtterance[],
  channels: Channel[],
  placement: PlacedDialogue,
  clips: readonly SpokenUtterance[],
  sampleRate: number,
  allocateTrack: TrackAllocator,
): PlacedTimeline {
  const samplesPerCentisecond = sampleRate / 100;
  const trackLength = placement.totalDurationCs * samplesPerCentisecond;
  const tracks: [Float32Array, Float32Array] = [allocateTrack(0, trackLength), allocateTrack(1, trackLength)];
  const segments: ChannelSegments = { 0: [], 1: [] };
  const words: AlignedWord[] = [];
  utterances.forEach((utterance, index) => {
    const channel = channels[index]!;
    const start = placement.starts[index]!;
    placeOnTrackInPlace(tracks[channel], utterance.audio, start * samplesPerCentisecond);
    for (const segment of utterance.segments)
      segments[channel].push({ start: start + segment.start, end: start + segment.end });
    for (const word of utterance.words)
      words.push({ channel, start: start + word.start, end: start + word.end, word: word.word });
  });
  const backchannels = placement.backchannels.map((backchannel) => {
    const clip = clips[backchannel.clipIndex]!;
    placeOnTrackInPlace(tracks[backchannel.channel], clip.audio, backchannel.start * samplesPerCentisecond);
    for (const segment of clip.segments)
      segments[backchannel.channel].push({
        start: backchannel.start + segment.start,
        end: backchannel.start + segment.end,
      });
    for (const word of clip.words)
      words.push({
        channel: backchannel.channel,
        start: backchannel.start + word.start,
        end: backchannel.start + word.end,
        word: word.word,
      });
    return { ...backchannel, text: clip.spokenText };
  });
  segments[0].sort((a, b) => a.start - b.start);
  segments[1].sort((a, b) => a.start - b.start);
  words.sort((a, b) => a.start - b.start || a.channel - b.channel || a.end - b.end);
  const fullBand = composeFullBand(utterances, channels, placement, clips, allocateTrack);
  return {
    placement,
    channels,
    tracks,
    sampleRate,
    segments,
    words,
    totalDurationCs: placement.totalDurationCs,
    backchannels,
    ...(fullBand ? { fullBand } : {}),
  };
}

/**
 * The full-band mix (PlacedTimeline `fullBand`), or undefined when a clip has no full-band audio or
 * the rates differ. A clip that would reach past the track's last sample (rounding at rates that are
 * not multiples of 100 Hz) loses that sample.
 */
function composeFullBand(
  utterances: readonly SpokenUtterance[],
  channels: Channel[],
  placement: PlacedDialogue,
  clips: readonly SpokenUtterance[],
  allocateTrack: TrackAllocator,
): PlacedTimeline['fullBand'] {
  const sampleRate = utterances[0]?.fullBand?.sampleRate;
  if (sampleRate === undefined || [...utterances, ...clips].some((clip) => clip.fullBand?.sampleRate !== sampleRate))
    return undefined;
  const length = fullBandSample(placement.totalDurationCs, sampleRate);
  const tracks: [Float32Array, Float32Array] = [allocateTrack(2, length), allocateTrack(3, length)];
  const place = (track: Float32Array, clip: Float32Array, startCs: Centiseconds) => {
    const offset = fullBandSample(startCs, sampleRate);
    placeOnTrackInPlace(track, clip.subarray(0, Math.max(0, Math.min(clip.length, length - offset))), offset);
  };
  utterances.forEach((utterance, index) =>
    place(tracks[channels[index]!], utterance.fullBand!.audio, placement.starts[index]!),
  );
  for (const backchannel of placement.backchannels)
    place(tracks[backchannel.channel], clips[backchannel.clipIndex]!.fullBand!.audio, backchannel.start);
  return { tracks, sampleRate };
}

/** A place where an interrupted utterance can stop (`yieldPoints`). */
export interface YieldPoint {
  /** End of the speech kept, centiseconds from the utterance's speech start (what the detector finds). */
  endCs: Centiseconds;
  /** Samples of the utterance's audio kept (the last `FADE_OUT_CS` of them faded out). */
  sampleCount: number;
}

/** Length of the fade-out at a yield point: 20 ms, long enough that no click is heard. */
export const FADE_OUT_CS = 2;
/** How far from an estimated word end a yield point may move to the quietest 10 ms frame. */
const YIELD_SEARCH_CS = 6;
/** A yield point's frame must be this far below the utterance's mean frame energy (−10 dB). */
const DIP_ENERGY_RATIO = 0.1;

function frameEnergy(audio: Float32Array, frame: number, samplesPerCs: number): number {
  let sum = 0;
  for (let index = frame * samplesPerCs; index < (frame + 1) * samplesPerCs && index < audio.length; index += 1)
    sum += audio[index]! * audio[index]!;
  return sum;
}

function fadedPrefix(audio: Float32Array, sampleCount: number, fadeSamples: number): Float32Array {
  const kept = audio.slice(0, sampleCount);
  const fadeStart = Math.max(0, sampleCount - fadeSamples);
  for (let index = fadeStart; index < sampleCount; index += 1) {
    const position = (index - fadeStart + 1) / (sampleCount - fadeStart);
    kept[index] = kept[index]! * 0.5 * (1 + Math.cos(Math.PI * position)); // raised cosine from 1 to 0
  }
  return kept;
}

/**
 * Where an utterance can stop when its speaker yields: at each word end (word timings may be
 * estimates, so the cut moves to the quietest 10 ms frame within ±60 ms; it must be a real dip, at
 * least 10 dB below the utterance's mean frame energy, else that word end is not offered), with a
 * 20 ms raised-cosine fade-out. A point is offered only where the speech
 * detector, run on the faded audio, finds exactly the utterance's segments clipped at its end: the
 * written WAV then re-derives the same events as the alignment (verify). The utterance's own end is
 * always a point (nothing cut). The detector's frames are measured once per utterance and again only
 * where a cut's fade changes them (speechSegmentsOfLevels): the same segments as detectSpeechSegments
 * on each faded prefix, without a copy of the prefix per word (441 MB of copies and 0.3 s per
 * 20-dialogue saturation build, issue 23).
 * @returns points by ascending `endCs`, distinct
 */
export function yieldPoints(utterance: SpokenUtterance, detector: Partial<SpeechDetectorOptions>): YieldPoint[] {
  const samplesPerCs = utterance.sampleRate / 100;
  const points = new Map<number, YieldPoint>();
  let total = 0;
  for (let frame = 0; frame < utterance.durationCs; frame += 1)
    total += frameEnergy(utterance.audio, frame, samplesPerCs);
  const meanFrameEnergy = total / Math.max(1, utterance.durationCs);
  const options = resolveSpeechDetectorOptions(detector);
  const levels = frameLevelsDbfs(utterance.audio, utterance.sampleRate);
  for (const word of utterance.words) {
    if (word.end >= utterance.durationCs) continue;
    let cut = word.end;
    let quietest = Number.POSITIVE_INFINITY;
    for (
      let candidate = Math.max(FADE_OUT_CS + 1, word.end - YIELD_SEARCH_CS);
      candidate <= Math.min(utterance.durationCs - 1, word.end + YIELD_SEARCH_CS);
      candidate += 1
    ) {
      const energy = frameEnergy(utterance.audio, candidate, samplesPerCs);
      if (energy < quietest) {
        quietest = energy;
        cut = candidate;
      }
    }
    // only a real dip: the quietest frame 10 dB below the utterance's mean, else mid-syllable
    if (quietest > meanFrameEnergy * DIP_ENERGY_RATIO) continue;
    const sampleCount = cut * samplesPerCs;
    // the detector on the faded prefix: the frames before the fade are the utterance's own, so only
    // the FADE_OUT_CS faded frames are measured again (the same levels, so the same segments)
    const fadeSamples = FADE_OUT_CS * samplesPerCs;
    const prefixLevels = levels.slice(0, cut);
    prefixLevels.set(
      frameLevelsDbfs(
        fadedPrefix(utterance.audio.subarray(sampleCount - fadeSamples), fadeSamples, fadeSamples),
        utterance.sampleRate,
      ),
      cut - FADE_OUT_CS,
    );
    const detected = speechSegmentsOfLevels(prefixLevels, options);
    const endCs = detected.at(-1)?.end;
    if (endCs === undefined || endCs <= 0) continue;
    if (JSON.stringify(detected) !== JSON.stringify(clipSegments(utterance.segments, endCs))) continue;
    if (!points.has(endCs)) points.set(endCs, { endCs, sampleCount });
  }
  points.set(utterance.durationCs, { endCs: utterance.durationCs, sampleCount: utterance.audio.length });
  return [...points.values()].sort((a, b) => a.endCs - b.endCs);
}

/**
 * An utterance cut where its speaker yields (a point from `yieldPoints`): the audio kept, faded out
 * over its last 20 ms; speech segments and words up to the point's end (a word running across it is
 * shortened, those after it dropped).
 * @throws RangeError when the point lies outside the utterance
 */
export function truncateUtterance(utterance: SpokenUtterance, point: YieldPoint): SpokenUtterance {
  if (!Number.isSafeInteger(point.endCs) || point.endCs <= 0 || point.endCs > utterance.durationCs)
    throw new RangeError(`cut at ${point.endCs} cs lies outside (0, ${utterance.durationCs}] cs`);
  if (point.endCs === utterance.durationCs) return utterance;
  const samplesPerCs = utterance.sampleRate / 100;
  return {
    ...utterance,
    audio: fadedPrefix(utterance.audio, point.sampleCount, FADE_OUT_CS * samplesPerCs),
    // the full-band clip cut at the same time, with a fade of the same length
    ...(utterance.fullBand
      ? {
          fullBand: {
            ...utterance.fullBand,
            audio: fadedPrefix(
              utterance.fullBand.audio,
              Math.min(
                utterance.fullBand.audio.length,
                Math.round((point.sampleCount * utterance.fullBand.sampleRate) / utterance.sampleRate),
              ),
              fullBandSample(FADE_OUT_CS, utterance.fullBand.sampleRate),
            ),
          },
        }
      : {}),
    durationCs: point.endCs,
    segments: clipSegments(utterance.segments, point.endCs),
    words: utterance.words
      .filter((word) => word.start < point.endCs)
      .map((word) => ({ ...word, end: Math.min(word.end, point.endCs) })),
  };
}

/** The barge-in variant of a dialogue on its timeline, with the barge-ins placed. */
export interface BargeInTimeline extends PlacedTimeline {
  bargeIns: PlannedBargeIn[];
  answersTooShort: number[];
  /** The utterances as spoken in the variant (answers cut where the system yields). */
  utterances: SpokenUtterance[];
}

/**
 * Places and composes the barge-in variant of one dialogue (pipeline/timeline/place-barge-in-variant.ts):
 * the same synthesized utterances, the user starting each next question while the system is still
 * answering, the system yielding as `systemYields` says.
 * Its tracks are limited as {@link placeTimeline}'s.
 * @param allocateTrack as {@link placeTimeline}'s
 * @throws as `placeTimeline`; TimelinePlacementError when the statistics have no barge-ins
 */
export function placeBargeInTimeline(
  input: PlaceBargeInTimelineRequest,
  allocateTrack: TrackAllocator = newTrack,
): BargeInTimeline {
  return limitedInPlace(composeBargeInTimeline(input, allocateTrack));
}

/** What {@link placeBargeInTimeline} reads: {@link PlaceTimelineRequest}, how the system yields, the speech detector. */
export type PlaceBargeInTimelineRequest = PlaceTimelineRequest & {
  systemYields: SystemYields;
  detector: Partial<SpeechDetectorOptions>;
  minimumUnspoken?: { seconds: number; words: number };
};

/** {@link placeBargeInTimeline} without the limiting. */
function composeBargeInTimeline(input: PlaceBargeInTimelineRequest, allocateTrack: TrackAllocator): BargeInTimeline {
  const { utterances } = input;
  const clips = input.backchannelClips ?? [];
  const sampleRate = commonSampleRate(input.dialogueId, utterances, clips);
  const channels = utterances.map((utterance) => input.channelOfRole[utterance.role]);
  // the places where each interrupted answer can stop (yieldPoints); other utterances are never cut
  const pointsOf = utterances.map((utterance, index) =>
    channels[index] === input.channelOfRole.system && channels[index + 1] === input.channelOfRole.user
      ? yieldPoints(utterance, input.detector)
      : null,
  );
  const variant = placeBargeInVariant(
    {
      dialogueId: input.dialogueId,
      seed: input.seed,
      utterances: utterances.map((utterance, index) => ({
        channel: channels[index]!,
        durationCs: utterance.durationCs,
        speechSegments: utterance.segments,
        wordEndsCs: pointsOf[index]?.map((point) => point.endCs) ?? [utterance.durationCs],
      })),
      statistics: input.statistics,
      ...(input.options ? { options: input.options } : {}),
      ...(clips.length > 0
        ? {
            backchannels: {
              listenerChannel: input.channelOfRole.user,
              clipDurationsCs: clips.map((clip) => clip.durationCs),
            },
          }
        : {}),
    },
    {
      systemChannel: input.channelOfRole.system,
      systemYields: input.systemYields,
      maximumDraws: 100,
      ...(input.minimumUnspoken
        ? {
            minimumUnspokenCs: Math.round(input.minimumUnspoken.seconds * 100),
            minimumUnspokenWords: input.minimumUnspoken.words,
          }
        : {}),
    },
  );
  const cutOf = new Map(variant.bargeIns.map((bargeIn) => [bargeIn.answerIndex, bargeIn.cutCs]));
  const spoken = utterances.map((utterance, index) => {
    const cut = cutOf.get(index);
    const point = cut === undefined ? undefined : pointsOf[index]?.find((candidate) => candidate.endCs === cut);
    return point === undefined ? utterance : truncateUtterance(utterance, point);
  });
  return {
    ...composeTimeline(spoken, channels, variant.placement, clips, sampleRate, allocateTrack),
    bargeIns: variant.bargeIns,
    answersTooShort: variant.answersTooShort,
    utterances: spoken,
  };
}

/** Cache folder of the placed and rendered timelines; bump the version when an entry's meaning changes (the code's own changes are in the key already). */
export const PLACE_TIMELINE_STAGE = 'place-timeline';
// 2: the WAV and the full-band WAV are the entry's two data files (1 held them joined in one)
export const PLACE_TIMELINE_STAGE_VERSION = 2;

/** Input of the placement stages: one dialogue's synthesized utterances and backchannel clips. */
export interface PlaceTimelineInput {
  dialogueId: string;
  utterances: readonly SpokenUtterance[];
  backchannelClips: readonly SpokenUtterance[];
}

/** Parameters of {@link placeTimelineStage}: the dataset's seed, channels, timing statistics and placement options. */
export interface PlaceTimelineParameters {
  seed: number;
  channelOfRole: Record<SpeakerRole, Channel>;
  statistics: TimingStatistics;
  options: Partial<PlaceDialogueOptions>;
  /**
   * Worker threads that master the composed tracks (limiting, WAV encoding; audio.renderThreads);
   * absent or null: the build's thread does. Not in the cache key: the bytes are the same.
   */
  renderPool?: RenderPool | null;
}

/**
 * Stage `place-timeline`: {@link placeTimeline}, rendered ({@link renderTimeline}) and cached under
 * `place-timeline` ({@link placementCacheKey}).
 * @throws as {@link placeTimeline}; as writeAtomic when the entry cannot be stored
 */
export const placeTimelineStage: Stage<PlaceTimelineInput, PlaceTimelineParameters, RenderedTimeline> = {
  name: 'place-timeline',
  inputs: ['dialogueId', 'utterances', 'backchannelClips'],
  parameters: ['seed', 'channelOfRole', 'statistics', 'options', 'renderPool'],
  cacheStages: [PLACE_TIMELINE_STAGE],
  cacheKeys: async (input, parameters) => [placementCacheKey(input, parameters, null)],
  run: async (input, parameters, context) =>
    withPlacementBuffers(parameters.renderPool, (buffers) =>
      cachedRendering<RenderedTimeline>(context.cache, placementCacheKey(input, parameters, null), () =>
        masterTimeline(
          composePlacedTimeline({ ...input, ...parameters }, buffers.allocateTrack),
          parameters.renderPool,
          buffers.allocateWav,
        ),
      ),
    ),
};

/** Parameters of {@link placeBargeInTimelineStage}: those of {@link placeTimelineStage}, how the system yields, and the speech detector. */
export interface PlaceBargeInTimelineParameters extends PlaceTimelineParameters {
  systemYields: SystemYields;
  detector: Partial<SpeechDetectorOptions>;
  /** The least of an answer a barge-in leaves unspoken (`timeline.bargeIn.minimumUnspoken`). */
  minimumUnspoken?: { seconds: number; words: number };
}

/**
 * Stage `place-timeline` of the barge-in variant: {@link placeBargeInTimeline}, rendered and cached
 * under `place-timeline` (its key also holds how the system yields and the detector).
 * @throws as {@link placeBargeInTimeline}; as writeAtomic when the entry cannot be stored
 */
export const placeBargeInTimelineStage: Stage<
  PlaceTimelineInput,
  PlaceBargeInTimelineParameters,
  RenderedBargeInTimeline
> = {
  name: 'place-timeline',
  inputs: ['dialogueId', 'utterances', 'backchannelClips'],
  parameters: [
    'seed',
    'channelOfRole',
    'statistics',
    'options',
    'systemYields',
    'detector',
    'minimumUnspoken',
    'renderPool',
  ],
  cacheStages: [PLACE_TIMELINE_STAGE],
  cacheKeys: async (input, parameters) => [placementCacheKey(input, parameters, bargeInKeyOf(parameters))],
  run: async (input, parameters, context) =>
    withPlacementBuffers(parameters.renderPool, (buffers) =>
      cachedRendering<RenderedBargeInTimeline>(
        context.cache,
        placementCacheKey(input, parameters, bargeInKeyOf(parameters)),
        async () => {
          const timeline = composeBargeInTimeline({ ...input, ...parameters }, buffers.allocateTrack);
          const { metadata, parts } = await masterTimeline(timeline, parameters.renderPool, buffers.allocateWav);
          return {
            metadata: {
              ...metadata,
              bargeIns: timeline.bargeIns,
              answersTooShort: timeline.answersTooShort,
              utterances: timeline.utterances.map(({ audio: _audio, fullBand: _fullBand, ...rest }) => rest),
            },
            parts,
          };
        },
      ),
    ),
};

/** The variant's own parameters in its cache key. */
function bargeInKeyOf(parameters: PlaceBargeInTimelineParameters): unknown {
  return {
    variant: 'barge-in',
    systemYields: parameters.systemYields,
    detector: parameters.detector,
    minimumUnspoken: parameters.minimumUnspoken ?? null,
  };
}

/** An utterance as placed, without its samples (they are in the rendered WAV): what the summaries, events and metadata read. */
export type PlacedUtterance = Omit<SpokenUtterance, 'audio' | 'fullBand'>;

/**
 * A placed dialogue as the dataset writes it: the {@link PlacedTimeline} with its two float tracks
 * replaced by the WAV file the cache stores (`audio/{id}.wav`: 2 channels, PCM 16-bit at `sampleRate`,
 * from `encodeWavPcm16`), and the full-band master likewise (`audio_fullband/{id}.wav`). The bytes are
 * not held: the dataset's WAVs are hard links to these files (stages/render-dataset.ts), and what needs
 * the samples reads them ({@link readStoredWav}).
 */
export interface RenderedTimeline extends Omit<PlacedTimeline, 'tracks' | 'fullBand'> {
  wavFile: StoredWav;
  fullBand?: { sampleRate: number; file: StoredWav };
}

/** A rendered WAV as the cache stores it: its file (written atomically, never rewritten in place), the sha256 of its bytes and their number. */
export interface StoredWav {
  path: string;
  sha256: string;
  byteLength: number;
}

/**
 * The bytes of a stored WAV, checked against the length and sha256 recorded when it was stored.
 * @throws Error naming the file when it cannot be read or differs from what was recorded (changed
 *   since it was stored: the cache notices that on its next read and renders the entry again)
 */
export async function readStoredWav(stored: StoredWav): Promise<Buffer> {
  let bytes: Buffer;
  try {
    bytes = await readFile(stored.path);
  } catch (error) {
    throw new Error(
      `${stored.path}: cannot read the rendered WAV: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
    );
  }
  if (bytes.byteLength !== stored.byteLength || bytesHash(bytes) !== stored.sha256) {
    throw new Error(
      `${stored.path}: the rendered WAV differs from the ${stored.byteLength} bytes and sha256 recorded when it was stored (changed since; the next build renders it again)`,
    );
  }
  return bytes;
}

/** The barge-in variant rendered: {@link RenderedTimeline} plus the barge-ins and the utterances as spoken (cut answers), without samples. */
export interface RenderedBargeInTimeline extends RenderedTimeline {
  bargeIns: PlannedBargeIn[];
  answersTooShort: number[];
  utterances: PlacedUtterance[];
}

/** A timeline encoded but not stored ({@link renderTimeline}): its tracks replaced by the WAV bytes, and the full-band master's likewise. */
export interface EncodedTimeline extends Omit<PlacedTimeline, 'tracks' | 'fullBand'> {
  wav: Uint8Array;
  fullBand?: { wav: Uint8Array; sampleRate: number };
}

/**
 * The timeline as written, not stored: both tracks encoded to one PCM 16-bit WAV (and the full-band
 * tracks to another), the bytes the place-timeline stages store (views of one new buffer).
 * @throws AudioArgumentError as encodeWavPcm16 (tracks of different lengths)
 */
export function renderTimeline(timeline: PlacedTimeline): EncodedTimeline {
  const { metadata, parts } = unstoredRendering(timeline, encodeMix(timeline));
  const { fullBand, ...rest } = metadata;
  return {
    ...rest,
    wav: parts[0]!,
    ...(fullBand ? { fullBand: { wav: parts[1]!, sampleRate: fullBand.sampleRate } } : {}),
  };
}

/** What a rendering stores before it is stored: the rendered value without its files (`metadata`) and the WAV files' bytes (`parts`: the WAV, then the full-band WAV when `metadata.fullBand` is set). */
interface UnstoredRendering<M> {
  metadata: M;
  parts: Uint8Array[];
}

/** A rendering's metadata: the rendered value without its WAV files (the full-band master's rate only). */
type RenderedMetadata<T extends RenderedTimeline> = Omit<T, 'wavFile' | 'fullBand'> & {
  fullBand?: { sampleRate: number };
};

/** The timeline with its tracks replaced by the WAV files in `mastered` (views of its buffer). */
function unstoredRendering(
  timeline: PlacedTimeline,
  { bytes, wavBytes }: MasteredMix,
): UnstoredRendering<RenderedMetadata<RenderedTimeline>> {
  const { tracks: _tracks, fullBand, ...rest } = timeline;
  return {
    metadata: { ...rest, ...(fullBand ? { fullBand: { sampleRate: fullBand.sampleRate } } : {}) },
    parts: fullBand ? [bytes.subarray(0, wavBytes), bytes.subarray(wavBytes)] : [bytes.subarray(0, wavBytes)],
  };
}

/**
 * A composed (not yet limited) timeline as stored: its tracks mastered (true-peak limited, both WAVs
 * encoded into one buffer) on this thread by {@link masterMixPausing}, which lets the event loop through
 * between the steps (the tracks and the WAV buffer are then a scratch set the caller holds until the
 * bytes are stored: withScratchBuffers), or in `pool`'s worker by masterMix, which takes the tracks
 * (new arrays then) and sends new WAV bytes back. The same bytes either way.
 * @param allocateWav where the WAV bytes go on this thread (default: a new array)
 * @throws AudioArgumentError as masterMix; the worker's error
 */
async function masterTimeline(
  timeline: PlacedTimeline,
  pool: RenderPool | null | undefined,
  allocateWav?: WavBufferAllocator,
): Promise<UnstoredRendering<RenderedMetadata<RenderedTimeline>>> {
  const mix = {
    tracks: timeline.tracks,
    sampleRate: timeline.sampleRate,
    ...(timeline.fullBand ? { fullBand: timeline.fullBand } : {}),
  };
  return unstoredRendering(
    timeline,
    pool ? await pool.master(mix) : await masterMixPausing(mix, undefined, allocateWav),
  );
}

/**
 * The rendering under `key`, or `render()` stored there: the WAV and the full-band WAV as the entry's
 * two data files (ContentCache.binaryFiles, each whole on disk so the dataset's WAVs can be hard links
 * to them), the rest as its metadata. A miss returns what a hit would read back (its metadata through
 * JSON), so both write the same bytes; either way the value names the files ({@link StoredWav}) and
 * holds none of the bytes, which may be a scratch buffer reused once this settles.
 */
async function cachedRendering<T extends RenderedTimeline>(
  cache: ContentCache,
  key: StageCacheKey,
  render: () => Promise<UnstoredRendering<RenderedMetadata<T>>>,
): Promise<T> {
  return cache.binaryFiles<T, RenderedMetadata<T>, UnstoredRendering<RenderedMetadata<T>>>(
    key.stage,
    key.keyMaterial,
    render,
    {
      encode: (rendering) => rendering,
      decode: (parts, metadata) => {
        const { fullBand, ...rest } = metadata;
        const [wav, fullBandWav] = parts;
        if (wav === undefined || (fullBand !== undefined) !== (fullBandWav !== undefined) || parts.length > 2)
          throw new Error(
            `${parts.length} data files for a rendering ${fullBand ? 'with' : 'without'} a full-band master`,
          );
        const stored = ({ path: file, sha256, bytes }: StoredFile): StoredWav => ({
          path: file,
          sha256,
          byteLength: bytes.byteLength,
        });
        return {
          ...rest,
          wavFile: stored(wav),
          ...(fullBand && fullBandWav
            ? { fullBand: { sampleRate: fullBand.sampleRate, file: stored(fullBandWav) } }
            : {}),
        } as unknown as T;
      },
    },
    '.wav',
  );
}

/**
 * The cache key of a placed and rendered timeline: the dialogue id (placement draws are seeded by
 * it), the utterances and backchannel clips ({@link speechDigest}: samples, timings and texts), the
 * placement parameters, seed and statistics, the variant's parameters, and the code ({@link placementCodeDigest}).
 */
export function placementCacheKey(
  input: PlaceTimelineInput,
  parameters: PlaceTimelineParameters,
  variant: unknown,
): StageCacheKey {
  return {
    stage: PLACE_TIMELINE_STAGE,
    keyMaterial: {
      version: PLACE_TIMELINE_STAGE_VERSION,
      code: placementCodeDigest(),
      dialogueId: input.dialogueId,
      speech: speechDigest(input.utterances, input.backchannelClips),
      seed: parameters.seed,
      channelOfRole: parameters.channelOfRole,
      statistics: statisticsDigest(parameters.statistics),
      options: parameters.options,
      variant,
    },
  };
}

const statisticsDigests = new WeakMap<TimingStatistics, string>();

/** contentHash of the timing statistics, once per statistics object (they are the same for a whole dataset). */
function statisticsDigest(statistics: TimingStatistics): string {
  let digest = statisticsDigests.get(statistics);
  if (digest === undefined) {
    digest = contentHash(statistics);
    statisticsDigests.set(statistics, digest);
  }
  return digest;
}

/**
 * sha256 (hex) of a dialogue's utterances then its backchannel clips: of each, the canonical JSON of
 * every field but the samples, then the digest of the samples (and of the full-band clip's;
 * pipeline/audio/samples-digest.ts: the sha256 of their float32 bytes, or the name of the synthesis
 * cache entry they were decoded from).
 */
export function speechDigest(utterances: readonly SpokenUtterance[], clips: readonly SpokenUtterance[]): string {
  const hash = createHash('sha256');
  for (const [group, list] of [
    ['utterances', utterances],
    ['clips', clips],
  ] as const) {
    hash.update(`${group}:${list.length}\n`);
    for (const { audio, fullBand, ...rest } of list) {
      hash.update(
        `${contentHash({ ...rest, samples: audio.length, fullBand: fullBand ? { sampleRate: fullBand.sampleRate, samples: fullBand.audio.length } : null })}\n`,
      );
      hash.update(`${samplesDigest(audio)}\n`);
      if (fullBand) hash.update(`${samplesDigest(fullBand.audio)}\n`);
    }
  }
  return hash.digest('hex');
}

let codeDigest: string | null = null;

/**
 * sha256 (hex) of the code that places and renders a timeline: this module, stages/synthesize-speech
 * (it decodes the synthesis cache entries that name the clips in the key), every module of
 * pipeline/timeline/ and pipeline/audio/ (tests and benchmarks left out; `.ts` sources, or the `.js`
 * that dist/ compiled from them) and the WebAssembly kernels (pipeline/audio/audio-kernels.wasm, read
 * from the package when running compiled too), paths and contents, read once per process. Part of the cache key,
 * as DVC's stage dependencies include the stage's code: a change to placement, the true-peak limiter
 * or the WAV encoder places again instead of reusing an entry the old code rendered.
 */
export function placementCodeDigest(): string {
  if (codeDigest !== null) return codeDigest;
  const here = fileURLToPath(import.meta.url);
  const root = path.resolve(path.dirname(here), '..');
  const code = (file: string) =>
    /\.(ts|js|mjs)$/.test(file) && !/\.(test|bench)\.(ts|js)$/.test(file) && !file.endsWith('.d.ts');
  // the WebAssembly kernels as loaded (from the package, also when running compiled), and the stage that
  // decodes the synthesis cache entries whose sha256 names the clips in the key (samples-digest.ts)
  const synthesisStage = path.join(path.dirname(here), `synthesize-speech${path.extname(here)}`);
  const files = [here, synthesisStage, AUDIO_KERNELS_FILE];
  for (const folder of ['pipeline/timeline', 'pipeline/audio']) {
    const directory = path.join(root, folder);
    for (const name of readdirSync(directory).sort()) if (code(name)) files.push(path.join(directory, name));
  }
  const hash = createHash('sha256');
  // a missing kernel file is keyed as such (the JavaScript loops then render, the same bytes)
  const contents = (file: string) => (file === AUDIO_KERNELS_FILE && !existsSync(file) ? 'absent' : readFileSync(file));
  for (const file of files)
    hash
      .update(`${path.relative(root, file).split(path.sep).join('/')}\n`)
      .update(contents(file))
      .update('\n');
  codeDigest = hash.digest('hex');
  return codeDigest;
}
