/**
 * Lays words over detected speech segments so that they exactly tile the segments.
 *
 * WORD TIMING CONTRACT (another tool re-derives speech segments from written words by merging words
 * that touch or overlap, so the words must give back exactly the segments):
 * - inside one segment consecutive words abut (`word.end === next.start`), the first word starts at
 *   `segment.start`, the last ends at `segment.end`;
 * - no word crosses a silence (every word lies inside one segment);
 * - every word lasts at least 1 cs; every segment holds at least 1 word.
 *
 * When there are more segments than words, the segments separated by the shortest silences are merged
 * first (the silence becomes part of the speech), so every segment can get a word; the merged segments
 * are returned and are the utterance's speech segments from then on.
 */
import type { Centiseconds, SpeechSegment } from '../model/types.ts';
import type { SpokenWord } from './spoken-words.ts';
import type { TimedMora } from './japanese-morae.ts';

/** One word with its time span in centiseconds. */
export interface TimedWord {
  start: Centiseconds;
  end: Centiseconds;
  word: string;
}

/** Words tiling segments (see the contract above). */
export interface WordTiling {
  /** The segments the words tile: the input segments, some merged when there were fewer words than segments. */
  segments: SpeechSegment[];
  words: TimedWord[];
}

/** A word with the time span (centiseconds, fractional allowed) where it is expected to be spoken. */
export interface WordWithExpectedTime {
  text: string;
  start: number;
  end: number;
}

/** The words cannot tile the segments (more words than centiseconds of speech, no words, broken contract). */
export class WordTimingError extends Error {
  override readonly name = 'WordTimingError';
}

/**
 * Cost, in centiseconds of misplacement, of a silence between two segments after a word that has no
 * pausing punctuation, when spreading words: as costly as placing words a whole second of speech
 * away from where their share puts them. Both engines pause at , . ; : ? ! 、 。 and rarely elsewhere,
 * while character or mora shares drift by tenths of a second over a long utterance.
 */
export const UNPUNCTUATED_BREAK_COST_CENTISECONDS = 100;

/**
 * Merges the segments separated by the shortest silence (the earliest on ties) until at most
 * `maximumCount` remain. Merging joins `[a.start, a.end]` and `[b.start, b.end]` into `[a.start, b.end]`.
 *
 * @returns a new list (the input is not changed).
 * @throws WordTimingError when `maximumCount` < 1.
 */
export function mergeSegmentsToCount(segments: readonly SpeechSegment[], maximumCount: number): SpeechSegment[] {
  if (maximumCount < 1) throw new WordTimingError(`cannot merge speech segments down to ${maximumCount}`);
  const merged = segments.map((segment) => ({ ...segment }));
  while (merged.length > maximumCount) {
    let shortest = 0;
    for (let index = 1; index < merged.length - 1; index++) {
      const gap = (merged[index + 1] as SpeechSegment).start - (merged[index] as SpeechSegment).end;
      const best = (merged[shortest + 1] as SpeechSegment).start - (merged[shortest] as SpeechSegment).end;
      if (gap < best) shortest = index;
    }
    (merged[shortest] as SpeechSegment).end = (merged[shortest + 1] as SpeechSegment).end;
    merged.splice(shortest + 1, 1);
  }
  return merged;
}

/**
 * Spreads words over segments in proportion to their weights (English: characters, Japanese: morae),
 * for engines without word times. On speech time (the segments laid end to end, silences removed) each
 * word's expected span comes from laying all weights end to end; words are then assigned to segments
 * (contiguous groups, >= 1 per segment, at most one per centisecond) minimizing the centiseconds of
 * speech time by which expected spans miss their assigned segment plus
 * {@link UNPUNCTUATED_BREAK_COST_CENTISECONDS} per segment break after a word without pausing
 * punctuation; inside a segment the boundaries follow the weights of its words.
 *
 * @param words at least one word; weights > 0.
 * @param segments integer centiseconds, sorted, non-overlapping, at least one.
 * @throws WordTimingError when there are no words or segments, or more words than centiseconds of speech.
 */
