/**
 * Signal and content checks of one written dialogue, per utterance and per channel:
 * - clipping: samples at full scale and runs of them ({@link measureClipping});
 * - silence ratio: share of 10 ms frames below the silence threshold, per utterance and channel
 *   ({@link measureSilence}), and the dialogue's dead air, frames where both channels are silent
 *   ({@link measureMutualSilence});
 * - EBU R 128 integrated loudness and true peak per channel and for the whole file (ffmpeg, loudness.ts);
 * - speech rate: spoken units of the synthesized text (English syllables, Japanese morae) per second
 *   of speech, where speech = the TURN and BC spans of the events on the utterance's channel inside
 *   the utterance, minus their SHORTPAUSEs (the benchmark's own view of where speech is);
 * - role/label agreement: a question or answer the 0.8 s rule labelled BC, or a backchannel labelled
 *   TURN (docs/events.md, "Synthetic dialogues: roles versus labels").
 * Thresholds come from thresholds.ts. Checks flag; they never change the dataset.
 */
import type { BenchmarkEvent, Centiseconds, ChannelEvents, Language } from '../model/types.ts';
import type {
  ChannelChecks,
  ClippingMeasurement,
  DialogueSignalChecks,
  QualityFlag,
  RoleLabelAgreement,
  UtteranceChecks,
} from '../model/quality-report.ts';
import { measureLoudness, type LoudnessMeasurement } from './loudness.ts';
import { countSpokenUnits } from './speech-rate.ts';
import type { QualityThresholds } from './thresholds.ts';

export type {
  ChannelChecks,
  ClippingMeasurement,
  DialogueSignalChecks,
  QualityFlag,
  RoleLabelAgreement,
  UtteranceChecks,
} from '../model/quality-report.ts';

/**
 * Counts full-scale samples and clipping runs in `samples[start, end)`.
 * @param samples one channel, [-1, 1] scale.
 * @param options.fullScaleLevel absolute level that counts as full scale (see thresholds.ts).
 * @param options.minimumRunSamples consecutive full-scale samples that make a clipping run.
 * @param range sample range, default the whole array; clamped to the array.
 */
export function measureClipping(
  samples: Float32Array,
  options: { fullScaleLevel: number; minimumRunSamples: number },
  range: { start?: number; end?: number } = {},
): ClippingMeasurement {
  const start = Math.max(0, Math.min(samples.length, range.start ?? 0));
  const end = Math.max(start, Math.min(samples.length, range.end ?? samples.length));
  let fullScaleSamples = 0;
  let clippedRuns = 0;
  let longestRunSamples = 0;
  let run = 0;
  const closeRun = (): void => {
    if (run >= options.minimumRunSamples) clippedRuns += 1;
    if (run > longestRunSamples) longestRunSamples = run;
    run = 0;
  };
  for (let index = start; index < end; index++) {
    if (Math.abs(samples[index]!) >= options.fullScaleLevel) {
      fullScaleSamples += 1;
      run += 1;
    } else if (run > 0) closeRun();
  }
  closeRun();
  return {
    fullScaleSamples,
    fullScaleRatio: end > start ? fullScaleSamples / (end - start) : 0,
    clippedRuns,
    longestRunSamples,
  };
}

/** Silence of a stretch of samples. */
export interface SilenceMeasurement {
  /** 10 ms frames examined. */
  frames: number;
  /** Frames whose RMS level is below the threshold. */
  silentFrames: number;
  /** `silentFrames / frames` (0 for no frames). */
  silenceRatio: number;
}

/**
 * Share of silent 10 ms frames in `samples[start, end)`: frames of `round(sampleRate / 100)` samples
 * from `start`; a last partial frame is measured over the samples it has. A frame is silent when its
 * RMS level, 20 log10(rms) with full scale 1.0, is below `thresholdDbfs` (digital zeros are silent).
 * @param sampleRate Hz.
 * @throws RangeError when `sampleRate` is not positive.
 */
