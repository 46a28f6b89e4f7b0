import { describe, expect, it } from 'vitest';
import { detectSpeechSegments } from '../pipeline/audio/speech-regions.ts';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { bytesHash, ContentCache, type FilesCodec } from '../pipeline/storage/content-cache.ts';
import { createRenderPool } from '../pipeline/audio/render-pool.ts';
import { loadTimingStatistics, shippedTimingStatisticsOf } from '../pipeline/timeline/timing-statistics.ts';
import {
  FADE_OUT_CS,
  placeBargeInTimelineStage,
  placeTimeline,
  placeTimelineStage,
  readStoredWav,
  renderTimeline,
  truncateUtterance,
  yieldPoints,
  type RenderedTimeline,
} from './place-timeline.ts';
import type { SpokenUtterance } from './synthesize-speech.ts';

const RATE = 16000;

/**
 * Three "words" of a 200 Hz tone (0.30 s each) with dips to −30 dB between them (0.05 s, not silent,
 * so one speech segment as in real speech), and word timings that put the boundaries 3 cs late.
 */
function utterance(): SpokenUtterance {
  const durationCs = 100;
  const audio = new Float32Array(durationCs * 160);
  for (let index = 0; index < audio.length; index += 1) {
    const cs = Math.floor(index / 160);
    const dip = (cs >= 30 && cs < 35) || (cs >= 65 && cs < 70);
    audio[index] = (dip ? 0.01 : 0.3) * Math.sin((2 * Math.PI * 200 * index) / RATE);
  }
  const segments = detectSpeechSegments(audio, RATE, {});
  return {
    index: 1,
    role: 'system',
    kind: 'answer',
    turnNumber: 1,
    scriptText: 'one two three',
    spokenText: 'one two three',
    paddingSteps: 0,
    rephrasedForSpeechRate: false,
    audio,
    sampleRate: RATE,
    durationCs,
    segments,
    words: [
      { start: 0, end: 36, word: 'one' },
      { start: 36, end: 71, word: 'two' },
      { start: 71, end: 100, word: 'three' },
    ],
    wordTimingSource: 'spread',
  };
}