export function spreadWordsOverSegments(words: readonly SpokenWord[], segments: readonly SpeechSegment[]): WordTiling {
  const usable = prepareSegments(words.length, segments);
  const totalWeight = words.reduce((sum, word) => sum + word.weight, 0);
  // Work on speech time (silences removed): each segment follows the previous one without a gap.
  let speechPosition = 0;
  const speechSegments = usable.map((segment) => {
    const onSpeechTime = { start: speechPosition, end: speechPosition + segment.end - segment.start };
    speechPosition = onSpeechTime.end;
    return onSpeechTime;
  });
  const totalSpeech = speechPosition;
  let cumulative = 0;
  const expected = words.map((word) => {
    const start = (cumulative / totalWeight) * totalSpeech;
    cumulative += word.weight;
    return { start, end: (cumulative / totalWeight) * totalSpeech };
  });
  const breakCosts = words.map((word) => (word.pauseAfter ? 0 : UNPUNCTUATED_BREAK_COST_CENTISECONDS));
  const groupSizes = assignWordsToSegments(expected, breakCosts, speechSegments);
  return tile(
    usable,
    groupSizes,
    (segment, firstWord, count) => {
      const group = words.slice(firstWord, firstWord + count);
      const groupWeight = group.reduce((sum, word) => sum + word.weight, 0);
      let within = 0;
      return group.slice(0, -1).map((word) => {
        within += word.weight;
        return segment.start + ((segment.end - segment.start) * within) / groupWeight;
      });
    },
    words.map((word) => word.text),
  );
}

/**
 * Places words at the times an engine reports (e.g. morpheme spans from an Open JTalk mora trace),
 * snapped to the detected segments: each word goes to the segment holding most of its expected span
 * (contiguous groups, >= 1 per segment, at most one per centisecond, minimizing the centiseconds of
 * expected span outside the assigned segment plus the distance to it); inside a segment, the boundary
 * between two words is the middle of the first's expected end and the second's expected start, rounded
 * to whole centiseconds and kept >= 1 cs apart.
 *
 * @param words expected spans in centiseconds on the same time axis as `segments`.
 * @param segments integer centiseconds, sorted, non-overlapping, at least one.
 * @throws WordTimingError when there are no words or segments, or more words than centiseconds of speech.
 */
export function placeWordsAtEngineTimes(
  words: readonly WordWithExpectedTime[],
  segments: readonly SpeechSegment[],
): WordTiling {
  const usable = prepareSegments(words.length, segments);
  const groupSizes = assignWordsToSegments(
    words,
    words.map(() => 0),
    usable,
  );
  return tile(
    usable,
    groupSizes,
    (_segment, firstWord, count) => {
      const boundaries: number[] = [];
      for (let index = firstWord + 1; index < firstWord + count; index++) {
        boundaries.push(
          ((words[index - 1] as WordWithExpectedTime).end + (words[index] as WordWithExpectedTime).start) / 2,
        );
      }
      return boundaries;
    },
    words.map((word) => word.text),
  );
}

/**
 * Gives each word the span of its morae in an Open JTalk trace: word k gets morae
 * [sum of earlier counts, + its count), from its first mora's start to its last mora's end.
 *
 * @param words morphemes with dictionary mora counts.
 * @param morae the trace's morae ({@link moraeFromOpenJtalkPhonemes}), times in seconds of the engine's audio.
 * @param offsetCentiseconds subtracted from every time after converting to centiseconds (where the clip was cut).
 * @returns the words with expected spans in centiseconds, or null when a word has no known mora count
 *   or the counts do not add up to the trace's mora count (then the caller spreads by mora count).
 */
