/**
 * What the word-level timing loaders share (corpora/nxt.ts, textgrid.ts, ctm.ts): which tokens are
 * speech, and how timed words become one `ReferenceRecording` (../pipeline/model/types.ts).
 *
 * From words to a recording (all times integer centiseconds, rounded once at input):
 * - **speech segments**: per channel, the speech words merged while they touch or overlap
 *   (`segmentsFromWords` of pipeline/events, docs/events.md "Speech segments from words and from events"); the
 *   measure stage then merges segments across silences ≤ 0.50 s into IPUs (docs/events.md step 1), so a
 *   silence over 0.50 s splits and floor transfers are measured to the centisecond;
 * - **supervisions**: one per speech segment (a stretch of words that touch; any silence ends it,
 *   {@link SUPERVISION_MAXIMUM_PAUSE} = 0), each with its words' text joined by `joinTranscript` (no
 *   spaces between Japanese pieces) and its `words` timings; noise, breath and silence tokens are not
 *   speech and not text. Segments, not IPUs: the speaker prompt pool cuts clips at supervision
 *   boundaries and joins neighbouring ones again across short silences, so the finest unit lets it
 *   end a clip at any pause before the other speaker comes in, and invents no pause threshold;
 * - a speech word whose start and end round to the same centisecond (an elided word, or a word shorter
 *   than 5 ms) adds no speech time; its text goes into the supervision whose span contains it.
 */
import {
  buildIpus,
  DEFAULT_EVENT_THRESHOLDS,
  segmentsFromWords,
  type EventThresholds,
} from '../pipeline/events/index.ts';
import type {
  AlignedWord,
  Centiseconds,
  Channel,
  ReferenceRecording,
  ReferenceSupervision,
} from '../pipeline/model/types.ts';
import path from 'node:path';
import {
  compareSupervisions,
  formatCentiseconds,
  framesToCentiseconds,
  isFile,
  joinTranscript,
  readWavHeader,
  REFERENCE_CHANNELS,
  ReferenceCorpusError,
  validateReferenceRecording,
} from './reference-recording.ts';

/**
 * Tokens that are not speech by default, compared case-insensitively after trimming. Sources:
 * - `''`: an empty interval, how Montreal Forced Aligner 2+ writes silence in its word tiers (MFA
 *   MontrealCorpusTools/Montreal-Forced-Aligner#324: "any blank output in the textgrid ... means silence");
 * - `sil`, `sp`, `<sil>`, `{SL}`, `<eps>`: silence / short pause / Kaldi epsilon (MFA 1 and HTK/Kaldi
 *   aligners, MFA with `--disable_textgrid_cleanup`);
 * - `spn`, `<spn>`, `{LG}`, `{NS}`, ...: MFA's spoken-noise and laughter/noise dictionary symbols;
 * - `[noise]`, `[laughter]`, `[vocalized-noise]`, ...: Switchboard/Fisher (Kaldi recipes) markers
 *   that ASR systems carry into their CTM output;
 * - `<noise>`, `<breath>`, ...: the same in angle brackets (NIST/LDC conventions).
 * Hesitations (`uh`, `um`, sclite's `%HESITATION`) are speech and not listed.
 */
export const DEFAULT_NON_SPEECH_TOKENS: readonly string[] = Object.freeze([
  '',
  'sil',
  'sp',
  'spn',
  '<sil>',
  '<sp>',
  '<spn>',
  '<eps>',
  '<s>',
  '</s>',
  '{sl}',
  '{lg}',
  '{ns}',
  '{br}',
  '{cg}',
  '{ls}',
  '{sn}',
  '{laugh}',
  '{breath}',
  '{cough}',
  '{noise}',
  '{lipsmack}',
  '[noise]',
  '[laughter]',
  '[laugh]',
  '[breath]',
  '[cough]',
  '[lipsmack]',
  '[vocalized-noise]',
  '[sil]',
  '[silence]',
  '<noise>',
  '<breath>',
  '<laugh>',
  '<laughter>',
  '<cough>',
  '<lipsmack>',
  '<spoken_noise>',
  '<spoken-noise>',
]);

/** Longest silence inside one supervision of a word-level recording, centiseconds: none (module comment). */
export const SUPERVISION_MAXIMUM_PAUSE: Centiseconds = 0;

/** Decides whether a token is speech. */
export interface NonSpeechTokenOptions {
  /**
   * Tokens that are not speech (case-insensitive, compared after trimming); replaces the default
   * {@link DEFAULT_NON_SPEECH_TOKENS}. An empty or whitespace-only token is never speech.
   */
  nonSpeechTokens?: readonly string[];
}

/**
 * A predicate telling speech tokens from non-speech ones (silence, noise, breath, laughter markers).
 * @param tokens the non-speech tokens; default {@link DEFAULT_NON_SPEECH_TOKENS}.
 * @returns `isSpeech(text)`: false for an empty/whitespace token or one in `tokens` (case-insensitive).
 */
