/**
 * Within-turn pauses of question-like turns, measured on real word-timed conversations: the pause a
 * user makes in the middle of a question (a TURN_HOLD of the benchmark profile, pipeline/text/
 * turn-hold-split.ts) should last as such pauses last, not as the TURN_HOLD gaps of any talk (the Map
 * Task TURN_HOLD gaps of a map-reading task, median 1.21 s with a fifth ≥ 2.4 s, are not those of a
 * person asking a question).
 *
 * Measured per channel of a recording from its word timings (`supervisions[].words`; word-level
 * formats only: `nxt`, `textgrid`, `ctm`):
 * 1. words become IPUs as docs/events.md step 1 has it (a silence over 0.50 s splits);
 * 2. a **within-turn pause** is the silence between two consecutive IPUs of one speaker while the
 *    other channel says nothing at all from the end of the first to the start of the second (no
 *    backchannel, no overlap): the speaker keeps the turn through it;
 * 3. the pause belongs to a **question-like turn** when the speaker's turn so far (the words since
 *    the other channel last spoke) opens, after discourse fillers ("uh", "okay", "and", "so", ...), with
 *    a wh-word ("what", "where", "how", ...) or an auxiliary followed by a subject ("do you", "have
 *    you", "is there", ...): the syntactic forms of questions (Map Task's query moves are written
 *    these ways; its move annotation is not in the shared folder, so the form stands in for it).
 */
import { readFile } from 'node:fs/promises';
import { quantileSorted } from 'simple-statistics';
import type { Centiseconds, Channel, ReferenceRecording } from '../model/types.ts';
import type { DurationSummary, TimingStatistics } from '../model/timing-statistics.ts';
import { DEFAULT_EVENT_THRESHOLDS } from '../events/index.ts';
import { packageFile } from '../storage/package-files.ts';
import { bandwidthFor, summarizeDurations } from './timing-summaries.ts';

const WH_WORDS = new Set(['what', 'where', 'when', 'who', 'whom', 'whose', 'which', 'why', 'how']);
const AUXILIARIES = new Set([
  'do',
  'does',
  'did',
  'have',
  'has',
  'had',
  'is',
  'are',
  'was',
  'were',
  'can',
  'could',
  'will',
  'would',
  'should',
  'shall',
  'am',
]);
const SUBJECTS = new Set(['you', 'i', 'we', 'it', 'there', 'he', 'she', 'they', 'that', 'this', 'ye']);
const FILLERS = new Set([
  'uh',
  'um',
  'er',
  'erm',
  'mm',
  'okay',
  'ok',
  'right',
  'and',
  'so',
  'well',
  'now',
  'but',
  'oh',
  'eh',
  'uh-huh',
  'mmhmm',
  'aye',
  'yeah',
  'no',
  'then',
]);