describe('yield points of an interrupted utterance', () => {
  it('move to the quiet frame near each estimated word end, fade out, and re-detect exactly', () => {
    const spoken = utterance();
    expect(spoken.segments).toEqual([{ start: 0, end: 100 }]); // the dips are above the speech threshold
    const points = yieldPoints(spoken, {});
    expect(points.at(-1)).toEqual({ endCs: 100, sampleCount: spoken.audio.length });
    const inner = points.slice(0, -1);
    expect(inner.length).toBe(2);
    for (const point of inner) {
      const cutFrame = point.sampleCount / 160;
      expect((cutFrame >= 30 && cutFrame <= 35) || (cutFrame >= 65 && cutFrame <= 70)).toBe(true); // inside a dip
      const cut = truncateUtterance(spoken, point);
      expect(cut.durationCs).toBe(point.endCs);
      expect(detectSpeechSegments(cut.audio, RATE, {})).toEqual(cut.segments);
      // faded: the last samples are near zero, no click
      const tail = cut.audio.subarray(cut.audio.length - 16);
      expect(Math.max(...Array.from(tail, Math.abs))).toBeLessThan(0.01);
      expect(cut.audio.length - FADE_OUT_CS * 160).toBeGreaterThan(0);
      expect(cut.words.every((word) => word.end <= point.endCs)).toBe(true);
    }
  });

  it('offers no point inside a loud stretch (no dip near the word end)', () => {
    const spoken = utterance();
    spoken.audio.forEach((_, index) => (spoken.audio[index] = 0.3 * Math.sin((2 * Math.PI * 200 * index) / RATE)));
    expect(yieldPoints(spoken, {}).map((point) => point.endCs)).toEqual([100]);
  });
  it('offers exactly the points a detector run on each whole faded prefix would accept', () => {
    // 60 "words" of noise at levels from -65 to -20 dBFS with 3-8 cs gaps at -80 to -40 dBFS: many cuts
    // whose fade moves frames across the -50 dBFS threshold or makes a last run too short to count
    let state = 7;
    const random = (): number => (state = (state * 1103515245 + 12345) % 2147483648) / 2147483648;
    const pieces: { cs: number; level: number; word: boolean }[] = [];
    for (let word = 0; word < 60; word += 1) {
      pieces.push({ cs: 2 + Math.floor(random() * 10), level: -60 + random() * 30, word: true });
      pieces.push({ cs: 1 + Math.floor(random() * 20), level: -90 + random() * 45, word: false });
    }
    const durationCs = pieces.reduce((total, piece) => total + piece.cs, 0);
    const audio = new Float32Array(durationCs * 160);
    const words: SpokenUtterance['words'] = [];
    let at = 0;
    for (const piece of pieces) {
      const amplitude = Math.sqrt(3) * 10 ** (piece.level / 20);
      for (let index = at * 160; index < (at + piece.cs) * 160; index += 1)
        audio[index] = amplitude * (2 * random() - 1);
      if (piece.word)
        words.push({ start: at, end: at + piece.cs + Math.floor(random() * 5) - 2, word: `w${words.length}` });
      at += piece.cs;
    }
    const spoken: SpokenUtterance = {
      ...utterance(),
      audio,
      durationCs,
      segments: detectSpeechSegments(audio, RATE, {}),
      words,
    };
    // the reference: the detector on every faded prefix (truncateUtterance's audio) at each word's quietest frame
    const energy = (frame: number) =>
      audio.subarray(frame * 160, (frame + 1) * 160).reduce((sum, value) => sum + value * value, 0);
    let total = 0;
    for (let frame = 0; frame < durationCs; frame += 1) total += energy(frame);
    const expected = new Set<number>([durationCs]);
    let offeredInside = 0;
    for (const word of words) {
      if (word.end >= durationCs) continue;
      let cut = word.end;
      let quietest = Number.POSITIVE_INFINITY;
      for (
        let candidate = Math.max(FADE_OUT_CS + 1, word.end - 6);
        candidate <= Math.min(durationCs - 1, word.end + 6);
        candidate += 1
      ) {
        if (energy(candidate) < quietest) [quietest, cut] = [energy(candidate), candidate];
      }
      if (quietest > (total / durationCs) * 0.1) continue;
      const faded = truncateUtterance(spoken, { endCs: cut, sampleCount: cut * 160 }).audio;
      const detected = detectSpeechSegments(faded, RATE, {});
      const endCs = detected.at(-1)?.end;
      if (endCs === undefined || endCs <= 0) continue;
      if (
        JSON.stringify(detected) !==
        JSON.stringify(
          spoken.segments
            .filter((segment) => segment.start < endCs)
            .map((segment) => ({ start: segment.start, end: Math.min(segment.end, endCs) })),
        )
      )
        continue;
      expected.add(endCs);
      offeredInside += 1;
    }
    expect(offeredInside).toBeGreaterThan(5);
    expect(yieldPoints(spoken, {}).map((point) => point.endCs)).toEqual([...expected].sort((a, b) => a - b));
  });
});

/** A cache that runs `between` after an entry is computed and before it is stored. */
class InterleavingCache extends ContentCache {
  constructor(
    directory: string,
    private readonly between: () => Promise<void>,
  ) {
    super(directory);
  }

  override binaryFiles<T, M, U = T>(
    stage: string,
    keyMaterial: unknown,
    compute: () => Promise<U>,
    codec: FilesCodec<T, M, U>,
    extension: string,
  ): Promise<T> {
    const computeThenWait = async () => {
      const value = await compute();
      await this.between();
      return value;
    };
    return super.binaryFiles<T, M, U>(stage, keyMaterial, computeThenWait, codec, extension);
  }
}

/** Whether a rendering's stored files (the WAV, the full-band WAV) hold exactly `expected`'s bytes. */
async function sameFiles(
  rendered: RenderedTimeline,
  expected: { wav: Uint8Array; fullBand?: { wav: Uint8Array } },
): Promise<boolean> {
  const wav = await readStoredWav(rendered.wavFile);
  const fullBand = rendered.fullBand ? await readStoredWav(rendered.fullBand.file) : undefined;
  return (
    wav.equals(expected.wav) &&
    (fullBand === undefined) === (expected.fullBand === undefined) &&
    (fullBand === undefined || fullBand.equals(expected.fullBand!.wav))
  );
}

