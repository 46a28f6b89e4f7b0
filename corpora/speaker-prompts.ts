/**
 * Speaker prompt pool: single-speaker clips with their exact transcripts, cut from reference
 * recordings, for zero-shot voice cloning (CosyVoice's `prompt_wav` + `prompt_text`,
 * docs/services.md "Voice prompts": a prompt of at most 30 s whose text is its transcript, or the prompt
 * leaks into the output).
 *
 * How clips are chosen (all times integer centiseconds):
 * 1. Per recording and channel, the channel's supervisions in time order are grouped greedily: a group
 *    starts at a supervision and takes the next one while the silence before it is at most
 *    `maximumGapSeconds`, the group stays within `maximumDurationSeconds`, and the group stays valid.
 * 2. A group is valid when (a) the other channel has no speech segment within
 *    `otherChannelMarginSeconds` of the clip (so the clip is one speaker, also on a mono mix or with
 *    crosstalk), and (b) every bit of the clip's own channel that is speech lies inside the group's
 *    supervisions (no untranscribed speech such as laughter, so the text is the exact transcript).
 * 3. A group of at least `minimumDurationSeconds` becomes a clip and the next group starts after it;
 *    a shorter one is dropped and the next group starts at its second supervision.
 * 4. A clip whose transcript holds a placeholder token (`<unk>`: a word the aligner did not know) is
 *    rejected: its text is not the exact transcript. With `minimumSnrDb`, a clip whose signal-to-noise
 *    ratio (below) is lower is rejected.
 * 5. Per speaker (across recordings and corpora), the `clipsPerSpeaker` longest clips are kept (ties:
 *    earlier recording in the input, earlier start), or, with `selectionSeed`, that many drawn at
 *    random from a stream seeded by (seed, corpus:speaker), so the same seed gives the same pool.
 * Every candidate left out gets a reason (`rejected`).
 *
 * Signal-to-noise ratio of a clip (dB): `10·log10((Ps − Pn) / Pn)`, the textbook definition with the
 * speech power measured as signal plus noise: Ps = mean square of the clip's channel over its speech
 * segments, Pn = mean square of the same channel over the recording's time where neither channel
 * has speech within `otherChannelMarginSeconds` (at least 0.2 s of it, else the SNR is unknown and a
 * minimum rejects the clip); +∞ when Pn is 0 (digital silence).
 *
 * Loudness (`loudness`): each clip gets one gain so that its integrated loudness (ITU-R BS.1770 /
 * EBU R 128, measured by ffmpeg's ebur128 filter, pipeline/quality/loudness.ts) meets the target,
 * lowered when the true peak would pass the ceiling.
 * The clip spans exactly from the first supervision's start to the last one's end; its text is the
 * supervisions' texts joined with `joinTranscript` (no spaces between Japanese pieces).
 *
 * Recordings without transcripts (`untranscribedSpeech`: stereo-wav speech detection, RTTM turns):
 * their channels' speech segments stand in for supervisions in steps 1-3 (so a clip is a clean
 * single-speaker stretch: no speech on the other channel within the margin) and the clip's text comes
 * from `transcribe` (an ASR service or a filled-in TSV, scripts/commands/prompts.ts) given the clip's
 * WAV as written. A clip without a text is written to `clips/` and listed in `untranscribed`, never in
 * the manifest: CosyVoice needs the prompt's transcript.
 *
 * Output: `clips/<id>.wav` (16 kHz mono PCM16 by default) and `speaker-prompts.jsonl`, one line per
 * clip, sorted by corpus, speaker, recording and start; every file written atomically. The same input
 * gives byte-identical output.
 *
 * Steps 1 to 5 (options, grouping, selection): ./speaker-prompt-plan.ts, re-exported here; this module
 * measures SNR and loudness, cuts the clips and writes the pool.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { quantizeToPcm16, type RawAudio } from '../pipeline/audio/raw-audio.ts';
import { resample } from '../pipeline/audio/resample.ts';
import { encodeWavPcm16 } from '../pipeline/audio/wav.ts';
import type { Channel, SpeechSegment, Centiseconds, ReferenceRecording } from '../pipeline/model/types.ts';
import { writeAtomic } from '../pipeline/storage/write-atomic.ts';
import { mergeOverlappingSegments } from './rttm.ts';
import { speakerPromptLineSchema, type SpeakerPromptLine } from '../pipeline/model/speaker-prompt.ts';
import { formatRecordLine } from '../pipeline/storage/json-records.ts';
import {
  candidateSpeakerPrompts,
  resolveSpeakerPromptOptions,
  seconds,
  selectPerSpeaker,
  SPEAKER_PROMPT_MANIFEST,
  type PlannedSpeakerPrompt,
  type RejectedSpeakerPrompt,
  type SpeakerPromptOptions,
} from './speaker-prompt-plan.ts';

export {
  DEFAULT_SPEAKER_PROMPT_OPTIONS,
  EBU_R128_LOUDNESS,
  planSpeakerPrompts,
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
} from './speaker-prompt-plan.ts';

/** What {@link writeSpeakerPromptPool} wrote. */
export interface SpeakerPromptPool {
  entries: SpeakerPromptLine[];
  /** Absolute-or-as-given path of `speaker-prompts.jsonl`. */
  manifestPath: string;
  /** Recordings and clips left out, one reason each. */
  skipped: string[];
  /** Every candidate clip left out, with its reason. */
  rejected: RejectedSpeakerPrompt[];
  /**
   * Clips of untranscribed speech (option `untranscribedSpeech`) that got no text: written to
   * `clips/` for a person to transcribe, never in the manifest.
   */
  untranscribed: UntranscribedSpeakerPrompt[];
  /** Clips of untranscribed speech that `transcribe` gave a text (in the manifest, with `transcribedBy`). */
  transcribed: (Omit<UntranscribedSpeakerPrompt, 'reason'> & { text: string })[];
}