export function measureSilence(
  samples: Float32Array,
  sampleRate: number,
  thresholdDbfs: number,
  range: { start?: number; end?: number } = {},
): SilenceMeasurement {
  if (!(sampleRate > 0)) throw new RangeError(`sample rate must be positive, got ${sampleRate}`);
  const frameLength = Math.max(1, Math.round(sampleRate / 100));
  const start = Math.max(0, Math.min(samples.length, range.start ?? 0));
  const end = Math.max(start, Math.min(samples.length, range.end ?? samples.length));
  const threshold = Math.pow(10, thresholdDbfs / 20);
  const thresholdEnergy = threshold * threshold;
  let frames = 0;
  let silentFrames = 0;
  for (let frameStart = start; frameStart < end; frameStart += frameLength) {
    const frameEnd = Math.min(end, frameStart + frameLength);
    let energy = 0;
    for (let index = frameStart; index < frameEnd; index++) energy += samples[index]! * samples[index]!;
    frames += 1;
    if (energy / (frameEnd - frameStart) < thresholdEnergy) silentFrames += 1;
  }
  return { frames, silentFrames, silenceRatio: frames > 0 ? silentFrames / frames : 0 };
}

/**
 * Share of 10 ms frames in which every channel is silent (dead air in a dialogue), frames as in
 * {@link measureSilence}; 0 for empty audio.
 * @throws RangeError when `sampleRate` is not positive or the channels differ in length.
 */
export function measureMutualSilence(
  channels: readonly Float32Array[],
  sampleRate: number,
  thresholdDbfs: number,
): number {
  if (!(sampleRate > 0)) throw new RangeError(`sample rate must be positive, got ${sampleRate}`);
  const length = channels[0]?.length ?? 0;
  if (channels.some((channel) => channel.length !== length)) throw new RangeError('channels differ in length');
  const frameLength = Math.max(1, Math.round(sampleRate / 100));
  const threshold = Math.pow(10, thresholdDbfs / 20);
  const thresholdEnergy = threshold * threshold;
  let frames = 0;
  let silentFrames = 0;
  for (let frameStart = 0; frameStart < length; frameStart += frameLength) {
    const frameEnd = Math.min(length, frameStart + frameLength);
    frames += 1;
    const silent = channels.every((samples) => {
      let energy = 0;
      for (let index = frameStart; index < frameEnd; index++) energy += samples[index]! * samples[index]!;
      return energy / (frameEnd - frameStart) < thresholdEnergy;
    });
    if (silent) silentFrames += 1;
  }
  return frames > 0 ? silentFrames / frames : 0;
}

/** Peak absolute sample of `samples[start, end)` in dBFS (full scale 1.0); null when all zero or empty. */
export function samplePeakDbfs(samples: Float32Array, range: { start?: number; end?: number } = {}): number | null {
  const start = Math.max(0, range.start ?? 0);
  const end = Math.min(samples.length, range.end ?? samples.length);
  let peak = 0;
  for (let index = start; index < end; index++) peak = Math.max(peak, Math.abs(samples[index]!));
  return peak > 0 ? 20 * Math.log10(peak) : null;
}

/**
 * Centiseconds of speech on one channel inside [start, end): the TURN and BC spans clipped to the
 * interval, minus the SHORTPAUSE spans (which lie inside TURN/BC spans by construction).
 * @param events one channel's events, centiseconds.
 */
export function speechCentisecondsWithin(
  events: readonly BenchmarkEvent[],
  start: Centiseconds,
  end: Centiseconds,
): Centiseconds {
  const overlap = (event: BenchmarkEvent) => Math.max(0, Math.min(end, event.end) - Math.max(start, event.start));
  let total = 0;
  for (const event of events) {
    if (event.event === 'TURN' || event.event === 'BC') total += overlap(event);
    else if (event.event === 'SHORTPAUSE') total -= overlap(event);
  }
  return Math.max(0, total);
}

/**
 * Compares an utterance's kind with the TURN/BC units of its channel that overlap [start, end)
 * (same rule as stages/annotate-events.ts, plus the backchannel direction).
 */
export function roleLabelAgreement(
  kind: string,
  channelEvents: readonly BenchmarkEvent[],
  start: Centiseconds,
  end: Centiseconds,
): RoleLabelAgreement {
  const units = channelEvents.filter(
    (event) => (event.event === 'TURN' || event.event === 'BC') && event.start < end && event.end > start,
  );
  if (units.length === 0) return 'no-speech';
  const backchannels = units.filter((event) => event.event === 'BC').length;
  if (kind === 'backchannel') return backchannels === units.length ? 'agrees' : 'labelled-turn';
  if (backchannels === 0) return 'agrees';
  return backchannels === units.length ? 'labelled-bc-whole' : 'labelled-bc-part';
}

