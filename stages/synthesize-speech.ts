/**
 * Stage `synthesize-speech`: every utterance of a dialogue spoken by the configured TTS engine with
 * the voice of its role, trimmed to speech, with speech segments and word timings.
 *
 * Role-aware guard (../shared/docs/events.md, "Synthetic dialogues"): an IPU of at most 0.8 s is
 * labelled BC by rule 2, so a question or an answer whose speech is shorter than
 * `minimumUtteranceSeconds` is re-synthesized with padded, natural phrasing (a lead-in such as
 * "Well," or 「ええと、」), up to two times. Every padding is recorded; what is still short is reported
 * by the summary as a role/label disagreement, never hidden.
 *
 * Results are cached per utterance by a content hash of (engine id and version, voice, text,
 * language, sample rate, detector settings), so a rebuild synthesizes nothing.
 *
 * The stage ({@link synthesizeSpeechStage}) speaks a dialogue's script: a share of the questions in two
 * parts around a user TURN_HOLD pause, and the backchannel phrases as clips for the timeline.
 */
import PQueue from 'p-queue';
import { type ResampleQuality } from '../pipeline/audio/resample.ts';
import { decodeWav, encodeWavFilesPcm16, encodeWavPcm16 } from '../pipeline/audio/wav.ts';
import { recordStoredSamplesDigest } from '../pipeline/audio/samples-digest.ts';
import type { SpeechDetectorOptions } from '../pipeline/audio/speech-regions.ts';
import type { BuildConfig } from '../pipeline/config.ts';
import type {
  Centiseconds,
  DialogueText,
  Language,
  ScriptUtterance,
  SpeakerRole,
  SpeechSegment,
} from '../pipeline/model/types.ts';
import { dialogueRandomStream } from '../pipeline/model/random.ts';
import { planTurnHolds, type QuestionParts } from '../pipeline/text/turn-hold-split.ts';
import type { Stage, StageCacheKey } from '../pipeline/run/stage.ts';
import { paddedTexts } from '../pipeline/text/padded-phrasing.ts';
import type { ContentCache } from '../pipeline/storage/content-cache.ts';
import type { SpeechSynthesizer, VoiceSettings } from '../pipeline/services/tts/speech-synthesizer.ts';
import {
  fullBandSample,
  synthesizeUtterance,
  type FullBandClip,
  type SynthesizedUtterance,
  type SynthesizeUtteranceOptions,
} from '../pipeline/services/tts/synthesize-utterance.ts';
import { estimateMorae } from '../pipeline/alignment/japanese-morae.ts';
import { loadJapaneseTokenizer } from '../pipeline/alignment/spoken-words.ts';
import { languagePackOf } from '../pipeline/model/language-pack.ts';

/** Cache stage name; bump `SYNTHESIZE_STAGE_VERSION` when the stage's output changes meaning. */
export const SYNTHESIZE_STAGE = 'synthesize-speech';
export const SYNTHESIZE_STAGE_VERSION = 1;

/** One synthesized utterance of a dialogue, ready for placement. Times relative to its own speech start. */
export interface SpokenUtterance {
  index: number;
  role: SpeakerRole;
  kind: ScriptUtterance['kind'];
  turnNumber: number;
  /** Text as written in the dialogue script. */
  scriptText: string;
  /** Text actually spoken (differs from `scriptText` when padding was applied). */
  spokenText: string;
  /** Padding steps applied (0 = none). */
  paddingSteps: number;
  /** True when the first synthesis spoke implausibly slowly and the text was re-synthesized with phrase breaks. */
  rephrasedForSpeechRate: boolean;
  /** Part 1 or 2 of a question split around a TURN_HOLD pause (ScriptUtterance `part`); absent otherwise. */
  part?: 1 | 2;
  /** Mono samples at the output sample rate, on the int16 grid, trimmed to speech. */
  audio: Float32Array;
  sampleRate: number;
  durationCs: Centiseconds;
  /** Speech segments, centiseconds from the utterance's speech start; first starts at 0, last ends at durationCs. */
  segments: SpeechSegment[];
  /** Words tiling the segments, centiseconds from the utterance's speech start. */
  words: { start: Centiseconds; end: Centiseconds; word: string }[];
  wordTimingSource: SynthesizedUtterance['wordTimingSource'];
  /** The clip at the engine's own rate (the full-band master's material), when kept: same edits as `audio`. */
  fullBand?: FullBandClip;
}