/** A clip cut and written that has no text yet (not in the manifest). */
export interface UntranscribedSpeakerPrompt {
  clip: PlannedSpeakerPrompt;
  /** `clips/<id>.wav`, relative to the pool folder. */
  path: string;
  /** Why it has no text (no transcriber, the ASR service heard no words or failed on it). */
  reason: string;
}

/** Least non-speech time (both channels silent) on which the noise power is measured, centiseconds. */
export const MINIMUM_NOISE_MEASUREMENT: Centiseconds = 20;

/** Mean square of `samples` over the sample ranges of `spans` (centiseconds), and how many samples that was. */
function meanSquare(
  samples: Float32Array,
  sampleRate: number,
  spans: readonly SpeechSegment[],
): { power: number; count: number } {
  let sum = 0;
  let count = 0;
  for (const span of spans) {
    const from = Math.max(0, Math.round((span.start * sampleRate) / 100));
    const to = Math.min(samples.length, Math.round((span.end * sampleRate) / 100));
    for (let index = from; index < to; index += 1) sum += (samples[index] as number) ** 2;
    count += Math.max(0, to - from);
  }
  return { power: count === 0 ? 0 : sum / count, count };
}

/** The complement of sorted, merged `busy` spans within [0, end], centiseconds. */
function gapsOf(busy: readonly SpeechSegment[], end: Centiseconds): SpeechSegment[] {
  const gaps: SpeechSegment[] = [];
  let cursor = 0;
  for (const span of busy) {
    if (span.start > cursor) gaps.push({ start: cursor, end: Math.min(span.start, end) });
    cursor = Math.max(cursor, span.end);
  }
  if (cursor < end) gaps.push({ start: cursor, end });
  return gaps.filter((gap) => gap.end > gap.start);
}

/**
 * Signal-to-noise ratio of a clip (module comment), dB.
 * @param samples the clip's channel of the recording, whole; `sampleRate` in Hz.
 * @returns dB (+Infinity for a digitally silent background), or null when the recording has less than
 *   {@link MINIMUM_NOISE_MEASUREMENT} of time with both channels silent.
 */
export function clipSignalToNoiseRatio(
  clip: PlannedSpeakerPrompt,
  samples: Float32Array,
  sampleRate: number,
  marginSeconds: number,
): number | null {
  const margin = seconds(marginSeconds);
  const { recording } = clip;
  const busy = mergeOverlappingSegments(
    [...recording.segments[0], ...recording.segments[1]].map((segment) => ({
      start: Math.max(0, segment.start - margin),
      end: segment.end + margin,
    })),
  ).segments;
  const end = Math.min(recording.durationCs, Math.floor((samples.length * 100) / sampleRate));
  const noise = meanSquare(samples, sampleRate, gapsOf(busy, end));
  if (noise.count < (MINIMUM_NOISE_MEASUREMENT * sampleRate) / 100) return null;
  const speechSpans = recording.segments[clip.channel]
    .map((segment) => ({ start: Math.max(segment.start, clip.start), end: Math.min(segment.end, clip.end) }))
    .filter((segment) => segment.end > segment.start);
  const speech = meanSquare(samples, sampleRate, speechSpans);
  if (noise.power === 0) return Number.POSITIVE_INFINITY;
  return 10 * Math.log10(Math.max(speech.power - noise.power, Number.MIN_VALUE) / noise.power);
}