/** The metadata of one utterance the checks need (metadata/{id}.json `utterances[]`). */
export interface UtteranceForChecks {
  index: number;
  role: string;
  kind: string;
  channel: number;
  /** Seconds. */
  start: number;
  /** Seconds. */
  end: number;
  /** The text the engine spoke (metadata `text.synthesized`, else `text.final`). */
  spokenText: string;
}

/** Input of {@link checkDialogueSignal}. */
export interface DialogueSignalInput {
  /** The WAV file (measured by ffmpeg for loudness). */
  file: string;
  /** The decoded audio of `file`. */
  audio: { channels: Float32Array[]; sampleRate: number };
  language: Language;
  events: ChannelEvents;
  utterances: readonly UtteranceForChecks[];
}

function round(value: number, digits: number): number {
  const factor = 10 ** digits;
  const rounded = Math.round(value * factor) / factor;
  return rounded === 0 ? 0 : rounded; // no -0
}

function roundLoudness(measurement: LoudnessMeasurement): LoudnessMeasurement {
  return {
    integratedLufs: measurement.integratedLufs === null ? null : round(measurement.integratedLufs, 1),
    truePeakDbtp: measurement.truePeakDbtp === null ? null : round(measurement.truePeakDbtp, 1),
    loudnessRangeLu: round(measurement.loudnessRangeLu, 1),
  };
}

/**
 * Loudness flags of one measurement: `loudness-off-target` when the integrated loudness is more than
 * the tolerance away from the target, `true-peak-over-limit` when the true peak exceeds the maximum,
 * `channel-silent` when nothing passes the gate.
 */
export function loudnessFlags(measurement: LoudnessMeasurement, thresholds: QualityThresholds): QualityFlag[] {
  const flags: QualityFlag[] = [];
  if (measurement.integratedLufs === null) flags.push('channel-silent');
  else if (Math.abs(measurement.integratedLufs - thresholds.targetLoudnessLufs) > thresholds.loudnessToleranceLu)
    flags.push('loudness-off-target');
  if (measurement.truePeakDbtp !== null && measurement.truePeakDbtp > thresholds.maximumTruePeakDbtp)
    flags.push('true-peak-over-limit');
  return flags;
}

/**
 * Runs every check on one dialogue. Values are rounded (ratios to 6 decimals, seconds to 0.01,
 * rates to 0.01, loudness to 0.1 LU as ffmpeg prints) so the output is deterministic and compact.
 * @param options.measureLoudness run ffmpeg for loudness (default true); false leaves loudness null.
 * @throws RangeError when an utterance's channel is not in the audio; LoudnessMeasurementError when
 *   ffmpeg fails; WordTokenizerError when the Japanese dictionary cannot be loaded.
 */