/** Settings of the stage, resolved from the build config. */
export interface SynthesizeSettings {
  language: Language;
  voices: Record<SpeakerRole, VoiceSettings>;
  sampleRate: number;
  detector: Partial<SpeechDetectorOptions>;
  minimumUtteranceSeconds: number;
  /** Silences inside an utterance longer than this (seconds) are shortened to it; null = keep as synthesized. */
  maximumInternalPauseSeconds: number | null;
  /** Resampler from the engine's rate to `sampleRate` (audio/resample.ts `resample`); default {@link DEFAULT_SYNTHESIS_RESAMPLE_QUALITY}. */
  resampleQuality?: ResampleQuality;
  /** Where the resampling runs (synthesize-utterance.ts `resampler`, e.g. a worker pool); default this thread. Not part of cache keys: same samples. */
  resampler?: SynthesizeUtteranceOptions['resampler'];
  /** Keep each clip at the engine's own rate too, when it is above `sampleRate` (`audio.fullBandMaster`). Default false. */
  fullBand?: boolean;
}

/**
 * The stage's settings for one language from the build config (all but the voices and the resampler
 * thread): what the build synthesizes with, and what `--dry-run` (pipeline/orchestration/plan-build.ts) keys
 * its cache look-ups with, so the two cannot drift apart.
 * @param detector the speech detector settings (seconds, dBFS) as resolved for the build
 */
export function synthesizeSettingsOf(
  config: Pick<BuildConfig, 'audio' | 'synthesis'>,
  language: Language,
  detector: Partial<SpeechDetectorOptions>,
): Omit<SynthesizeSettings, 'voices' | 'resampler'> {
  return {
    language,
    sampleRate: config.audio.sampleRate,
    detector,
    minimumUtteranceSeconds: config.synthesis.minimumUtteranceSeconds,
    maximumInternalPauseSeconds: config.synthesis.maximumInternalPauseSeconds,
    resampleQuality: config.synthesis.resampleQuality,
    fullBand: config.audio.fullBandMaster,
  };
}

interface CachedMetadata {
  sampleRate: number;
  durationCs: number;
  segments: SpeechSegment[];
  words: { start: number; end: number; word: string }[];
  wordTimingSource: SynthesizedUtterance['wordTimingSource'];
  /** With a full-band clip: the entry's bytes are the output-rate WAV, then the full-band WAV from this byte offset. */
  fullBand?: { byteOffset: number; sampleRate: number };
}

/**
 * The resampler of the stage when the settings name none: SpeexDSP (audio/resample.ts 'speex'), about
 * 100 times cheaper than libsamplerate's 'best' with its written samples within two 16-bit steps of
 * it; 'best' is set explicitly (`synthesis.resampleQuality: best`).
 */
export const DEFAULT_SYNTHESIS_RESAMPLE_QUALITY: ResampleQuality = 'speex';

function resampleQualityOf(settings: Pick<SynthesizeSettings, 'resampleQuality'>): ResampleQuality {
  return settings.resampleQuality ?? DEFAULT_SYNTHESIS_RESAMPLE_QUALITY;
}

/**
 * The cache entry of one synthesis: engine id and version, voice, text, language, sample rate,
 * detector settings, and the resampler unless it is libsamplerate's `best`, under `synthesize-speech`.
 */
