/**
 * A dialogue's dataset record: everything a dataset needs of one built dialogue, so that whoever
 * built it (a local build, or a worker of a queued build) hands it to the dataset writer whole, and
 * the writer only links and appends. It holds the events line, the metadata and word alignment as
 * they are written, the WAVs as content-addressed cache files (a path inside the cache folder, the
 * length and sha256), what the summary and the fidelity report keep of the dialogue, and the counts
 * the progress line shows. A worker stores the record of a dialogue and its barge-in variant in the
 * shared cache under a key of the dialogue's inputs ({@link dialogueRecordKey}); the coordinator reads
 * it and writes the dataset from it, reading and hashing no audio.
 */
import path from 'node:path';
import { formatAlignment } from '../events/index.ts';
import type { Channel, Language, SourceConversation } from '../model/types.ts';
import { taskDialogueMetadataSchema, type TaskDialogueMetadata } from '../model/dialogue-metadata.ts';
import type { DialogueSummaryInput } from '../quality/summarize-dataset.ts';
import type { StageFailure } from '../run/stage-runner.ts';
import type { RecognitionCounts } from '../services/tts/recognition-tally.ts';
import { contentHash, type BinaryCodec, type ContentCache } from '../storage/content-cache.ts';
import { formatRecord } from '../storage/json-records.ts';
import { redactSecrets } from '../storage/redact.ts';
import { sourceDigest } from '../storage/source-digest.ts';
import { generatedDialogueTiming, type GeneratedDialogueTiming } from '../timeline/fidelity.ts';
import type { AnnotatedDialogue } from '../../stages/annotate-events.ts';
import type { PlacedUtterance, RenderedTimeline, StoredWav } from '../../stages/place-timeline.ts';
import type { DialogueCounts } from '../../stages/render-dataset.ts';

/** Cache folder of the records. */
export const DIALOGUE_RECORD_STAGE = 'dialogue-record';

/** A WAV in the content cache: its path relative to the cache folder, its length and sha256. */
export interface RecordedWav {
  /** `/`-separated, relative to the cache folder. */
  path: string;
  byteLength: number;
  sha256: string;
}

/** One dialogue of one dataset (the base dataset or its barge-in variant), as its files are written. */
export interface DatasetDialogueRecord {
  id: string;
  /** Its line of `all.jsonl`, without the newline. */
  eventsLine: string;
  audio: RecordedWav;
  /** The full-band master and its rate (Hz), when there is one. */
  fullBand: (RecordedWav & { sampleRate: number }) | null;
  /** `metadata/{id}.json` as written. */
  metadataText: string;
  /** `txt_align/{id}.txt` as written. */
  alignmentText: string;
  /** Seconds of audio. */
  durationSeconds: number;
  /** Utterances placed (for the progress line). */
  utterances: number;
  /** What the dataset summary keeps of it. */
  summary: DialogueSummaryInput;
  /** Its generated timing, for the fidelity report. */
  timing: GeneratedDialogueTiming;
  /** Its report page is kept in the cache (pipeline/report/cached-dialogue-pages.ts): the dataset writer makes none. */
  pageKept?: boolean;
}

/**
 * A dialogue's records: the base dataset's, and its barge-in variant's (or why that failed; null
 * without a variant), and the speech recognition check's counts of the clips it is spoken with.
 */
export interface DialogueRecord {
  base: DatasetDialogueRecord;
  variant: DatasetDialogueRecord | { failed: StageFailure } | null;
  /**
   * The speech recognition check (`quality.speechRecognition`) of the clips the dialogue's utterances
   * are spoken with, summed from their synthesis cache entries (stages/synthesize-speech.ts
   * `DialogueSpeech.speechRecognition`): what the coordinator adds up into the base dataset's
   * summary, the same counts a local build sums from the dialogue's speech. Absent when the check is
   * off (or the engine is local).
   */
  speechRecognition?: RecognitionCounts;
}

/**
 * The key material of a dialogue's record: the build's config hash (./build-queue.ts
 * `buildConfigHash`: what the config builds, with every input file by its content), the code, the
 * language and the source conversation. The speakers are drawn from these (./language-work.ts).
 */
export function dialogueRecordKey(configHash: string, language: Language, conversation: SourceConversation): unknown {
  return { version: 1, code: sourceDigest(), configHash, language, conversation: contentHash(conversation) };
}

/** A stored WAV as a record names it (relative to `cacheDirectory`). */
function recordedWav(stored: StoredWav, cacheDirectory: string): RecordedWav {
  const relative = path.relative(path.resolve(cacheDirectory), path.resolve(stored.path));
  if (relative.startsWith('..') || path.isAbsolute(relative))
    throw new Error(`${stored.path}: a rendered WAV outside the cache folder ${cacheDirectory}`);
  return { path: relative.split(path.sep).join('/'), byteLength: stored.byteLength, sha256: stored.sha256 };
}

