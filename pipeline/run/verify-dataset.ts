/**
 * Independent check of a written dataset folder (docs/dataset-format.md), as the benchmark's loader would see it:
 * - every WAV has exactly 2 channels and its id equals the file name;
 * - in every events line, each TURN_SHIFT start equals a TURN end on the other channel, each TURN_HOLD
 *   start a TURN end on its own channel, each BARGE_IN start a TURN start on its own channel (the
 *   loader's float-for-float lookups);
 * - the evaluable-events report: what the benchmark's evaluation samples and drops, with reasons;
 * - re-deriving the events from the written `txt_align` words (merge words that touch or overlap) and,
 *   separately, from the written audio (the same speech detector the build used, settings from
 *   `manifest.json`) gives the same line, byte for byte; a Chat dataset whose manifest records its
 *   `eventDerivation` is re-derived by those rules instead (verify-chat-events.ts).
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describeFileSystemError } from '../storage/file-system-errors.ts';
import { decodeWav } from '../audio/wav.ts';
import { detectSpeechSegments, type SpeechDetectorOptions } from '../audio/speech-regions.ts';
import {
  computeEvents,
  formatEventsLine,
  parseAlignment,
  parseEventsLine,
  segmentsFromWords,
} from '../events/index.ts';
import {
  benchmarkLoaderSettings,
  evaluableEventsReport,
  type EvaluableEventsReport,
} from '../events/evaluable-events.ts';
import type { BenchmarkEvent, ChannelEvents, ChannelSegments } from '../model/types.ts';
import type { EventDerivation } from '../model/dataset-manifest.ts';
import { ChatEventVerifier } from './verify-chat-events.ts';

/** Result of `verifyDataset`. */
export interface DatasetVerification {
  dialogues: number;
  /** One line per problem, naming the file and dialogue id. */
  problems: string[];
  /**
   * What the benchmark's evaluation would sample from the events file (pipeline/events/evaluable-events.ts),
   * with the settings scripts/pipe.sh uses for this dataset's domain and variant, without and with context.
   */
  evaluableEvents: EvaluableEventsReport[];
}

/**
 * The loader lookups the benchmark performs, as problems (empty when all hold).
 * Source: docs/events.md, "How the benchmark's loader uses the events".
 */
export function loaderLookupProblems(id: string, events: ChannelEvents): string[] {
  const problems: string[] = [];
  const turns = (channel: 0 | 1) => events[channel].filter((event) => event.event === 'TURN');
  for (const channel of [0, 1] as const) {
    const other = channel === 0 ? 1 : 0;
    for (const event of events[channel]) {
      const has = (list: BenchmarkEvent[], key: 'start' | 'end') => list.some((turn) => turn[key] === event.start);
      if (event.event === 'TURN_SHIFT' && !has(turns(other), 'end'))
        problems.push(
          `${id}: channel ${channel} TURN_SHIFT at ${event.start / 100} s has no TURN ending there on channel ${other}`,
        );
      if (event.event === 'TURN_HOLD' && !has(turns(channel), 'end'))
        problems.push(
          `${id}: channel ${channel} TURN_HOLD at ${event.start / 100} s has no TURN ending there on its own channel`,
        );
      if (event.event === 'BARGE_IN' && !has(turns(channel), 'start'))
        problems.push(
          `${id}: channel ${channel} BARGE_IN at ${event.start / 100} s has no TURN starting there on its own channel`,
        );
    }
  }
  return problems;
}

/**
 * Verify a dataset folder `data/{lang}/task/{dataset}`.
 * @param jsonlName events file to check (default `all.jsonl`)
 * Every dialogue is checked: a missing, unreadable or malformed events line, word alignment or WAV
 * is reported as a problem of its dialogue (file named), and the next dialogue is checked.
 * @throws Error when the folder has no manifest or no events file (named in the message)
 */