export function synthesisCacheKey(
  synthesizer: SpeechSynthesizer,
  text: string,
  role: SpeakerRole,
  settings: SynthesizeSettings,
): StageCacheKey {
  const keyMaterial = {
    version: SYNTHESIZE_STAGE_VERSION,
    engine: synthesizer.id,
    engineVersion: synthesizer.version,
    voice: settings.voices[role],
    text,
    language: settings.language,
    sampleRate: settings.sampleRate,
    detector: settings.detector,
    // every resampler but libsamplerate's 'best' is part of the key: entries made with 'best' (the
    // default before SpeexDSP became it) keep their keys, and the default 'speex' writes other samples
    ...(resampleQualityOf(settings) !== 'best' ? { resampleQuality: resampleQualityOf(settings) } : {}),
    // entries with the engine-rate clip are keyed apart (entries without it keep their keys)
    ...(settings.fullBand ? { fullBand: true } : {}),
  };
  return { stage: SYNTHESIZE_STAGE, keyMaterial };
}

/**
 * Synthesize one text with the cache in front.
 * @throws SpeechSynthesisError from the engine
 */
async function synthesizeCached(
  cache: ContentCache,
  synthesizer: SpeechSynthesizer,
  text: string,
  role: SpeakerRole,
  settings: SynthesizeSettings,
): Promise<SynthesizedUtterance> {
  const voice = settings.voices[role];
  const key = synthesisCacheKey(synthesizer, text, role, settings);
  return cache.binary<SynthesizedUtterance, CachedMetadata>(
    key.stage,
    key.keyMaterial,
    () =>
      synthesizeUtterance(
        synthesizer,
        { text, language: settings.language, voice },
        {
          sampleRate: settings.sampleRate,
          detector: settings.detector,
          resampleQuality: resampleQualityOf(settings),
          ...(settings.resampler ? { resampler: settings.resampler } : {}),
          ...(settings.fullBand ? { fullBand: true } : {}),
        },
      ),
    {
      encode: (value) => {
        const metadata: CachedMetadata = {
          sampleRate: value.sampleRate,
          durationCs: value.durationCs,
          segments: value.segments,
          words: value.words,
          wordTimingSource: value.wordTimingSource,
        };
        const audio = { channels: [value.audio], sampleRate: value.sampleRate };
        if (!value.fullBand) return { bytes: encodeWavPcm16(audio), metadata };
        // both WAVs encoded into one buffer (no second copy to join them)
        const { bytes, files } = encodeWavFilesPcm16([
          audio,
          { channels: [value.fullBand.audio], sampleRate: value.fullBand.sampleRate },
        ]);
        return {
          bytes,
          metadata: {
            ...metadata,
            fullBand: { byteOffset: files[0]!.byteLength, sampleRate: value.fullBand.sampleRate },
          },
        };
      },
      decode: (bytes, metadata) => {
        const { fullBand, ...rest } = metadata;
        if (!fullBand) return { ...rest, audio: decodeWav(bytes, 'synthesis cache entry').channels[0]! };
        const fullBandAudio = decodeWav(bytes.subarray(fullBand.byteOffset), 'synthesis cache entry (full band)');
        return {
          ...rest,
          audio: decodeWav(bytes.subarray(0, fullBand.byteOffset), 'synthesis cache entry').channels[0]!,
          fullBand: { audio: fullBandAudio.channels[0]!, sampleRate: fullBandAudio.sampleRate },
        };
      },
      // the entry's sha256 names its clips in the placement's cache key, which then need not hash them again
      stored: (value, dataSha256) => {
        recordStoredSamplesDigest(value.audio, dataSha256, 'audio');
        if (value.fullBand) recordStoredSamplesDigest(value.fullBand.audio, dataSha256, 'full-band');
      },
    },
    '.wav',
  );
}

/**
 * Synthesize every utterance of one dialogue (in parallel through `queue`), with the BC guard.
 * @param utterances the dialogue script in speaking order
 * @param onUtterance called as each utterance is spoken (found in the cache or synthesized), for progress
 * @returns one SpokenUtterance per script utterance, same order
 * @throws SpeechSynthesisError when the engine fails on an utterance (the caller quarantines the dialogue)
 */