export function wordsAtMoraTimes(
  words: readonly SpokenWord[],
  morae: readonly TimedMora[],
  offsetCentiseconds: number,
): WordWithExpectedTime[] | null {
  if (words.some((word) => word.morae === null || word.morae < 1)) return null;
  const total = words.reduce((sum, word) => sum + (word.morae as number), 0);
  if (total !== morae.length) return null;
  let next = 0;
  return words.map((word) => {
    const first = morae[next] as TimedMora;
    next += word.morae as number;
    const last = morae[next - 1] as TimedMora;
    return { text: word.text, start: first.start * 100 - offsetCentiseconds, end: last.end * 100 - offsetCentiseconds };
  });
}

/**
 * Speech segments re-derived from words the way the benchmark tooling does: words sorted by start,
 * a word that starts at or before the current run's end (touching or overlapping) extends the run.
 */
export function mergeTouchingWords(words: readonly TimedWord[]): SpeechSegment[] {
  const sorted = [...words].sort((a, b) => a.start - b.start || a.end - b.end);
  const segments: SpeechSegment[] = [];
  for (const word of sorted) {
    const current = segments[segments.length - 1];
    if (current && word.start <= current.end) current.end = Math.max(current.end, word.end);
    else segments.push({ start: word.start, end: word.end });
  }
  return segments;
}

/**
 * Checks the word timing contract (module documentation) for `words` over `segments`.
 *
 * @throws WordTimingError describing the first violation.
 */
export function assertWordTiling(words: readonly TimedWord[], segments: readonly SpeechSegment[]): void {
  let wordIndex = 0;
  for (const segment of segments) {
    let position = segment.start;
    const firstInSegment = wordIndex;
    while (wordIndex < words.length && (words[wordIndex] as TimedWord).start < segment.end) {
      const word = words[wordIndex] as TimedWord;
      if (!Number.isInteger(word.start) || !Number.isInteger(word.end))
        throw new WordTimingError(`word "${word.word}" has non-integer times [${word.start}, ${word.end}]`);
      if (word.start !== position)
        throw new WordTimingError(`word "${word.word}" starts at ${word.start} cs, expected ${position} cs`);
      if (word.end - word.start < 1) throw new WordTimingError(`word "${word.word}" lasts less than 1 cs`);
      if (word.end > segment.end)
        throw new WordTimingError(
          `word "${word.word}" ends at ${word.end} cs, after its segment's end ${segment.end} cs`,
        );
      position = word.end;
      wordIndex++;
    }
    if (wordIndex === firstInSegment)
      throw new WordTimingError(`segment [${segment.start}, ${segment.end}] holds no word`);
    if (position !== segment.end)
      throw new WordTimingError(`the words of segment [${segment.start}, ${segment.end}] end at ${position} cs`);
  }
  if (wordIndex !== words.length)
    throw new WordTimingError(`${words.length - wordIndex} words lie outside every segment`);
}

function prepareSegments(wordCount: number, segments: readonly SpeechSegment[]): SpeechSegment[] {
  if (wordCount < 1) throw new WordTimingError('there are no words to place');
  if (segments.length < 1) throw new WordTimingError('there are no speech segments to place words in');
  const usable = mergeSegmentsToCount(segments, wordCount);
  const capacity = usable.reduce((sum, segment) => sum + segment.end - segment.start, 0);
  if (wordCount > capacity)
    throw new WordTimingError(
      `${wordCount} words do not fit in ${capacity} cs of speech (each word needs at least 1 cs)`,
    );
  return usable;
}

/** Centiseconds of `span` outside `segment`, plus the distance between them when they do not overlap. */
function misplacement(span: { start: number; end: number }, segment: SpeechSegment): number {
  const overlap = Math.max(0, Math.min(span.end, segment.end) - Math.max(span.start, segment.start));
  const outside = Math.max(0, span.end - span.start - overlap);
  const distance = Math.max(0, segment.start - span.end, span.start - segment.end);
  return outside + distance;
}