export function speechTokenPredicate(tokens: readonly string[] = DEFAULT_NON_SPEECH_TOKENS): (text: string) => boolean {
  const set = new Set(tokens.map((token) => token.trim().toLowerCase()));
  return (text) => {
    const trimmed = text.trim();
    return trimmed !== '' && !set.has(trimmed.toLowerCase());
  };
}

/** One timed token of a word-level transcript, as read (before speech/non-speech counting). */
export interface TimedToken {
  channel: Channel;
  /** Integer centiseconds, rounded once from the file's seconds. */
  start: Centiseconds;
  end: Centiseconds;
  /** The token as written, trimmed (a word, or a noise/silence marker). */
  text: string;
  /** False for silence, noise and breath tokens. */
  speech: boolean;
}

/** What a word-level loader knows about one recording, for {@link recordingFromTimedTokens}. */
export interface TimedTokenRecordingInput {
  id: string;
  /** Loader format (`nxt`, `textgrid`, `ctm`). */
  format: string;
  sources: string[];
  /** Tokens of both channels, any order. */
  tokens: readonly TimedToken[];
  channelSpeakers: Record<Channel, string>;
  /** Length of the recording, centiseconds; default: the end of the last token (any kind). */
  durationCs?: Centiseconds;
  audio?: { path: string; channel: Channel }[];
  /** Loader notes (quirks of the format or file), written before the automatic counts. */
  notes: string[];
  /** Longest silence inside one supervision, centiseconds; default {@link SUPERVISION_MAXIMUM_PAUSE}. */
  supervisionMaximumPause?: Centiseconds;
}

/**
 * Builds a `ReferenceRecording` from timed tokens (module comment: segments from the speech words,
 * one supervision per speech segment with text and word timings). Adds notes with the counts of speech words,
 * non-speech tokens (the most frequent listed) and zero-length words.
 *
 * @returns a recording that passes `validateReferenceRecording`.
 * @throws Error (validateReferenceRecording) when a token has a negative time or end < start, naming
 *   the recording; callers check times while parsing so this names file and line first.
 */
export function recordingFromTimedTokens(input: TimedTokenRecordingInput): ReferenceRecording {
  const thresholds: EventThresholds = {
    ...DEFAULT_EVENT_THRESHOLDS,
    maxPauseInIpu: input.supervisionMaximumPause ?? SUPERVISION_MAXIMUM_PAUSE,
  };
  const speech = input.tokens.filter((token) => token.speech);
  const timedWords: AlignedWord[] = speech
    .filter((token) => token.end > token.start)
    .map((token) => ({ channel: token.channel, start: token.start, end: token.end, word: token.text }));
  const segments = segmentsFromWords(timedWords);
  const supervisions: ReferenceSupervision[] = [];
  let unplacedZeroLength = 0;
  for (const channel of REFERENCE_CHANNELS) {
    const channelTokens = speech
      .filter((token) => token.channel === channel)
      .map((token, order) => ({ token, order }))
      .sort((a, b) => a.token.start - b.token.start || a.token.end - b.token.end || a.order - b.order)
      .map(({ token }) => token);
    const phrases = buildIpus(segments[channel], thresholds, channel);
    let next = 0;
    for (const ipu of phrases) {
      const inside: TimedToken[] = [];
      while (next < channelTokens.length && (channelTokens[next] as TimedToken).start < ipu.start) {
        unplacedZeroLength += 1; // only a zero-length word can lie before its phrase (non-zero words make the phrases)
        next += 1;
      }
      while (next < channelTokens.length && (channelTokens[next] as TimedToken).start <= ipu.end) {
        const token = channelTokens[next] as TimedToken;
        if (token.end > ipu.end) break;
        inside.push(token);
        next += 1;
      }
      supervisions.push({
        channel,
        start: ipu.start,
        end: ipu.end,
        speaker: input.channelSpeakers[channel],
        text: joinTranscript(inside.map((token) => token.text)),
        words: inside
          .filter((token) => token.end > token.start)
          .map((token) => ({ channel, start: token.start, end: token.end, word: token.text })),
      });
    }
    unplacedZeroLength += channelTokens.length - next;
  }
  supervisions.sort(compareSupervisions);
  const nonSpeech = new Map<string, number>();
  for (const token of input.tokens) {
    if (!token.speech) nonSpeech.set(token.text, (nonSpeech.get(token.text) ?? 0) + 1);
  }
  const nonSpeechCount = input.tokens.length - speech.length;
  const zeroLength = speech.length - timedWords.length;
  const notes = [...input.notes];
  notes.push(
    `${timedWords.length} timed speech words in ${supervisions.length} supervisions (${thresholds.maxPauseInIpu === 0 ? 'one per speech segment' : `silences over ${formatCentiseconds(thresholds.maxPauseInIpu)} s split`})`,
  );
  if (nonSpeechCount > 0) {
    const listed = [...nonSpeech.entries()]
      .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
      .slice(0, 8)
      .map(([text, count]) => `${JSON.stringify(text)} ${count}`)
      .join(', ');
    notes.push(
      `${nonSpeechCount} non-speech tokens not counted as speech (${listed}${nonSpeech.size > 8 ? ', ...' : ''})`,
    );
  }
  if (zeroLength > 0) {
    notes.push(
      `${zeroLength} speech words start and end on the same centisecond: no speech time; their text is kept in the supervision around them` +
        (unplacedZeroLength > 0
          ? ` (${unplacedZeroLength} lie outside every phrase and are left out of the text)`
          : ''),
    );
  }
  const lastEnd = input.tokens.reduce((latest, token) => Math.max(latest, token.end), 0);
  const recording: ReferenceRecording = {
    id: input.id,
    format: input.format,
    sources: input.sources,
    durationCs: input.durationCs ?? lastEnd,
    segments,
    channelSpeakers: input.channelSpeakers,
    ...(input.audio === undefined ? {} : { audio: input.audio }),
    supervisions,
    notes,
  };
  validateReferenceRecording(recording);
  return recording;
}