export async function checkDialogueSignal(
  input: DialogueSignalInput,
  thresholds: QualityThresholds,
  options: { measureLoudness?: boolean; ffmpeg?: string } = {},
): Promise<DialogueSignalChecks> {
  const { audio, events } = input;
  const sampleRate = audio.sampleRate;
  const length = audio.channels[0]?.length ?? 0;
  const clippingOptions = {
    fullScaleLevel: thresholds.fullScaleLevel,
    minimumRunSamples: thresholds.minimumClippingRunSamples,
  };
  const rateRange = thresholds.speechRate[input.language];
  const flagCounts: Partial<Record<QualityFlag, number>> = {};
  const count = (flags: readonly QualityFlag[]) => {
    for (const flag of flags) flagCounts[flag] = (flagCounts[flag] ?? 0) + 1;
  };

  const channels: ChannelChecks[] = [];
  for (let channel = 0; channel < audio.channels.length; channel++) {
    const samples = audio.channels[channel]!;
    const clipping = measureClipping(samples, clippingOptions);
    const silence = measureSilence(samples, sampleRate, thresholds.silenceThresholdDbfs);
    const loudness =
      options.measureLoudness === false
        ? null
        : roundLoudness(
            await measureLoudness(input.file, { channel, ...(options.ffmpeg ? { ffmpeg: options.ffmpeg } : {}) }),
          );
    const flags: QualityFlag[] = [];
    if (clipping.clippedRuns > 0) flags.push('clipping');
    if (loudness) flags.push(...loudnessFlags(loudness, thresholds));
    count(flags);
    channels.push({
      channel,
      clipping: { ...clipping, fullScaleRatio: round(clipping.fullScaleRatio, 6) },
      silenceRatio: round(silence.silenceRatio, 6),
      loudness,
      flags,
    });
  }
  const programmeLoudness =
    options.measureLoudness === false
      ? null
      : roundLoudness(await measureLoudness(input.file, options.ffmpeg ? { ffmpeg: options.ffmpeg } : {}));

  const utterances: UtteranceChecks[] = [];
  const byRole: Record<string, { units: number; speechCs: number }> = {};
  let unitCounter = '';
  for (const utterance of input.utterances) {
    const samples = audio.channels[utterance.channel];
    if (samples === undefined || (utterance.channel !== 0 && utterance.channel !== 1)) {
      throw new RangeError(
        `utterance ${utterance.index} is on channel ${utterance.channel}, which the audio (${audio.channels.length} channels) or the events do not have`,
      );
    }
    const channelEvents = events[utterance.channel as 0 | 1];
    const startCs = Math.round(utterance.start * 100);
    const endCs = Math.round(utterance.end * 100);
    const range = {
      start: Math.round(utterance.start * sampleRate),
      end: Math.min(length, Math.round(utterance.end * sampleRate)),
    };
    const clipping = measureClipping(samples, clippingOptions, range);
    const silence = measureSilence(samples, sampleRate, thresholds.silenceThresholdDbfs, range);
    const speechCs = speechCentisecondsWithin(channelEvents, startCs, endCs);
    const spoken = await countSpokenUnits(utterance.spokenText, input.language);
    unitCounter = spoken.counter;
    const speechRate = speechCs > 0 ? round(spoken.units / (speechCs / 100), 2) : null;
    const roleLabel = roleLabelAgreement(utterance.kind, channelEvents, startCs, endCs);
    const flags: QualityFlag[] = [];
    if (clipping.clippedRuns > 0) flags.push('clipping');
    if (silence.silenceRatio > thresholds.maximumUtteranceSilenceRatio) flags.push('silence-ratio-high');
    if (speechRate !== null && rateRange && speechRate < rateRange.minimum) flags.push('speech-rate-low');
    if (speechRate !== null && rateRange && speechRate > rateRange.maximum) flags.push('speech-rate-high');
    if (roleLabel === 'labelled-bc-whole' || roleLabel === 'labelled-bc-part') flags.push('labelled-bc');
    if (roleLabel === 'labelled-turn') flags.push('labelled-turn');
    if (roleLabel === 'no-speech') flags.push('no-speech');
    count(flags);
    const role = (byRole[utterance.role] ??= { units: 0, speechCs: 0 });
    role.units += spoken.units;
    role.speechCs += speechCs;
    utterances.push({
      index: utterance.index,
      role: utterance.role,
      kind: utterance.kind,
      channel: utterance.channel,
      start: utterance.start,
      end: utterance.end,
      clipping: { ...clipping, fullScaleRatio: round(clipping.fullScaleRatio, 6) },
      samplePeakDbfs: ((peak) => (peak === null ? null : round(peak, 2)))(samplePeakDbfs(samples, range)),
      silenceRatio: round(silence.silenceRatio, 6),
      speechSeconds: speechCs / 100,
      units: spoken.units,
      unit: spoken.unit,
      speechRate,
      roleLabel,
      flags,
    });
  }
  const speechRateByRole = Object.fromEntries(
    Object.keys(byRole)
      .sort()
      .map((role) => {
        const totals = byRole[role]!;
        return [
          role,
          {
            units: totals.units,
            speechSeconds: totals.speechCs / 100,
            speechRate: totals.speechCs > 0 ? round(totals.units / (totals.speechCs / 100), 2) : null,
          },
        ];
      }),
  );
  return {
    durationSeconds: round(length / sampleRate, 2),
    mutualSilenceRatio: round(measureMutualSilence(audio.channels, sampleRate, thresholds.silenceThresholdDbfs), 6),
    channels,
    programmeLoudness,
    utterances,
    speechRateByRole,
    unitCounter,
    flagCounts: Object.fromEntries(Object.entries(flagCounts).sort(([a], [b]) => (a < b ? -1 : 1))) as Partial<
      Record<QualityFlag, number>
    >,
  };
}