export async function synthesizeDialogue(
  utterances: readonly ScriptUtterance[],
  synthesizer: SpeechSynthesizer,
  settings: SynthesizeSettings,
  cache: ContentCache,
  queue: PQueue,
  onUtterance: () => void = () => {},
): Promise<SpokenUtterance[]> {
  const minimumCs = Math.round(settings.minimumUtteranceSeconds * 100);
  return Promise.all(
    utterances.map((utterance) =>
      queue.add(async () => {
        const synthesize = async (text: string) => {
          const raw = await synthesizeCached(cache, synthesizer, text, utterance.role, settings);
          const maximumPause = settings.maximumInternalPauseSeconds;
          return maximumPause === null ? raw : capInternalPauses(raw, Math.round(maximumPause * 100));
        };
        let spokenText = utterance.text;
        let result = await synthesize(spokenText);
        let rephrasedForSpeechRate = false;
        // the language pack's repair of implausibly slow offline speech (ja: phrase breaks for Open JTalk)
        const slowSpeechRepair = languagePackOf(settings.language).speechRate.slowSpeechRepair;
        if (
          slowSpeechRepair !== null &&
          speechRateIsImplausiblySlow(spokenText, result.durationCs, slowSpeechRepair.below)
        ) {
          const rephrased = await japanesePhraseBreaks(spokenText);
          if (rephrased !== spokenText) {
            spokenText = rephrased;
            result = await synthesize(spokenText);
            rephrasedForSpeechRate = true;
          }
        }
        let paddingSteps = 0;
        // A part of a split question is not padded: when it is too short the caller speaks the question whole.
        for (const padded of utterance.part === undefined
          ? paddedTexts(settings.language, utterance.kind, utterance.text)
          : []) {
          if (result.durationCs > minimumCs) break;
          spokenText = padded;
          paddingSteps += 1;
          result = await synthesize(spokenText);
        }
        const spoken: SpokenUtterance = {
          index: utterance.index,
          role: utterance.role,
          kind: utterance.kind,
          turnNumber: utterance.turnNumber,
          scriptText: utterance.text,
          spokenText,
          paddingSteps,
          rephrasedForSpeechRate,
          ...(utterance.part !== undefined ? { part: utterance.part } : {}),
          audio: result.audio,
          sampleRate: result.sampleRate,
          durationCs: result.durationCs,
          segments: result.segments,
          words: result.words,
          wordTimingSource: result.wordTimingSource,
          ...(result.fullBand ? { fullBand: result.fullBand } : {}),
        };
        onUtterance();
        return spoken;
      }),
    ),
  );
}

/**
 * Slowest plausible Japanese speech rate, morae per second (the Japanese pack's
 * `speechRate.slowSpeechRepair.below`). Conversational Japanese runs at about 7–8
 * morae/s and careful read speech above 5 (Kitahara, "Speech rate in Japanese", reviewed in
 * Arai & Greenberg 1997; our Open JTalk voices speak 7–9); Open JTalk sometimes stretches a very long
 * accent phrase (a run of kanji numerals with no break) to about 2.5 morae/s.
 */
export const MINIMUM_JAPANESE_MORAE_PER_SECOND = 4;

/**
 * Whether a Japanese utterance was spoken implausibly slowly (below
 * `minimum`, default {@link MINIMUM_JAPANESE_MORAE_PER_SECOND}), by the mora estimate of its text.
 * @param durationCs speech duration, centiseconds
 * @param minimum slowest plausible rate, morae per second
 */
export function speechRateIsImplausiblySlow(
  text: string,
  durationCs: Centiseconds,
  minimum = MINIMUM_JAPANESE_MORAE_PER_SECOND,
): boolean {
  if (durationCs <= 0) return false;
  return estimateMorae(text) / (durationCs / 100) < minimum;
}

/**
 * The text with a 、 after each particle (kuromoji 助詞) that ends a phrase (not followed by another
 * particle, an auxiliary verb or punctuation), so the TTS engine gets accent-phrase breaks: Open JTalk
 * speaks 「エッフェル塔は千八百八十七年から千八百八十九年にかけて建てられました。」 in 22.7 s, and with
 * breaks after は, から, にかけて in 8.3 s. Words and their order are unchanged (、 is not a word).
 */