/** The stored WAV a record names, in the cache folder `cacheDirectory` of this machine. */
export function storedWavOf(recorded: RecordedWav, cacheDirectory: string): StoredWav {
  return {
    path: path.join(cacheDirectory, ...recorded.path.split('/')),
    byteLength: recorded.byteLength,
    sha256: recorded.sha256,
  };
}

/**
 * The record of one placed, annotated dialogue (what the render-dataset stage is given), with its
 * metadata and alignment formatted as the dataset writer formats them, passed through JSON so that a
 * record made here and one read from the cache are the same value.
 * @param metadataFile the metadata's path for error messages
 * @param userChannel the listener channel of backchannels (the user)
 * @throws RecordFileError when the metadata does not fit its schema; Error when the WAV is not in the cache folder
 */
export function recordDialogue(
  dialogue: {
    id: string;
    timeline: RenderedTimeline;
    annotated: AnnotatedDialogue;
    metadata: TaskDialogueMetadata;
    spoken: readonly PlacedUtterance[];
    extra: DialogueCounts;
  },
  userChannel: Channel,
  cacheDirectory: string,
  metadataFile: string,
): DatasetDialogueRecord {
  const { id, timeline, annotated, metadata, spoken, extra } = dialogue;
  const record: DatasetDialogueRecord = {
    id,
    eventsLine: annotated.line,
    audio: recordedWav(timeline.wavFile, cacheDirectory),
    fullBand: timeline.fullBand
      ? { ...recordedWav(timeline.fullBand.file, cacheDirectory), sampleRate: timeline.fullBand.sampleRate }
      : null,
    // as the dataset writer formats them (stages/render-dataset-writer.ts addDialogue)
    metadataText: redactSecrets(formatRecord(metadataFile, taskDialogueMetadataSchema, metadata)),
    alignmentText: redactSecrets(formatAlignment(timeline.words)),
    durationSeconds: timeline.totalDurationCs / 100,
    utterances: spoken.length,
    summary: {
      id,
      durationSeconds: timeline.totalDurationCs / 100,
      events: annotated.events,
      disagreements: annotated.disagreements,
      paddedUtterances: spoken.filter((utterance) => utterance.paddingSteps > 0).length,
      rephrasedUtterances: spoken.filter((utterance) => utterance.rephrasedForSpeechRate).length,
      resampledDraws: timeline.placement.resampled,
      placementFallbacks: timeline.placement.fallbacks,
      sampledOffsetsCs: timeline.placement.transitions
        .filter((transition) => transition.kind === 'speaker-change')
        .map((transition) => transition.offset),
      splitQuestions: spoken.filter((utterance) => utterance.part === 1).length,
      ...extra,
    },
    timing: generatedDialogueTiming(
      id,
      spoken.map((utterance, position) => ({
        channel: timeline.channels[position]!,
        durationCs: utterance.durationCs,
      })),
      timeline.placement,
      userChannel,
    ),
  };
  return JSON.parse(JSON.stringify(record)) as DatasetDialogueRecord;
}

/** Thrown inside {@link readDialogueRecord}'s lookup to leave a missing record missing. */
class NoRecord extends Error {}

/**
 * A record as a cache entry: its JSON text as the data file (checked by its sha256 on every read,
 * cheaper than hashing the parsed value), nothing else as metadata.
 */
const recordCodec: BinaryCodec<DialogueRecord, Record<string, never>> = {
  encode: (record) => ({ bytes: Buffer.from(JSON.stringify(record), 'utf8'), metadata: {} }),
  decode: (bytes) => JSON.parse(bytes.toString('utf8')) as DialogueRecord,
};

/**
 * The record stored under `key`, or null when there is none (or it is damaged: the cache counts it).
 * @throws the cache folder's read errors other than a missing or damaged entry
 */
export async function readDialogueRecord(cache: ContentCache, key: unknown): Promise<DialogueRecord | null> {
  try {
    return await cache.binary(DIALOGUE_RECORD_STAGE, key, () => Promise.reject(new NoRecord()), recordCodec, '.record');
  } catch (error) {
    if (error instanceof NoRecord) return null;
    throw error;
  }
}

/**
 * Store a dialogue's record under `key` (atomically, like every cache entry; a record already there
 * is kept: the same inputs made it).
 * @throws as the cache's write (disk full, permissions)
 */
export async function storeDialogueRecord(cache: ContentCache, key: unknown, record: DialogueRecord): Promise<void> {
  await cache.binary(DIALOGUE_RECORD_STAGE, key, () => Promise.resolve(record), recordCodec, '.record');
}