/** Finds the audio file and file channel of one recording channel (see corpora/reference-recording.ts). */
function audioSourceOf(recording: ReferenceRecording, channel: Channel): string {
  const entry = (recording.audio ?? []).find((candidate) => candidate.channel === channel);
  if (entry === undefined) throw new Error(`speaker prompts: ${recording.id} has no audio for channel ${channel}`);
  return entry.path;
}

/** The samples of one recording channel in a decoded audio file (file channel c, or its only channel). */
function channelSamples(audio: RawAudio, channel: Channel, file: string): Float32Array {
  const samples = audio.channels.length >= 2 ? audio.channels[channel] : audio.channels[0];
  if (samples === undefined) throw new Error(`speaker prompts: ${file} has no audio channels`);
  return samples;
}

/** Clips grouped by the audio file of their channel, in first-use order. */
function byAudioFile(clips: readonly PlannedSpeakerPrompt[]): Map<string, PlannedSpeakerPrompt[]> {
  const files = new Map<string, PlannedSpeakerPrompt[]>();
  for (const clip of clips) {
    const file = audioSourceOf(clip.recording, clip.channel);
    files.set(file, [...(files.get(file) ?? []), clip]);
  }
  return files;
}

const tenths = (value: number): number => Math.round(value * 10) / 10;

/**
 * Cuts the planned clips and writes the pool: `clips/<id>.wav` (mono PCM16 at `sampleRate`) and the
 * JSONL manifest, all atomically. Audio of a recording channel is the file's channel c when the file
 * has two or more channels, its only channel when mono. With `minimumSnrDb`, every candidate's SNR is
 * measured first (one audio file in memory at a time) and the per-speaker selection is made among
 * those that pass; with `loudness`, each clip is measured (ffmpeg ebur128 on a temporary file) and
 * given its gain.
 *
 * @param recordings reference recordings (with supervisions and audio to contribute clips).
 * @param outputDirectory folder to write into (created when missing).
 * @param options see {@link SpeakerPromptOptions}.
 * @returns the manifest entries (in file order), the manifest path, the skip lines and the rejected
 *   candidates (clips that reach past the end of their audio, fail the SNR minimum or are silent are
 *   rejected too).
 * @throws RangeError for invalid options; the reader's error when an audio file cannot be read;
 *   LoudnessMeasurementError when ffmpeg cannot measure a clip.
 */
