/**
 * Event re-derivation of a Chat-track dataset (`duplexsynth chat`) by the rules it was built with,
 * read from its manifest's `eventDerivation` (pipeline/model/dataset-manifest.ts): the same source
 * (words, utterance lines, speaker turns or the voice activity detector), the same event thresholds,
 * the same detector settings. Real recordings are not synthetic speech: the energy detector the MT-QA
 * check uses (pipeline/audio/speech-regions.ts) says nothing about them, so it is not run here.
 *
 * What is checked per dialogue, by source:
 * - `words`, `supervisions`: the events re-derived from `txt_align` (segments from the lines that
 *   touch or overlap merged, the rules of docs/events.md with the recorded thresholds) equal the events line;
 * - `turns`: the same from the speech segments written in the dialogue's metadata (`speech`);
 * - `voice-activity`: the recorded detector, run again on both channels of the written WAV
 *   (`detectTrackSpeech`), gives the events line; `txt_align` is empty, as the manifest says.
 * Always: the WAV decodes and has exactly two channels.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { decodeWav } from '../audio/wav.ts';
import { computeEvents, formatEventsLine, parseAlignment, segmentsFromWords } from '../events/index.ts';
import type { EventDerivation } from '../model/dataset-manifest.ts';
import type { ChannelSegments, SpeechSegment } from '../model/types.ts';
import {
  createVoiceActivityDetector,
  detectTrackSpeech,
  type VoiceActivityDetector,
} from '../services/vad/voice-activity-detector.ts';

/** Checks the dialogues of one chat dataset against its recorded event derivation (module comment). */
export class ChatEventVerifier {
  private constructor(
    readonly derivation: EventDerivation,
    private readonly detector: VoiceActivityDetector | undefined,
  ) {}

  /**
   * @param derivation the manifest's `eventDerivation`.
   * @throws Error when the source is `voice-activity` and the manifest names no detector; the
   *   detector's errors (VoiceActivityOptionsError for settings this version does not know).
   */
  static async open(derivation: EventDerivation): Promise<ChatEventVerifier> {
    if (derivation.from !== 'voice-activity') return new ChatEventVerifier(derivation, undefined);
    if (derivation.voiceActivity === undefined)
      throw new Error(
        'manifest.json: eventDerivation.from is voice-activity but no voiceActivity detector is recorded',
      );
    const { engine, options } = derivation.voiceActivity;
    return new ChatEventVerifier(derivation, await createVoiceActivityDetector(engine, options as never));
  }

  /** Frees the detector's resources. */
  async release(): Promise<void> {
    await this.detector?.release?.();
  }

  private eventsLineOf(id: string, segments: ChannelSegments): string {
    return formatEventsLine(id, computeEvents(segments, this.derivation.thresholds));
  }

  /**
   * The problems of one dialogue, one line each naming the file and the events line (`source`).
   * @param directory the dataset folder.
   * @param line the dialogue's events line as written in the events file.
   */
  async problems(directory: string, id: string, line: string, source: string): Promise<string[]> {
    const problems: string[] = [];
    const read = async (relative: string): Promise<Buffer | undefined> => {
      const file = path.join(directory, relative);
      try {
        return await readFile(file);
      } catch (error) {
        problems.push(
          `${file}: cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}); dialogue ${id} of ${source}`,
        );
        return undefined;
      }
    };
    const { from, hasWords } = this.derivation;
    const alignmentPath = path.join(directory, 'txt_align', `${id}.txt`);
    const alignment = await read(path.join('txt_align', `${id}.txt`));
    if (alignment !== undefined) {
      try {
        const words = parseAlignment(alignment.toString('utf8'), alignmentPath);
        if (!hasWords && words.length > 0)
          problems.push(
            `${alignmentPath}: holds ${words.length} lines, but the manifest says the dataset has no words`,
          );
        if (hasWords && words.length === 0)
          problems.push(`${alignmentPath}: empty, but the manifest says the dataset has words`);
        if ((from === 'words' || from === 'supervisions') && this.eventsLineOf(id, segmentsFromWords(words)) !== line) {
          problems.push(
            `${alignmentPath}: events re-derived from the ${from === 'words' ? 'words' : 'utterance lines'} (thresholds of the manifest) differ from ${source}`,
          );
        }
      } catch (error) {
        problems.push((error as Error).message);
      }
    }
    if (from === 'turns') {
      const metadataPath = path.join(directory, 'metadata', `${id}.json`);
      const metadata = await read(path.join('metadata', `${id}.json`));
      if (metadata !== undefined) {
        const speech = (
          JSON.parse(metadata.toString('utf8')) as {
            speech?: { channel0: [number, number][]; channel1: [number, number][] };
          }
        ).speech;
        if (speech === undefined)
          problems.push(
            `${metadataPath}: no speech segments (field speech), which a dataset derived from speaker turns keeps there`,
          );
        else {
          const toSegments = (pairs: [number, number][]): SpeechSegment[] =>
            pairs.map(([start, end]) => ({ start: Math.round(start * 100), end: Math.round(end * 100) }));
          if (this.eventsLineOf(id, { 0: toSegments(speech.channel0), 1: toSegments(speech.channel1) }) !== line) {
            problems.push(
              `${metadataPath}: events re-derived from the speech segments of the metadata differ from ${source}`,
            );
          }
        }
      }
    }
    const wavPath = path.join(directory, 'audio', `${id}.wav`);
    const wav = await read(path.join('audio', `${id}.wav`));
    if (wav === undefined) return problems;
    let audio: ReturnType<typeof decodeWav>;
    try {
      audio = decodeWav(wav, wavPath);
    } catch (error) {
      problems.push((error as Error).message);
      return problems;
    }
    if (audio.channels.length !== 2) {
      problems.push(`${wavPath}: ${audio.channels.length} channels, the benchmark needs exactly 2`);
      return problems;
    }
    if (this.detector !== undefined) {
      const segments = await detectTrackSpeech(
        [audio.channels[0] as Float32Array, audio.channels[1] as Float32Array],
        audio.sampleRate,
        this.detector,
      );
      if (this.eventsLineOf(id, segments) !== line)
        problems.push(
          `${wavPath}: events re-derived from the audio with the recorded detector (${this.detector.id}) differ from ${source}`,
        );
    }
    return problems;
  }
}