export async function japanesePhraseBreaks(text: string): Promise<string> {
  const tokens = (await loadJapaneseTokenizer()).tokenize(text);
  let result = '';
  tokens.forEach((token, index) => {
    result += token.surface_form;
    const next = tokens[index + 1];
    if (token.pos !== '助詞' || !next) return;
    if (next.pos === '助詞' || next.pos === '助動詞' || next.pos === '記号' || next.pos_detail_1 === '接尾') return;
    result += '、';
  });
  return result;
}

/**
 * Shorten every silence between two speech segments of an utterance to at most `maximumPauseCs`,
 * cutting samples out of the middle of the silence and shifting later segments and words. TTS engines
 * pause at commas and sentence ends by a fixed amount (Open JTalk 0.3–0.5 s at 、。, more at slower
 * rates); a pause beyond the 0.5 s IPU rule (events.md rule 1) would split an answer into several
 * units, and a short leading phrase such as 「はい、」 would become a BC. Pure: returns a new value.
 * @param maximumPauseCs integer centiseconds, >= 1
 * @throws RangeError when the sample rate is not a multiple of 100 Hz
 */
export function capInternalPauses(utterance: SynthesizedUtterance, maximumPauseCs: Centiseconds): SynthesizedUtterance {
  if (utterance.sampleRate % 100 !== 0)
    throw new RangeError(`sample rate ${utterance.sampleRate} Hz is not a multiple of 100 Hz`);
  const samplesPerCs = utterance.sampleRate / 100;
  const cuts: { at: Centiseconds; length: Centiseconds }[] = [];
  for (let index = 1; index < utterance.segments.length; index += 1) {
    const gap = utterance.segments[index]!.start - utterance.segments[index - 1]!.end;
    if (gap > maximumPauseCs)
      cuts.push({
        at: utterance.segments[index - 1]!.end + Math.floor(maximumPauseCs / 2),
        length: gap - maximumPauseCs,
      });
  }
  if (cuts.length === 0) return utterance;
  const shift = (time: Centiseconds) =>
    time - cuts.filter((cut) => cut.at < time).reduce((sum, cut) => sum + cut.length, 0);
  const removed = cuts.reduce((sum, cut) => sum + cut.length, 0);
  const audio = new Float32Array(utterance.audio.length - removed * samplesPerCs);
  let readFrom = 0;
  let writeAt = 0;
  for (const cut of cuts) {
    const cutStart = cut.at * samplesPerCs;
    audio.set(utterance.audio.subarray(readFrom, cutStart), writeAt);
    writeAt += cutStart - readFrom;
    readFrom = cutStart + cut.length * samplesPerCs;
  }
  audio.set(utterance.audio.subarray(readFrom), writeAt);
  return {
    ...utterance,
    audio,
    ...(utterance.fullBand ? { fullBand: { ...utterance.fullBand, audio: cutSpans(utterance.fullBand, cuts) } } : {}),
    durationCs: utterance.durationCs - removed,
    segments: utterance.segments.map((segment) => ({ start: shift(segment.start), end: shift(segment.end) })),
    words: utterance.words.map((word) => ({ ...word, start: shift(word.start), end: shift(word.end) })),
  };
}

/** The full-band clip with the spans `cuts` (centiseconds from its start) taken out, at its own rate (fullBandSample). */
function cutSpans(clip: FullBandClip, cuts: readonly { at: Centiseconds; length: Centiseconds }[]): Float32Array {
  const kept: Float32Array[] = [];
  let readFrom = 0;
  for (const cut of cuts) {
    kept.push(clip.audio.subarray(readFrom, fullBandSample(cut.at, clip.sampleRate)));
    readFrom = fullBandSample(cut.at + cut.length, clip.sampleRate);
  }
  kept.push(clip.audio.subarray(Math.min(readFrom, clip.audio.length)));
  const audio = new Float32Array(kept.reduce((sum, part) => sum + part.length, 0));
  let writeAt = 0;
  for (const part of kept) {
    audio.set(part, writeAt);
    writeAt += part.length;
  }
  return audio;
}