describe('the placed and rendered timeline in the content cache', () => {
  it('a hit gives the bytes placing gives; samples of -0 key as +0 (a fresh clip against the cached one); another seed is another entry', async () => {
    const directory = await mkdtemp(path.join(os.tmpdir(), 'duplexsynth-place-cache-'));
    try {
      const cache = new ContentCache(directory);
      const statistics = await loadTimingStatistics(shippedTimingStatisticsOf('en').file);
      const question: SpokenUtterance = { ...utterance(), index: 0, role: 'user', kind: 'question' };
      const answer = utterance();
      const input = { dialogueId: 'd1', utterances: [question, answer], backchannelClips: [] };
      const parameters = { seed: 3, channelOfRole: { user: 1, system: 0 } as const, statistics, options: {} };
      const first = await placeTimelineStage.run(input, parameters, { cache });
      const uncached = renderTimeline(placeTimeline({ ...input, ...parameters }));
      // the WAV is a file of the entry (the dataset links to it), recorded with its length and sha256
      expect(path.dirname(first.wavFile.path).startsWith(path.join(directory, 'place-timeline'))).toBe(true);
      const firstBytes = await readFile(first.wavFile.path);
      expect(firstBytes.equals(Buffer.from(uncached.wav))).toBe(true);
      expect(first.wavFile).toEqual({
        path: first.wavFile.path,
        sha256: bytesHash(uncached.wav),
        byteLength: uncached.wav.byteLength,
      });
      expect((await readStoredWav(first.wavFile)).equals(firstBytes)).toBe(true);

      const negativeZero: SpokenUtterance = {
        ...question,
        audio: Float32Array.from(question.audio, (sample) => (sample === 0 ? -0 : sample)),
      };
      expect(Buffer.from(negativeZero.audio.buffer).equals(Buffer.from(question.audio.buffer))).toBe(false);
      const second = await placeTimelineStage.run({ ...input, utterances: [negativeZero, answer] }, parameters, {
        cache,
      });
      expect(cache.statistics['place-timeline']).toEqual({ hits: 1, misses: 1, corrupt: 0 });
      expect(second.wavFile).toEqual(first.wavFile); // a hit names the same file
      expect(second.placement).toEqual(first.placement);
      expect(second.words).toEqual(first.words);

      await placeTimelineStage.run(input, { ...parameters, seed: 4 }, { cache });
      expect(cache.statistics['place-timeline']).toEqual({ hits: 1, misses: 2, corrupt: 0 });
      // the other seed was encoded into the same reused buffer: the first entry's file is untouched
      expect((await readFile(first.wavFile.path)).equals(firstBytes)).toBe(true);

      // a stored WAV changed since it was recorded is refused, naming the file
      const changed = Buffer.from(firstBytes);
      changed[changed.length - 1]! ^= 1;
      await writeFile(first.wavFile.path, changed);
      await expect(readStoredWav(first.wavFile)).rejects.toThrow(
        `${first.wavFile.path}: the rendered WAV differs from the ${firstBytes.byteLength} bytes and sha256 recorded`,
      );
      await writeFile(first.wavFile.path, firstBytes.subarray(1));
      await expect(readStoredWav(first.wavFile)).rejects.toThrow(/differs from the \d+ bytes/);
      await rm(first.wavFile.path);
      await expect(readStoredWav(first.wavFile)).rejects.toThrow(
        `${first.wavFile.path}: cannot read the rendered WAV: ENOENT`,
      );
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });

  it('renders from its reused track buffers, and in a worker thread, the bytes new arrays give: a long dialogue, then a shorter one (no samples left over), full-band masters included', async () => {
    const directory = await mkdtemp(path.join(os.tmpdir(), 'duplexsynth-place-scratch-'));
    try {
      const cache = new ContentCache(directory);
      const statistics = await loadTimingStatistics(shippedTimingStatisticsOf('en').file);
      const parameters = { seed: 5, channelOfRole: { user: 1, system: 0 } as const, statistics, options: {} };
      const withFullBand = (spoken: SpokenUtterance, gain: number): SpokenUtterance => ({
        ...spoken,
        fullBand: {
          audio: Float32Array.from({ length: spoken.durationCs * 240 }, (_, index) => gain * Math.sin(index * 0.05)),
          sampleRate: 24000,
        },
      });
      const turns = (count: number) =>
        Array.from({ length: count }, (_, index): SpokenUtterance =>
          withFullBand(
            { ...utterance(), index, ...(index % 2 === 0 ? { role: 'user', kind: 'question' } : {}) },
            0.2 + index * 0.05,
          ),
        );
      const renderPool = createRenderPool(1);
      try {
        for (const [dialogueId, count] of [
          ['long', 8],
          ['short', 2],
        ] as const) {
          const input = { dialogueId, utterances: turns(count), backchannelClips: [] };
          const staged = await placeTimelineStage.run(input, parameters, { cache });
          const uncached = renderTimeline(placeTimeline({ ...input, ...parameters }));
          expect(staged.fullBand?.sampleRate).toBe(24000);
          expect(await sameFiles(staged, uncached)).toBe(true);
          // mastered in a worker thread (audio.renderThreads), another cache: the same bytes
          const pooled = await placeTimelineStage.run(
            input,
            { ...parameters, renderPool },
            { cache: new ContentCache(path.join(directory, 'pooled')) },
          );
          expect(await sameFiles(pooled, uncached)).toBe(true);
        }
      } finally {
        await renderPool.close();
      }

      // placements that overlap (they let the event loop through while mastering): the barge-in variant
      // of one dialogue beside the next one's base, and two bases of different lengths, all at once, each
      // give the bytes they give alone (with one shared set of scratch tracks, a placement composed while
      // another was between its mastering steps would overwrite that one's tracks)
      const alone = async (dialogueId: string, count: number) =>
        renderTimeline(placeTimeline({ dialogueId, utterances: turns(count), backchannelClips: [], ...parameters }));
      const expected = await Promise.all([alone('a', 6), alone('b', 3), alone('c', 8)]);
      const overlapping = await Promise.all([
        placeTimelineStage.run({ dialogueId: 'a', utterances: turns(6), backchannelClips: [] }, parameters, {
          cache: new ContentCache(path.join(directory, 'overlap-a')),
        }),
        placeTimelineStage.run({ dialogueId: 'b', utterances: turns(3), backchannelClips: [] }, parameters, {
          cache: new ContentCache(path.join(directory, 'overlap-b')),
        }),
        placeTimelineStage.run({ dialogueId: 'c', utterances: turns(8), backchannelClips: [] }, parameters, {
          cache: new ContentCache(path.join(directory, 'overlap-c')),
        }),
        placeBargeInTimelineStage.run(
          { dialogueId: 'a', utterances: turns(6), backchannelClips: [] },
          { ...parameters, systemYields: 'next-word-boundary', detector: {} },
          { cache: new ContentCache(path.join(directory, 'overlap-a-variant')) },
        ),
      ]);
      for (const [index, rendered] of overlapping.slice(0, 3).entries())
        expect(await sameFiles(rendered, expected[index]!)).toBe(true);
      // a placement that starts once another has encoded its WAVs but not yet stored them: the first
      // still holds its buffers (the second encodes elsewhere), so each entry holds its own bytes
      let between: RenderedTimeline | undefined;
      const interleaving = new InterleavingCache(path.join(directory, 'interleave-c'), async () => {
        between = await placeTimelineStage.run(
          { dialogueId: 'b', utterances: turns(3), backchannelClips: [] },
          parameters,
          { cache: new ContentCache(path.join(directory, 'interleave-b')) },
        );
      });
      const outer = await placeTimelineStage.run(
        { dialogueId: 'c', utterances: turns(8), backchannelClips: [] },
        parameters,
        { cache: interleaving },
      );
      expect(await sameFiles(between!, expected[1]!)).toBe(true);
      expect(await sameFiles(outer, expected[2]!)).toBe(true);
      const variantAlone = await placeBargeInTimelineStage.run(
        { dialogueId: 'a', utterances: turns(6), backchannelClips: [] },
        { ...parameters, systemYields: 'next-word-boundary', detector: {} },
        { cache: new ContentCache(path.join(directory, 'alone-a-variant')) },
      );
      expect(
        await sameFiles(overlapping[3]!, {
          wav: await readStoredWav(variantAlone.wavFile),
          fullBand: { wav: await readStoredWav(variantAlone.fullBand!.file) },
        }),
      ).toBe(true);
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });
});
