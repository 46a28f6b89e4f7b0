/**
 * Stage `synthesize-speech`: every utterance of a dialogue spoken by the configured TTS engine with
 * the voice of its role, trimmed to speech, with speech segments and word timings.
 *
 * Role-aware guard (docs/events.md, "Synthetic dialogues: roles versus labels"): an IPU of at most
 * 0.8 s is labelled BC by Step 2, so a question or an answer whose speech is shorter than
 * `minimumUtteranceSeconds` is re-synthesized with padded, natural phrasing (a lead-in such as
 * "Well," or 「ええと、」), up to two times. Every padding is recorded; what is still short is reported
 * by the summary as a role/label disagreement, never hidden.
 *
 * Results are cached per utterance by a content hash of (engine id and version, voice, text,
 * language, sample rate, detector settings), so a rebuild synthesizes nothing.
 *
 * The stage ({@link synthesizeSpeechStage}) speaks a dialogue's script: a share of the questions in two
 * parts around a user TURN_HOLD pause, and the backchannel phrases as clips for the timeline. The
 * work is in stages/synthesize-speech-*.ts: the synthesis cache (`-cache`), one dialogue's synthesis
 * (`-dialogue`), the script (`-script`), capped pauses (`-pauses`) and slow-speech repair (`-rate`);
 * this module holds the stage and exports the names of all of them.
 */
import type PQueue from 'p-queue';
import type { DialogueText, ScriptUtterance, SpeakerRole } from '../pipeline/model/types.ts';
import type { Stage } from '../pipeline/run/stage.ts';
import type { SpeechSynthesizer, VoiceSettings } from '../pipeline/services/tts/speech-synthesizer.ts';
import {
  recognitionCountsOf,
  type RecognitionCounts,
  type RecognizedClip,
} from '../pipeline/services/tts/recognition-tally.ts';
import { SYNTHESIZE_STAGE, synthesisCacheKey, type SynthesizeSettings } from './synthesize-speech-cache.ts';
import { synthesizeDialogue, type SpokenUtterance } from './synthesize-speech-dialogue.ts';
import { backchannelScript, dialogueScript, plannedScript, type ScriptRequest } from './synthesize-speech-script.ts';

export {
  DEFAULT_SYNTHESIS_RESAMPLE_QUALITY,
  SYNTHESIZE_STAGE,
  SYNTHESIZE_STAGE_VERSION,
  synthesisCacheKey,
  synthesizeSettingsOf,
  type SynthesizeSettings,
} from './synthesize-speech-cache.ts';
export { createSynthesisQueue, synthesizeDialogue, type SpokenUtterance } from './synthesize-speech-dialogue.ts';
export {
  japanesePhraseBreaks,
  MINIMUM_JAPANESE_MORAE_PER_SECOND,
  speechRateIsImplausiblySlow,
} from './synthesize-speech-rate.ts';
export { capInternalPauses } from './synthesize-speech-pauses.ts';
export { dialogueScript } from './synthesize-speech-script.ts';

/** Longest backchannel clip used, centiseconds: an IPU of at most 0.80 s is a BC (docs/events.md, Step 2). */
export const MAXIMUM_BACKCHANNEL_CS = 80;

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
  /**
   * The speech recognition check's counts of the clips `spoken` is spoken with, from their synthesis
   * cache entries (pipeline/services/tts/recognition-tally.ts `recognitionCountsOf`; backchannel clips
   * are not counted); absent when no clip carries counts (the check is off, or the engine is local).
   */
  speechRecognition?: RecognitionCounts;
}

/** What a dialogue's script is planned from: its text and the build's TURN_HOLD settings. */
function scriptRequestOf(input: SynthesizeSpeechInput, parameters: SynthesizeSpeechParameters): ScriptRequest {
  return {
    dialogueId: input.dialogueId,
    text: input.text,
    protectedPhrases: input.protectedPhrases,
    language: parameters.settings.language,
    seed: parameters.seed,
    turnHoldShare: parameters.turnHoldShare,
  };
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
    const { script } = await plannedScript(scriptRequestOf(input, parameters));
    return [...script, ...backchannelScript(parameters.backchannelPhrases)].map((utterance) =>
      synthesisCacheKey(parameters.synthesizer, utterance.text, utterance.role, settings),
    );
  },
  run: async (input, parameters, context) => {
    const settings = { ...parameters.settings, voices: input.voices };
    const spokenOne = () => parameters.progress?.spoken(input.dialogueId);
    const synthesize = (script: ScriptUtterance[], clips: { recognized?: RecognizedClip }[] = []) =>
      synthesizeDialogue(script, parameters.synthesizer, settings, context.cache, parameters.queue, (_, recognized) => {
        spokenOne();
        clips.push(recognized ? { recognized } : {});
      });
    const minimumUtteranceCs = Math.round(settings.minimumUtteranceSeconds * 100);
    const { holds, script } = await plannedScript(scriptRequestOf(input, parameters));
    parameters.progress?.planned(input.dialogueId, script.length + parameters.backchannelPhrases.length);
    // the recognition counts of the clips the kept utterances are spoken with (a script spoken again replaces them)
    let recognized: { recognized?: RecognizedClip }[] = [];
    let spoken = await synthesize(script, recognized);
    const tooShort = new Set(
      spoken
        .filter((utterance) => utterance.part !== undefined && utterance.durationCs <= minimumUtteranceCs)
        .map((utterance) => utterance.turnNumber),
    );
    if (tooShort.size > 0) {
      for (const turnNumber of tooShort) holds.delete(turnNumber);
      recognized = [];
      spoken = await synthesize(dialogueScript(input.text, holds), recognized);
    }
    const backchannelClips = (await synthesize(backchannelScript(parameters.backchannelPhrases))).filter(
      (clip) => clip.durationCs <= MAXIMUM_BACKCHANNEL_CS,
    );
    const speechRecognition = recognitionCountsOf(recognized);
    return {
      spoken,
      backchannelClips,
      splitQuestionsSpokenWhole: tooShort.size,
      ...(speechRecognition.utterances > 0 ? { speechRecognition } : {}),
    };
  },
};
