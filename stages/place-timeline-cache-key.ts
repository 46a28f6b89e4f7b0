/**
 * The cache key of a placed and rendered timeline: the placement stages' input and parameters, the
 * digest of the utterances' samples and timings, and the digest of the code that places and renders
 * ({@link placementCodeDigest}), so that a change to that code places again.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { samplesDigest } from '../pipeline/audio/samples-digest.ts';
import { AUDIO_KERNELS_FILE } from '../pipeline/audio/audio-kernels.ts';
import type { RenderPool } from '../pipeline/audio/render-pool.ts';
import type { Channel, SpeakerRole } from '../pipeline/model/types.ts';
import type { PlaceDialogueOptions } from '../pipeline/timeline/place-dialogue.ts';
import type { TimingStatistics } from '../pipeline/timeline/timing-statistics.ts';
import type { StageCacheKey } from '../pipeline/run/stage.ts';
import { contentHash } from '../pipeline/storage/content-cache.ts';
import type { SpokenUtterance } from './synthesize-speech.ts';

/** Cache folder of the placed and rendered timelines; bump the version when an entry's meaning changes (the code's own changes are in the key already). */
export const PLACE_TIMELINE_STAGE = 'place-timeline';
// version 2: the WAV and the full-band WAV are the entry's two data files
export const PLACE_TIMELINE_STAGE_VERSION = 2;

/** Input of the placement stages: one dialogue's synthesized utterances and backchannel clips. */
export interface PlaceTimelineInput {
  dialogueId: string;
  utterances: readonly SpokenUtterance[];
  backchannelClips: readonly SpokenUtterance[];
}

/** Parameters of the placement stage (stages/place-timeline.ts `placeTimelineStage`): the dataset's seed, channels, timing statistics and placement options. */
export interface PlaceTimelineParameters {
  seed: number;
  channelOfRole: Record<SpeakerRole, Channel>;
  statistics: TimingStatistics;
  options: Partial<PlaceDialogueOptions>;
  /**
   * Worker threads that master the composed tracks (limiting, WAV encoding; audio.renderThreads);
   * absent or null: the build's thread does. Not in the cache key: the bytes are the same.
   */
  renderPool?: RenderPool | null;
}

/**
 * The cache key of a placed and rendered timeline: the dialogue id (placement draws are seeded by
 * it), the utterances and backchannel clips ({@link speechDigest}: samples, timings and texts), the
 * placement parameters, seed and statistics, the variant's parameters, and the code ({@link placementCodeDigest}).
 */
export function placementCacheKey(
  input: PlaceTimelineInput,
  parameters: PlaceTimelineParameters,
  variant: unknown,
): StageCacheKey {
  return {
    stage: PLACE_TIMELINE_STAGE,
    keyMaterial: {
      version: PLACE_TIMELINE_STAGE_VERSION,
      code: placementCodeDigest(),
      dialogueId: input.dialogueId,
      speech: speechDigest(input.utterances, input.backchannelClips),
      seed: parameters.seed,
      channelOfRole: parameters.channelOfRole,
      statistics: statisticsDigest(parameters.statistics),
      options: parameters.options,
      variant,
    },
  };
}

const statisticsDigests = new WeakMap<TimingStatistics, string>();

/** contentHash of the timing statistics, once per statistics object (they are the same for a whole dataset). */
function statisticsDigest(statistics: TimingStatistics): string {
  let digest = statisticsDigests.get(statistics);
  if (digest === undefined) {
    digest = contentHash(statistics);
    statisticsDigests.set(statistics, digest);
  }
  return digest;
}

/**
 * sha256 (hex) of a dialogue's utterances then its backchannel clips: of each, the canonical JSON of
 * every field but the samples, then the digest of the samples (and of the full-band clip's;
 * pipeline/audio/samples-digest.ts: the sha256 of their float32 bytes, or the name of the synthesis
 * cache entry they were decoded from).
 */