/**
 * Splits the word sequence into one contiguous non-empty group per segment, at most (segment length in
 * cs) words per group, minimizing total misplacement plus `breakCosts[k]` for every segment break right
 * after word k. Dynamic programming over (segment, words used); ties resolve to the earliest split.
 *
 * @returns the number of words in each segment's group.
 */
function assignWordsToSegments(
  expected: readonly { start: number; end: number }[],
  breakCosts: readonly number[],
  segments: readonly SpeechSegment[],
): number[] {
  const wordCount = expected.length;
  const segmentCount = segments.length;
  // prefixCost[s][k] = misplacement of words 0..k-1 in segment s.
  const prefixCost = segments.map((segment) => {
    const prefix = new Float64Array(wordCount + 1);
    for (let index = 0; index < wordCount; index++)
      prefix[index + 1] =
        (prefix[index] as number) + misplacement(expected[index] as { start: number; end: number }, segment);
    return prefix;
  });
  const best = Array.from({ length: segmentCount }, () => new Float64Array(wordCount + 1).fill(Infinity));
  const split = Array.from({ length: segmentCount }, () => new Int32Array(wordCount + 1).fill(-1));
  for (let segmentIndex = 0; segmentIndex < segmentCount; segmentIndex++) {
    const segment = segments[segmentIndex] as SpeechSegment;
    const capacity = segment.end - segment.start;
    const prefix = prefixCost[segmentIndex] as Float64Array;
    const row = best[segmentIndex] as Float64Array;
    const splitRow = split[segmentIndex] as Int32Array;
    for (let used = segmentIndex + 1; used <= wordCount - (segmentCount - 1 - segmentIndex); used++) {
      const earliest = Math.max(segmentIndex, used - capacity);
      for (let groupStart = earliest; groupStart < used; groupStart++) {
        const before =
          segmentIndex === 0
            ? groupStart === 0
              ? 0
              : Infinity
            : ((best[segmentIndex - 1] as Float64Array)[groupStart] as number) + (breakCosts[groupStart - 1] as number);
        if (before === Infinity) continue;
        const cost = before + (prefix[used] as number) - (prefix[groupStart] as number);
        if (cost < (row[used] as number)) {
          row[used] = cost;
          splitRow[used] = groupStart;
        }
      }
    }
  }
  if ((best[segmentCount - 1] as Float64Array)[wordCount] === Infinity)
    throw new WordTimingError(`cannot fit ${wordCount} words into ${segmentCount} segments`);
  const sizes = new Array<number>(segmentCount).fill(0);
  let used = wordCount;
  for (let segmentIndex = segmentCount - 1; segmentIndex >= 0; segmentIndex--) {
    const groupStart = (split[segmentIndex] as Int32Array)[used] as number;
    sizes[segmentIndex] = used - groupStart;
    used = groupStart;
  }
  return sizes;
}

/**
 * Builds the tiling from group sizes; `innerBoundaries(segment, firstWord, count)` proposes the
 * count - 1 boundaries inside a segment (fractional cs), which are rounded and clamped so every word
 * keeps >= 1 cs and boundaries increase.
 */
function tile(
  segments: readonly SpeechSegment[],
  groupSizes: readonly number[],
  innerBoundaries: (segment: SpeechSegment, firstWord: number, count: number) => number[],
  texts: readonly string[],
): WordTiling {
  const words: TimedWord[] = [];
  let firstWord = 0;
  segments.forEach((segment, segmentIndex) => {
    const count = groupSizes[segmentIndex] as number;
    const proposed = innerBoundaries(segment, firstWord, count);
    let start = segment.start;
    for (let offset = 0; offset < count; offset++) {
      let end = segment.end;
      if (offset < count - 1) {
        const lowest = start + 1;
        const highest = segment.end - (count - 1 - offset);
        end = Math.min(highest, Math.max(lowest, Math.round(proposed[offset] as number)));
      }
      words.push({ start, end, word: texts[firstWord + offset] as string });
      start = end;
    }
    firstWord += count;
  });
  return { segments: segments.map((segment) => ({ ...segment })), words };
}