/** A p-queue bounding the number of TTS engine processes running at once. */
export function createSynthesisQueue(concurrency: number): PQueue {
  return new PQueue({ concurrency });
}

/** Longest backchannel clip used, centiseconds: an IPU of at most 0.80 s is a BC (events.md rule 2). */
export const MAXIMUM_BACKCHANNEL_CS = 80;

/**
 * The utterances to speak, in order: each turn's question (user), then its answer (system) when it
 * has one. A turn without an answer (the source's final question without answer) ends the dialogue
 * with its question. A turn in `holds` has its question spoken in two parts (`part` 1 and 2), so the
 * timeline puts a TURN_HOLD pause between them.
 */
export function dialogueScript(
  text: DialogueText,
  holds: ReadonlyMap<number, QuestionParts> = new Map(),
): ScriptUtterance[] {
  const utterances: ScriptUtterance[] = [];
  for (const turn of text.final) {
    const parts = holds.get(turn.turnNumber);
    if (parts) {
      utterances.push({
        index: utterances.length,
        turnNumber: turn.turnNumber,
        kind: 'question',
        role: 'user',
        text: parts.first,
        part: 1,
      });
      utterances.push({
        index: utterances.length,
        turnNumber: turn.turnNumber,
        kind: 'question',
        role: 'user',
        text: parts.second,
        part: 2,
      });
    } else
      utterances.push({
        index: utterances.length,
        turnNumber: turn.turnNumber,
        kind: 'question',
        role: 'user',
        text: turn.question,
      });
    if (turn.answer !== null)
      utterances.push({
        index: utterances.length,
        turnNumber: turn.turnNumber,
        kind: 'answer',
        role: 'system',
        text: turn.answer,
      });
  }
  return utterances;
}

/** Input of {@link synthesizeSpeechStage}: one dialogue's final text and the voices its speakers were drawn. */
export interface SynthesizeSpeechInput {
  dialogueId: string;
  text: DialogueText;
  voices: Record<SpeakerRole, VoiceSettings>;
  /**
   * Per turn number, the phrases a TURN_HOLD split must not fall inside (pipeline/text/turn-hold-split.ts
   * `protectedPhrasesOf`: topics, answers); none when absent.
   */
  protectedPhrases?: ReadonlyMap<number, readonly string[]>;
}

/** Parameters of {@link synthesizeSpeechStage}: the dataset's engine, settings and queue. */
export interface SynthesizeSpeechParameters {
  synthesizer: SpeechSynthesizer;
  settings: Omit<SynthesizeSettings, 'voices'>;
  /** Bounds the engine processes or requests in flight, shared by every dialogue ({@link createSynthesisQueue}). */
  queue: PQueue;
  /** The build seed (the choice of split questions is drawn from the dialogue's `turn-holds` stream). */
  seed: number;
  /** Share of the questions spoken in two parts, in [0, 1] (`timeline.turnHoldShare`). */
  turnHoldShare: number;
  /** Backchannel phrases of the listener (user), synthesized as clips; empty when backchannels are off. */
  backchannelPhrases: readonly string[];
  /**
   * Progress in utterances: `planned` once a dialogue's script is known (its utterances and the
   * backchannel clips), `spoken` per utterance done (a re-synthesis of a too-short part counts again;
   * the progress display caps a dialogue at its plan).
   */
  progress?: { planned(dialogueId: string, utterances: number): void; spoken(dialogueId: string): void };
}

/** What a dialogue's speech stage returns. */
export interface DialogueSpeech {
  /** One per script utterance, in speaking order. */
  spoken: SpokenUtterance[];
  /** The backchannel clips of at most {@link MAXIMUM_BACKCHANNEL_CS}, in phrase order. */
  backchannelClips: SpokenUtterance[];
  /** Questions chosen for a split but spoken whole because a part came out too short to be a TURN. */
  splitQuestionsSpokenWhole: number;
}

