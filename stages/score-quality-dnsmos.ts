/**
 * DNSMOS of the written dialogues: where the model files are by default, the cache entry of one
 * dialogue's scores (keyed by its WAV's sha256 and the window hop), the scorer loaded for a dataset,
 * and the scores rounded to 4 decimals so that the report's bytes are the same across runs and machines.
 */
import { access } from 'node:fs/promises';
import path from 'node:path';
import { decodeWav } from '../pipeline/audio/wav.ts';
import type { DialogueDnsmos } from '../pipeline/quality/quality-report.ts';
import { sharedDirectory } from '../pipeline/config.ts';
import { bytesHash, type ContentCache } from '../pipeline/storage/content-cache.ts';
import {
  DNSMOS_REFERENCE_HOP_SECONDS,
  loadDnsmosScorer,
  type DnsmosRecordingScores,
  type DnsmosRunSettings,
  type DnsmosScorer,
} from '../pipeline/services/mos/dnsmos.ts';
import {
  DNSMOS_DIRECTORY_ENVIRONMENT_VARIABLE,
  DNSMOS_MODEL_FILE_NAMES,
  resolveDnsmosModelDirectory,
  type DnsmosModelLocationConfig,
} from '../pipeline/services/mos/dnsmos-model-files.ts';
import type { RecordingMosScorer } from '../pipeline/services/mos/mos-scorer.ts';
import { cachedJson, type StageCacheKey } from '../pipeline/run/stage.ts';

/**
 * The default DNSMOS model location: the project's shared copy `{shared}/models/dnsmos`
 * (pipeline/config.ts sharedDirectory) when it holds `sig_bak_ovr.onnx` and the
 * `DUPLEXSYNTH_DNSMOS_DIR` environment variable is not set; otherwise `{}`, i.e. the search order of
 * resolveDnsmosModelDirectory (environment variable, user cache, download).
 */
export async function defaultDnsmosModelLocation(
  environment: NodeJS.ProcessEnv = process.env,
): Promise<DnsmosModelLocationConfig> {
  if (environment[DNSMOS_DIRECTORY_ENVIRONMENT_VARIABLE]) return {};
  const shared = path.join(sharedDirectory(), 'models', 'dnsmos');
  try {
    await access(path.join(shared, DNSMOS_MODEL_FILE_NAMES.primary));
    return { modelDirectory: shared };
  } catch {
    return {};
  }
}

/** Version of the DNSMOS cache entries; bump when the stored shape or the computation changes. */
const DNSMOS_CACHE_VERSION = 1;

/**
 * The cache entry of one dialogue's DNSMOS scores: the WAV's sha256 under `dnsmos`, and the window hop
 * when it is not the reference's 1 s (a key without a hop means the reference hop).
 */
export function dnsmosCacheKey(audioSha256: string, hopSeconds: number = DNSMOS_REFERENCE_HOP_SECONDS): StageCacheKey {
  return {
    stage: 'dnsmos',
    keyMaterial: {
      version: DNSMOS_CACHE_VERSION,
      audioSha256,
      scorer: 'DnsmosScorer default (sig_bak_ovr + model_v8, reference windows)',
      ...(hopSeconds !== DNSMOS_REFERENCE_HOP_SECONDS ? { hopSeconds } : {}),
    },
  };
}

/**
 * Score one rendered dialogue WAV with DNSMOS into the cache, under the same entry `score-quality`
 * looks up for a written WAV with these bytes (a queue worker's scoring job: the coordinator's
 * scoring then hits the cache). Does nothing when the entry is there already.
 * @param wav the dialogue's WAV file bytes, exactly as the dataset writer writes them
 * @param label names the dialogue in decoding errors
 * @param scorer a scorer loaded with the default settings (loadDnsmosScorer), as score-quality's own
 * @param hopSeconds the scorer's window hop (quality.dnsmos.hopSeconds), s: part of the cache key
 * @throws as decodeWav (not a WAV) and the scorer
 */
export async function cacheDialogueDnsmos(
  cache: ContentCache,
  wav: Uint8Array,
  label: string,
  scorer: RecordingMosScorer,
  hopSeconds: number = DNSMOS_REFERENCE_HOP_SECONDS,
): Promise<void> {
  await cachedJson(cache, dnsmosCacheKey(bytesHash(wav), hopSeconds), async () =>
    roundDnsmos(await scorer.scoreRecording(decodeWav(wav, label))),
  );
}

/** `value` rounded to 4 decimals, the precision of the quality report's scores. */
export function round4(value: number): number {
  return Math.round(value * 10_000) / 10_000;
}

/** DNSMOS scores of a recording, rounded to 4 decimals (stable across runs and machines). */
export function roundDnsmos(scores: DnsmosRecordingScores): DialogueDnsmos {
  return {
    dialogue: scores.dialogue
      ? {
          ovrl: round4(scores.dialogue.ovrl),
          sig: round4(scores.dialogue.sig),
          bak: round4(scores.dialogue.bak),
          p808: round4(scores.dialogue.p808),
        }
      : null,
    channels: scores.channels.map((channel) => ({
      channel: channel.channel,
      hasSpeech: channel.hasSpeech,
      scores: channel.scores
        ? {
            ovrl: round4(channel.scores.ovrl),
            sig: round4(channel.scores.sig),
            bak: round4(channel.scores.bak),
            p808: round4(channel.scores.p808),
            windows: channel.scores.windows,
          }
        : null,
    })),
  };
}

/**
 * The DNSMOS scorer a dataset is scored with when the caller gives none: the model files of `models`,
 * or of {@link defaultDnsmosModelLocation} when absent, run with `run`.
 * @throws DnsmosModelFileError when the models cannot be found; as loadDnsmosScorer
 */
export async function loadDatasetDnsmosScorer(
  models: DnsmosModelLocationConfig | undefined,
  run: DnsmosRunSettings,
): Promise<DnsmosScorer> {
  return (
    await loadDnsmosScorer(await resolveDnsmosModelDirectory(models ?? (await defaultDnsmosModelLocation())), run)
  ).scorer;
}