/** Audio found for a recording by {@link findRecordingAudio}. */
export interface FoundRecordingAudio {
  audio: { path: string; channel: Channel }[];
  /** Length of the audio (the shorter file of a pair), centiseconds. */
  durationCs: Centiseconds;
  /** How the audio maps onto the channels, for the recording's notes. */
  note: string;
}

/**
 * Finds the audio of a recording in `folder`: `<id>.wav` with two channels (file channel c = recording
 * channel c), or `<id>_0.wav` and `<id>_1.wav` (one mono file per speaker, the stereo-wav loader's
 * naming), or a mono `<id>.wav` (a mix: both channels point at it; the speaker prompt pool then relies
 * on the other channel being silent). Only WAV headers are read.
 *
 * @returns the audio entries, or undefined when no such file exists.
 * @throws ReferenceCorpusError naming the file when a WAV has more than two channels, a pair file is
 *   not mono, one file of a pair is there without the other (a missing channel), or a file is not a
 *   WAV file this reader understands.
 */
export async function findRecordingAudio(folder: string, id: string): Promise<FoundRecordingAudio | undefined> {
  const header = async (file: string) => {
    const info = await readWavHeader(file);
    if (info === undefined)
      throw new ReferenceCorpusError(file, {}, 'not a RIFF/WAVE file with a fmt and a data chunk');
    return info;
  };
  const single = path.join(folder, `${id}.wav`);
  if (await isFile(single)) {
    const info = await header(single);
    if (info.channelCount > 2)
      throw new ReferenceCorpusError(
        single,
        {},
        `has ${info.channelCount} channels, expected 2 (one speaker per channel) or 1`,
      );
    return {
      audio: REFERENCE_CHANNELS.map((channel) => ({ path: single, channel })),
      durationCs: framesToCentiseconds(info.frameCount, info.sampleRate),
      note:
        info.channelCount === 2
          ? `audio ${path.basename(single)}: file channel 0 = channel 0, file channel 1 = channel 1`
          : `audio ${path.basename(single)} is mono (both speakers mixed): both channels point at it`,
    };
  }
  const pair = REFERENCE_CHANNELS.map((channel) => path.join(folder, `${id}_${channel}.wav`));
  const [pair0Exists, pair1Exists] = [await isFile(pair[0] as string), await isFile(pair[1] as string)];
  if (pair0Exists && pair1Exists) {
    let durationCs = Number.POSITIVE_INFINITY;
    for (const file of pair) {
      const info = await header(file);
      if (info.channelCount !== 1)
        throw new ReferenceCorpusError(
          file,
          {},
          `has ${info.channelCount} channels, expected 1 (one mono file per speaker)`,
        );
      durationCs = Math.min(durationCs, framesToCentiseconds(info.frameCount, info.sampleRate));
    }
    return {
      audio: REFERENCE_CHANNELS.map((channel) => ({ path: pair[channel] as string, channel })),
      durationCs,
      note: `audio: channel 0 = ${path.basename(pair[0] as string)}, channel 1 = ${path.basename(pair[1] as string)}`,
    };
  }
  const present = pair.filter((file, index) => [pair0Exists, pair1Exists][index]);
  if (present.length === 1) {
    const missing = pair.find((file) => !present.includes(file)) as string;
    throw new ReferenceCorpusError(
      present[0] as string,
      {},
      `has no partner: ${path.basename(missing)} (the other speaker's channel) is missing beside it`,
    );
  }
  return undefined;
}