export async function verifyDataset(directory: string, jsonlName = 'all.jsonl'): Promise<DatasetVerification> {
  const manifestPath = path.join(directory, 'manifest.json');
  const manifest = JSON.parse(
    await readFile(manifestPath, 'utf8').catch(() => {
      throw new Error(`${manifestPath}: missing; not a duplexsynth dataset folder`);
    }),
  ) as {
    speechDetection?: Partial<SpeechDetectorOptions>;
    domain?: string;
    dataset?: string;
    channels?: { user?: number };
    variant?: { kind?: string };
    eventDerivation?: EventDerivation;
  };
  const jsonlPath = path.join(directory, jsonlName);
  const lines = (await readFile(jsonlPath, 'utf8')).split('\n').filter((line) => line.length > 0);
  const problems: string[] = [];
  const parsed: { id: string; events: ChannelEvents }[] = [];
  // A chat dataset that records how its events were derived is judged by those rules (verify-chat-events.ts).
  const chatVerifier =
    manifest.domain === 'chat' && manifest.eventDerivation !== undefined
      ? await ChatEventVerifier.open(manifest.eventDerivation)
      : undefined;
  for (const [lineIndex, line] of lines.entries()) {
    const source = `${jsonlPath}:${lineIndex + 1}`;
    let id: string;
    let events: ReturnType<typeof parseEventsLine>['events'];
    try {
      ({ id, events } = parseEventsLine(line, source));
    } catch (error) {
      problems.push((error as Error).message);
      continue;
    }
    problems.push(...loaderLookupProblems(id, events));
    parsed.push({ id, events });
    if (chatVerifier !== undefined) {
      problems.push(...(await chatVerifier.problems(directory, id, line, source)));
      continue;
    }
    // A file that is missing or unreadable is one problem of this dialogue; the others are still checked.
    const readOrReport = async (filePath: string): Promise<Buffer | null> => {
      try {
        return await readFile(filePath);
      } catch (error) {
        problems.push(`${describeFileSystemError(error, filePath, 'cannot be read')}; dialogue ${id} of ${source}`);
        return null;
      }
    };
    const alignmentPath = path.join(directory, 'txt_align', `${id}.txt`);
    const alignment = await readOrReport(alignmentPath);
    if (alignment !== null) {
      try {
        const words = parseAlignment(alignment.toString('utf8'), alignmentPath);
        const fromWords = formatEventsLine(id, computeEvents(segmentsFromWords(words)));
        if (fromWords !== line)
          problems.push(`${alignmentPath}: events re-derived from the words differ from ${source}`);
      } catch (error) {
        problems.push((error as Error).message);
      }
    }
    const wavPath = path.join(directory, 'audio', `${id}.wav`);
    const wav = await readOrReport(wavPath);
    if (wav === null) continue;
    let audio: ReturnType<typeof decodeWav>;
    try {
      audio = decodeWav(wav, wavPath);
    } catch (error) {
      problems.push((error as Error).message);
      continue;
    }
    if (audio.channels.length !== 2) {
      problems.push(`${wavPath}: ${audio.channels.length} channels, the benchmark needs exactly 2`);
      continue;
    }
    const segments: ChannelSegments = {
      0: detectSpeechSegments(audio.channels[0]!, audio.sampleRate, manifest.speechDetection ?? {}),
      1: detectSpeechSegments(audio.channels[1]!, audio.sampleRate, manifest.speechDetection ?? {}),
    };
    const fromAudio = formatEventsLine(id, computeEvents(segments));
    if (fromAudio !== line) problems.push(`${wavPath}: events re-derived from the audio differ from ${source}`);
  }
  await chatVerifier?.release();
  const domain = manifest.domain === 'chat' ? 'chat' : 'task';
  const bargeInVariant =
    manifest.variant?.kind === 'barge-in' || /_bargein$/.test(manifest.dataset ?? path.basename(directory));
  const userChannel = manifest.channels?.user === 0 ? 0 : 1;
  const evaluableEvents = benchmarkLoaderSettings(domain, {
    bargeInVariant,
    ...(domain === 'task' ? { channels: [userChannel] } : {}),
  }).map(({ name, settings }) => evaluableEventsReport(name, settings, parsed));
  return { dialogues: lines.length, problems, evaluableEvents };
}
