/**
 * Seeded random streams for the timeline (pure-rand xoroshiro128+).
 *
 * Each dialogue gets its own stream, seeded by hashing (build seed, dialogue id, stream name) with
 * SHA-256 into the generator's full 128-bit state, so dialogues never share an offset sequence
 * (the published toy data reused one seed for every dialogue).
 */
import { createHash } from 'node:crypto';
import { unsafeUniformIntDistribution, xoroshiro128plus, type RandomGenerator } from 'pure-rand';

/** A mutable random stream. Every method advances the stream. */
export interface RandomStream {
  /** A uniformly distributed integer in `[from, to]` (both inclusive). */
  integer(from: number, to: number): number;
  /**
   * A uniformly distributed number in `[0, 1)` with 53 random bits (two integer draws: 26 + 27 bits,
   * the construction of `Math.random`-quality doubles used by V8 and numpy's `random_sample`).
   */
  uniform(): number;
  /**
   * A standard normal number (mean 0, standard deviation 1) by the Box–Muller transform
   * (Box & Muller 1958), from two `uniform()` draws; the second normal of the pair is discarded so
   * that every call consumes the same amount of the stream.
   */
  normal(): number;
}

/**
 * Creates the random stream of one dialogue.
 * @param seed build seed (any safe integer)
 * @param dialogueId dialogue id, non-empty
 * @param streamName separates independent uses within one dialogue (default `timeline`)
 * @throws RangeError when `seed` is not a safe integer or `dialogueId` is empty
 */
export function dialogueRandomStream(seed: number, dialogueId: string, streamName = 'timeline'): RandomStream {
  if (!Number.isSafeInteger(seed)) throw new RangeError(`seed must be a safe integer, got ${seed}`);
  if (dialogueId === '') throw new RangeError('dialogueId must not be empty');
  const digest = createHash('sha256').update(`duplexsynth\0${streamName}\0${seed}\0${dialogueId}`, 'utf8').digest();
  const state: number[] = [digest.readInt32BE(0), digest.readInt32BE(4), digest.readInt32BE(8), digest.readInt32BE(12)];
  // xoroshiro128+ must not start from the all-zero state (it would stay there).
  if (!state.some((word) => word !== 0)) state[0] = 1;
  const generator: RandomGenerator = xoroshiro128plus.fromState(state);
  const integer = (from: number, to: number) => unsafeUniformIntDistribution(from, to, generator);
  const uniform = () => {
    const high = integer(0, 2 ** 26 - 1);
    const low = integer(0, 2 ** 27 - 1);
    return (high * 2 ** 27 + low) / 2 ** 53;
  };
  return {
    integer,
    uniform,
    normal: () => {
      const radius = Math.sqrt(-2 * Math.log(1 - uniform())); // 1 − u lies in (0, 1], so the log is finite
      return radius * Math.cos(2 * Math.PI * uniform());
    },
  };
}