/** The script with its planned TURN_HOLD splits. @throws RangeError for a share outside [0, 1] */
async function plannedScript(
  input: SynthesizeSpeechInput,
  parameters: SynthesizeSpeechParameters,
): Promise<{ holds: Map<number, QuestionParts>; script: ScriptUtterance[] }> {
  const holds = await planTurnHolds(
    input.text.final.map((turn) => ({
      turnNumber: turn.turnNumber,
      question: turn.question,
      protectedPhrases: input.protectedPhrases?.get(turn.turnNumber) ?? [],
      pausePoint: turn.pausePoint,
    })),
    parameters.settings.language,
    parameters.turnHoldShare,
    dialogueRandomStream(parameters.seed, input.dialogueId, 'turn-holds'),
  );
  return { holds, script: dialogueScript(input.text, holds) };
}

function backchannelScript(phrases: readonly string[]): ScriptUtterance[] {
  return phrases.map((text, position) => ({ index: position, turnNumber: 0, kind: 'backchannel', role: 'user', text }));
}

/**
 * Stage `synthesize-speech`: a dialogue's script spoken by the engine ({@link synthesizeDialogue}),
 * with `turnHoldShare` of the questions split in two parts; a split question whose part comes out no
 * longer than `minimumUtteranceSeconds` is spoken whole instead (the parts stay in the cache); then
 * the backchannel phrases, kept when at most {@link MAXIMUM_BACKCHANNEL_CS}. Its cache keys are those
 * of each utterance's first synthesis (padded or rephrased re-syntheses and whole questions after a
 * too-short part have keys of their own text).
 * @throws SpeechSynthesisError from the engine; RangeError for a share outside [0, 1]
 */
export const synthesizeSpeechStage: Stage<SynthesizeSpeechInput, SynthesizeSpeechParameters, DialogueSpeech> = {
  name: SYNTHESIZE_STAGE,
  inputs: ['dialogueId', 'text', 'voices', 'protectedPhrases'],
  parameters: ['synthesizer', 'settings', 'queue', 'seed', 'turnHoldShare', 'backchannelPhrases', 'progress'],
  cacheStages: [SYNTHESIZE_STAGE],
  cacheKeys: async (input, parameters) => {
    const settings = { ...parameters.settings, voices: input.voices };
    const { script } = await plannedScript(input, parameters);
    return [...script, ...backchannelScript(parameters.backchannelPhrases)].map((utterance) =>
      synthesisCacheKey(parameters.synthesizer, utterance.text, utterance.role, settings),
    );
  },
  run: async (input, parameters, context) => {
    const settings = { ...parameters.settings, voices: input.voices };
    const spokenOne = () => parameters.progress?.spoken(input.dialogueId);
    const synthesize = (script: ScriptUtterance[]) =>
      synthesizeDialogue(script, parameters.synthesizer, settings, context.cache, parameters.queue, spokenOne);
    const minimumUtteranceCs = Math.round(settings.minimumUtteranceSeconds * 100);
    const { holds, script } = await plannedScript(input, parameters);
    parameters.progress?.planned(input.dialogueId, script.length + parameters.backchannelPhrases.length);
    let spoken = await synthesize(script);
    const tooShort = new Set(
      spoken
        .filter((utterance) => utterance.part !== undefined && utterance.durationCs <= minimumUtteranceCs)
        .map((utterance) => utterance.turnNumber),
    );
    if (tooShort.size > 0) {
      for (const turnNumber of tooShort) holds.delete(turnNumber);
      spoken = await synthesize(dialogueScript(input.text, holds));
    }
    const backchannelClips = (await synthesize(backchannelScript(parameters.backchannelPhrases))).filter(
      (clip) => clip.durationCs <= MAXIMUM_BACKCHANNEL_CS,
    );
    return { spoken, backchannelClips, splitQuestionsSpokenWhole: tooShort.size };
  },
};