/** Whether a turn's words (any case) open as a question does (module comment, step 3). */
export function isQuestionLike(words: readonly string[]): boolean {
  const lower = words.map((word) => word.toLowerCase().replace(/[^a-z'-]/g, '')).filter((word) => word !== '');
  let index = 0;
  while (index < lower.length && FILLERS.has(lower[index]!)) index += 1;
  const first = lower[index];
  if (first === undefined) return false;
  if (WH_WORDS.has(first)) return true;
  return AUXILIARIES.has(first) && SUBJECTS.has(lower[index + 1] ?? '');
}

interface Ipu {
  channel: Channel;
  start: Centiseconds;
  end: Centiseconds;
  words: string[];
}

/** The IPUs of one channel from its words (docs/events.md step 1: silences ≤ 0.50 s merge). */
function ipusOf(recording: ReferenceRecording, channel: Channel): Ipu[] {
  const words = (recording.supervisions ?? [])
    .filter((supervision) => supervision.channel === channel)
    .flatMap((supervision) => supervision.words ?? []);
  words.sort((a, b) => a.start - b.start || a.end - b.end);
  const ipus: Ipu[] = [];
  for (const word of words) {
    const last = ipus.at(-1);
    if (last !== undefined && word.start - last.end <= DEFAULT_EVENT_THRESHOLDS.maxPauseInIpu) {
      last.end = Math.max(last.end, word.end);
      last.words.push(word.word);
    } else ipus.push({ channel, start: word.start, end: word.end, words: [word.word] });
  }
  return ipus;
}

/** The pauses measured (integer centiseconds, in recording order) and how many recordings had words. */
export interface QuestionPauseMeasurement {
  /** Every within-turn pause (module comment, step 2). */
  withinTurn: Centiseconds[];
  /** Those of question-like turns (step 3). */
  questionLike: Centiseconds[];
  /** Recordings with word timings used. */
  recordings: number;
}

/**
 * Within-turn pauses of question-like turns (module comment) over recordings with word timings.
 * @param recordings reference recordings; those without `supervisions[].words` are skipped
 * @returns pause lengths in integer centiseconds (all > 50 cs)
 */
export function measureQuestionPauses(recordings: readonly ReferenceRecording[]): QuestionPauseMeasurement {
  const result: QuestionPauseMeasurement = { withinTurn: [], questionLike: [], recordings: 0 };
  for (const recording of recordings) {
    if (!(recording.supervisions ?? []).some((supervision) => (supervision.words ?? []).length > 0)) continue;
    result.recordings += 1;
    const byChannel: Record<Channel, Ipu[]> = { 0: ipusOf(recording, 0), 1: ipusOf(recording, 1) };
    for (const channel of [0, 1] as const) {
      const mine = byChannel[channel];
      const other = byChannel[channel === 0 ? 1 : 0];
      let turnWords: string[] = [];
      for (let index = 0; index + 1 < mine.length; index += 1) {
        const before = mine[index]!;
        const after = mine[index + 1]!;
        if (turnWords.length === 0) turnWords = [...before.words];
        const otherSpoke = other.some((ipu) => ipu.start < after.start && ipu.end > before.end);
        if (otherSpoke) {
          turnWords = [];
          continue;
        }
        const pause = after.start - before.end;
        result.withinTurn.push(pause);
        if (isQuestionLike(turnWords)) result.questionLike.push(pause);
        turnWords.push(...after.words);
      }
    }
  }
  return result;
}

/** The shipped question-pause file of a language (`pipeline/timeline/defaults/{language}.question-pauses.json`). */
export const QUESTION_PAUSES_FORMAT = 'duplexsynth-question-pauses';

/** The file: the question-like pauses as a duration list (the shape of timing statistics' `turnHoldGaps`), with provenance. */
export interface QuestionPausesFile {
  format: typeof QUESTION_PAUSES_FORMAT;
  version: 1;
  language: string;
  units: 'seconds';
  provenance: {
    corpus: string;
    sourcePath: string;
    recordings: number;
    rule: string;
    command: string;
    benchmarkReference: string;
  };
  /** Every within-turn pause, for comparison. */
  withinTurnSummary: DurationSummary;
  /** The pauses a split question draws from. */
  questionPauses: { summary: DurationSummary; kernelBandwidth: number; values: number[] };
  /** Share of question pauses inside the benchmark's own MT-QA TURN_HOLD range, 0.86–1.87 s; 10th and 90th percentiles. */
  comparison: { shareInBenchmarkRange: number; p10: number; p90: number };
}

/**
 * The question-pause file's content from a measurement (deterministic: sorted values, no date).
 * @param measurement from {@link measureQuestionPauses}
 * @throws RangeError when no question-like pause was measured
 */
export function questionPausesFile(
  measurement: QuestionPauseMeasurement,
  provenance: Omit<QuestionPausesFile['provenance'], 'recordings' | 'rule' | 'benchmarkReference'>,
  language: string,
): QuestionPausesFile {
  if (measurement.questionLike.length === 0)
    throw new RangeError(
      'no within-turn pause of a question-like turn was measured (the recordings need word timings)',
    );
  const sorted = [...measurement.questionLike].sort((a, b) => a - b);
  const percentile = (p: number) => Number((quantileSorted(sorted, p) / 100).toFixed(2));
  return {
    format: QUESTION_PAUSES_FORMAT,
    version: 1,
    language,
    units: 'seconds',
    provenance: {
      ...provenance,
      recordings: measurement.recordings,
      rule: 'pipeline/timeline/question-pauses.ts: silence > 0.50 s between two IPUs of one speaker with the other channel silent throughout, in a turn opening with a wh-word or an auxiliary + subject',
      benchmarkReference: "M3-DuplexBench's own MT-QA user TURN_HOLD pauses: 0.86-1.87 s",
    },
    withinTurnSummary: summarizeDurations(measurement.withinTurn),
    questionPauses: {
      summary: summarizeDurations(sorted),
      kernelBandwidth: bandwidthFor(sorted, 100),
      values: sorted.map((value) => value / 100),
    },
    comparison: {
      shareInBenchmarkRange: Number(
        (sorted.filter((value) => value >= 86 && value <= 187).length / sorted.length).toFixed(3),
      ),
      p10: percentile(0.1),
      p90: percentile(0.9),
    },
  };
}

/** Path of the shipped question-pause file of a language (it exists for English only). */
export function defaultQuestionPausesPath(language: string): string {
  return packageFile('pipeline', 'timeline', 'defaults', `${language}.question-pauses.json`);
}

/**
 * The shipped question pauses of a language, or null when there is no such file (Japanese: the
 * CallFriend Japanese RTTM has no words to tell questions by).
 * @throws Error naming the file when it exists but is not a question-pause file
 */
export async function loadDefaultQuestionPauses(language: string): Promise<QuestionPausesFile | null> {
  const file = defaultQuestionPausesPath(language);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
  const parsed = JSON.parse(text) as QuestionPausesFile;
  if (
    parsed.format !== QUESTION_PAUSES_FORMAT ||
    parsed.version !== 1 ||
    !Array.isArray(parsed.questionPauses?.values) ||
    parsed.questionPauses.values.some((value) => !(value > 0.5))
  ) {
    throw new Error(`${file}: not a ${QUESTION_PAUSES_FORMAT} file of version 1 with pauses over 0.5 s`);
  }
  return parsed;
}

/**
 * Timing statistics whose TURN_HOLD gaps are the question pauses: what a question split in two draws
 * its pause from (the other lists unchanged).
 */
export function withQuestionPauses(statistics: TimingStatistics, pauses: QuestionPausesFile | null): TimingStatistics {
  return pauses === null ? statistics : { ...statistics, turnHoldGaps: pauses.questionPauses };
}
