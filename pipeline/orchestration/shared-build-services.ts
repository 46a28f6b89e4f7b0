/**
 * The services every language of a build shares (text backends, speech detector, synthesis queue,
 * resampling and rendering threads), made once per build, or once per queue worker.
 */
import { resolveSpeechDetectorOptions } from '../audio/speech-regions.ts';
import { createResamplePool } from '../audio/resample-pool.ts';
import { createRenderPool, type RenderPool } from '../audio/render-pool.ts';
import type { BuildConfig } from '../config.ts';
import type { RetryEvent } from '../services/llm/retrying-model.ts';
import { createTextBackends } from '../services/llm/text-backends.ts';
import { createSynthesisQueue } from '../../stages/synthesize-speech.ts';
import type { BuildLog } from './build-context.ts';

/** What every language of a build shares: the text backends, the speech detector, the synthesis queue, the resampling and rendering threads. */
export interface SharedBuildServices {
  textBackends: Awaited<ReturnType<typeof createTextBackends>>;
  detector: ReturnType<typeof resolveSpeechDetectorOptions>;
  queue: ReturnType<typeof createSynthesisQueue>;
  resamplePool: ReturnType<typeof createResamplePool> | null;
  renderPool: RenderPool | null;
}

/** The services a build's languages share, made from the config (retry lines go to `log`). */
export async function createSharedBuildServices(config: BuildConfig, log: BuildLog): Promise<SharedBuildServices> {
  const textBackends = await createTextBackends(config, (event) => log(`retry: ${describeRetry(event)}`));
  const detector = resolveSpeechDetectorOptions(
    definedOnly({
      thresholdDbfs: config.speechDetection.thresholdDbfs,
      // the config says minimum…, the detector min… (pipeline/audio/speech-regions.ts)
      minSilenceSeconds: config.speechDetection.minimumSilenceSeconds,
      minSpeechSeconds: config.speechDetection.minimumSpeechSeconds,
    }),
  );
  const queue = createSynthesisQueue(config.synthesis.concurrency);
  // resampling threads (synthesis.resampleThreads); idle threads end on their own if the build stops early
  const resamplePool =
    config.synthesis.resampleThreads > 0 ? createResamplePool(config.synthesis.resampleThreads) : null;
  // threads that master the placed dialogues (audio.renderThreads); started on first use, likewise
  const renderPool = config.audio.renderThreads > 0 ? createRenderPool(config.audio.renderThreads) : null;
  return { textBackends, detector, queue, resamplePool, renderPool };
}

function describeRetry(event: RetryEvent): string {
  return `${event.error.message.split('\n')[0]} (retry ${event.retryIndex + 1} in ${(event.delayMilliseconds / 1000).toFixed(1)} s)`;
}

function definedOnly<T extends Record<string, unknown>>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, entry]) => entry !== undefined)) as Partial<T>;
}
