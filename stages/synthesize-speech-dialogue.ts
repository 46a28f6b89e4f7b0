/**
 * Synthesis of one dialogue's utterances: each spoken by the engine through the synthesis cache, with
 * its internal pauses capped, re-synthesized with phrase breaks when it came out implausibly slow, and
 * re-synthesized with padded phrasing while it is too short to be a TURN.
 */
import { AsyncResource } from 'node:async_hooks';
import PQueue from 'p-queue';
import type { Centiseconds, ScriptUtterance, SpeakerRole, SpeechSegment } from '../pipeline/model/types.ts';
import { paddedTexts } from '../pipeline/text/padded-phrasing.ts';
import type { ContentCache } from '../pipeline/storage/content-cache.ts';
import type { SpeechSynthesizer } from '../pipeline/services/tts/speech-synthesizer.ts';
import type { FullBandClip, SynthesizedUtterance } from '../pipeline/services/tts/synthesize-utterance.ts';
import { languagePackOf } from '../pipeline/model/language-pack.ts';
import type { RecognizedClip } from '../pipeline/services/tts/recognition-tally.ts';
import { synthesizeCached, type SynthesizeSettings } from './synthesize-speech-cache.ts';
import { capInternalPauses } from './synthesize-speech-pauses.ts';
import { japanesePhraseBreaks, speechRateIsImplausiblySlow } from './synthesize-speech-rate.ts';

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

/**
 * Synthesize every utterance of one dialogue (in parallel through `queue`), with the BC guard.
 * @param utterances the dialogue script in speaking order
 * @param onUtterance called as each utterance is spoken (found in the cache or synthesized), for
 *   progress, with what the speech recognition check found in the clip it is spoken with (its cache
 *   entry's counts; undefined when the engine ran no check or the entry holds none)
 * @returns one SpokenUtterance per script utterance, same order
 * @throws SpeechSynthesisError when the engine fails on an utterance (the caller quarantines the dialogue)
 */
export async function synthesizeDialogue(
  utterances: readonly ScriptUtterance[],
  synthesizer: SpeechSynthesizer,
  settings: SynthesizeSettings,
  cache: ContentCache,
  queue: PQueue,
  onUtterance: (spoken: SpokenUtterance, recognized: RecognizedClip | undefined) => void = () => {},
): Promise<SpokenUtterance[]> {
  const minimumCs = Math.round(settings.minimumUtteranceSeconds * 100);
  return Promise.all(
    utterances.map((utterance) =>
      // bound to the caller's async context: a task the queue starts later runs in its own dialogue's, not the freeing task's
      queue.add(
        AsyncResource.bind(async () => {
          const synthesize = async (text: string) => {
            const raw = await synthesizeCached({ cache, synthesizer, settings }, text, utterance.role);
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
          onUtterance(spoken, result.recognized);
          return spoken;
        }),
      ),
    ),
  );
}

/** A p-queue bounding the number of TTS engine processes running at once. */
export function createSynthesisQueue(concurrency: number): PQueue {
  return new PQueue({ concurrency });
}