export function speechDigest(utterances: readonly SpokenUtterance[], clips: readonly SpokenUtterance[]): string {
  const hash = createHash('sha256');
  for (const [group, list] of [
    ['utterances', utterances],
    ['clips', clips],
  ] as const) {
    hash.update(`${group}:${list.length}\n`);
    for (const { audio, fullBand, ...rest } of list) {
      hash.update(
        `${contentHash({ ...rest, samples: audio.length, fullBand: fullBand ? { sampleRate: fullBand.sampleRate, samples: fullBand.audio.length } : null })}\n`,
      );
      hash.update(`${samplesDigest(audio)}\n`);
      if (fullBand) hash.update(`${samplesDigest(fullBand.audio)}\n`);
    }
  }
  return hash.digest('hex');
}

let codeDigest: string | null = null;

/**
 * The stage modules whose code is part of {@link placementCodeDigest}: stages/place-timeline.ts and
 * every stages/place-timeline-*.ts (placement, rendering, the cache key), stages/synthesize-speech.ts
 * and every stages/synthesize-speech-*.ts (they decode the synthesis cache entries whose sha256 names
 * the clips in the key: pipeline/audio/samples-digest.ts).
 */
const PLACEMENT_STAGE_MODULE = /^(place-timeline|synthesize-speech)(-[a-z-]+)?\.(ts|js|mjs)$/;

/**
 * sha256 (hex) of the code that places and renders a timeline: the stage modules of placement and of
 * synthesis ({@link PLACEMENT_STAGE_MODULE}), every module of pipeline/timeline/ and pipeline/audio/
 * (tests and benchmarks left out; `.ts` sources, or the `.js` that dist/ compiled from them) and the
 * WebAssembly kernels (pipeline/audio/audio-kernels.wasm, read from the package when running compiled
 * too), paths and contents, read once per process. Part of the cache key, as DVC's stage dependencies
 * include the stage's code: a change to placement, the true-peak limiter or the WAV encoder places
 * again instead of reusing an entry that other code rendered.
 */
export function placementCodeDigest(): string {
  if (codeDigest !== null) return codeDigest;
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
  const hash = createHash('sha256');
  // a missing kernel file is keyed as such (the JavaScript loops then render, the same bytes)
  const contents = (file: string) => (file === AUDIO_KERNELS_FILE && !existsSync(file) ? 'absent' : readFileSync(file));
  for (const file of placementCodeFiles())
    hash
      .update(`${path.relative(root, file).split(path.sep).join('/')}\n`)
      .update(contents(file))
      .update('\n');
  codeDigest = hash.digest('hex');
  return codeDigest;
}

/**
 * The files {@link placementCodeDigest} hashes, absolute paths in the order hashed: the stage modules
 * ({@link PLACEMENT_STAGE_MODULE}, sorted by name), the WebAssembly kernels, then the modules of
 * pipeline/timeline/ and pipeline/audio/ (each folder sorted by name).
 */
export function placementCodeFiles(): string[] {
  const stages = path.dirname(fileURLToPath(import.meta.url));
  const root = path.resolve(stages, '..');
  const code = (file: string) =>
    /\.(ts|js|mjs)$/.test(file) && !/\.(test|bench)\.(ts|js)$/.test(file) && !file.endsWith('.d.ts');
  const files: string[] = [];
  for (const name of readdirSync(stages).sort())
    if (PLACEMENT_STAGE_MODULE.test(name) && code(name)) files.push(path.join(stages, name));
  // the WebAssembly kernels as loaded (from the package, also when running compiled)
  files.push(AUDIO_KERNELS_FILE);
  for (const folder of ['pipeline/timeline', 'pipeline/audio']) {
    const directory = path.join(root, folder);
    for (const name of readdirSync(directory).sort()) if (code(name)) files.push(path.join(directory, name));
  }
  return files;
}