export async function writeSpeakerPromptPool(
  recordings: readonly ReferenceRecording[],
  outputDirectory: string,
  options: SpeakerPromptOptions = {},
): Promise<SpeakerPromptPool> {
  const resolved = resolveSpeakerPromptOptions(options);
  const planned = candidateSpeakerPrompts(recordings, resolved);
  const skipped = [...planned.skipped];
  const rejected = [...planned.rejected];
  const reject = (clip: PlannedSpeakerPrompt, reason: string) =>
    rejected.push({
      corpus: clip.corpus,
      recording: clip.recording.id,
      channel: clip.channel,
      speaker: clip.speaker,
      start: clip.start,
      end: clip.end,
      reason,
    });
  let candidates = planned.candidates;
  const snr = new Map<string, number | null>();
  if (resolved.minimumSnrDb !== null) {
    const minimum = resolved.minimumSnrDb;
    const passing = new Set<PlannedSpeakerPrompt>();
    for (const [file, clips] of byAudioFile(candidates.map((candidate) => candidate.clip))) {
      const audio = await resolved.readAudio(file);
      for (const clip of clips) {
        const samples = channelSamples(audio, clip.channel, file);
        if (Math.round((clip.end * audio.sampleRate) / 100) > samples.length) {
          reject(clip, `reaches past the end of ${file}`);
          continue;
        }
        const ratio = clipSignalToNoiseRatio(clip, samples, audio.sampleRate, resolved.otherChannelMarginSeconds);
        snr.set(clip.id, ratio === null || ratio === Number.POSITIVE_INFINITY ? ratio : tenths(ratio));
        if (ratio === null)
          reject(
            clip,
            `signal-to-noise ratio unknown: under ${MINIMUM_NOISE_MEASUREMENT / 100} s with both channels silent to measure the noise on`,
          );
        else if (ratio < minimum) reject(clip, `signal-to-noise ratio ${tenths(ratio)} dB below ${minimum} dB`);
        else passing.add(clip);
      }
    }
    candidates = candidates.filter((candidate) => passing.has(candidate.clip));
  }
  const selected = selectPerSpeaker(candidates, resolved);
  skipped.push(...selected.skipped);
  rejected.push(...selected.rejected);
  const written = new Map<string, SpeakerPromptLine>();
  const untranscribed: UntranscribedSpeakerPrompt[] = [];
  const transcribed: SpeakerPromptPool['transcribed'] = [];
  const scratch =
    resolved.loudness === null ? undefined : await mkdtemp(path.join(os.tmpdir(), 'duplexsynth-prompt-loudness-'));
  try {
    // One audio file in memory at a time: cut every clip of a file, then move on.
    for (const [file, clips] of byAudioFile(selected.clips)) {
      const audio = await resolved.readAudio(file);
      for (const clip of clips) {
        const samples = channelSamples(audio, clip.channel, file);
        const from = Math.round((clip.start * audio.sampleRate) / 100);
        const to = Math.round((clip.end * audio.sampleRate) / 100);
        if (to > samples.length) {
          skipped.push(`${clip.id}: reaches past the end of ${file}`);
          reject(clip, `reaches past the end of ${file}`);
          continue;
        }
        const cut = await resample(
          { channels: [samples.slice(from, to)], sampleRate: audio.sampleRate },
          resolved.sampleRate,
          resolved.resampleQuality,
        );
        let levels: Pick<SpeakerPromptLine, 'loudnessLufs' | 'gainDb'> = {};
        if (resolved.loudness !== null && scratch !== undefined) {
          const probe = path.join(scratch, `${clip.id}.wav`);
          await writeFile(probe, encodeWavPcm16(cut));
          const measured = await resolved.measureLoudness(probe);
          await rm(probe, { force: true });
          if (measured.integratedLufs === null) {
            reject(clip, 'silent: no loudness above the gate');
            continue;
          }
          let gain = resolved.loudness.targetLufs - measured.integratedLufs;
          if (measured.truePeakDbtp !== null && measured.truePeakDbtp + gain > resolved.loudness.maximumTruePeakDbtp) {
            gain = resolved.loudness.maximumTruePeakDbtp - measured.truePeakDbtp;
          }
          const factor = 10 ** (gain / 20);
          const channel = cut.channels[0] as Float32Array;
          const scaled = new Float32Array(channel.length);
          for (let index = 0; index < channel.length; index += 1)
            scaled[index] = Math.max(-1, Math.min(1, (channel[index] as number) * factor));
          cut.channels[0] = quantizeToPcm16(scaled);
          levels = { loudnessLufs: tenths(measured.integratedLufs + gain), gainDb: tenths(gain) };
        }
        const relativePath = `clips/${clip.id}.wav`;
        const wav = encodeWavPcm16(cut);
        await writeAtomic(path.join(outputDirectory, relativePath), wav);
        let text = clip.text;
        let transcribedBy: string | undefined;
        if (text === '') {
          const found =
            resolved.transcribe === null ? { missing: 'no transcriber' } : await resolved.transcribe(clip, wav);
          if ('missing' in found) {
            untranscribed.push({ clip, path: relativePath, reason: found.missing });
            continue;
          }
          text = found.text;
          transcribedBy = found.transcribedBy;
          transcribed.push({ clip, path: relativePath, text });
        }
        written.set(clip.id, {
          id: clip.id,
          speaker: clip.speaker,
          corpus: clip.corpus,
          recording: clip.recording.id,
          start: clip.start / 100,
          end: clip.end / 100,
          text,
          ...(transcribedBy === undefined ? {} : { transcribedBy }),
          path: relativePath,
          durationSeconds: (clip.end - clip.start) / 100,
          ...(snr.has(clip.id)
            ? { snrDb: snr.get(clip.id) === Number.POSITIVE_INFINITY ? null : (snr.get(clip.id) as number | null) }
            : {}),
          ...levels,
        });
      }
    }
  } finally {
    if (scratch !== undefined) await rm(scratch, { recursive: true, force: true });
  }
  const entries = selected.clips.flatMap((clip) => written.get(clip.id) ?? []);
  const manifestPath = path.join(outputDirectory, SPEAKER_PROMPT_MANIFEST);
  await writeAtomic(
    manifestPath,
    entries
      .map((entry, index) => formatRecordLine(`${manifestPath}:${index + 1}`, speakerPromptLineSchema, entry))
      .join(''),
  );
  return { entries, manifestPath, skipped, rejected, untranscribed, transcribed };
}
