/**
 * Readiness check of CosyVoice2 Triton servers before a build sends them speech: each must answer
 * `GET /v2/health/ready` and serve a model with the four CosyVoice2 inputs.
 */
import { describeNetworkError } from './service-http.ts';
import type { EndpointProbe } from './remote-synthesizer.ts';

/**
 * Checks each server: `GET /v2/health/ready` must answer 200 and `GET /v2/models/{modelName}` must
 * list the four inputs.
 *
 * @returns one probe per URL; `detail` starts with `not ` when a server answered but lacks the model.
 */
export async function probeCosyVoice2TritonEndpoints(
  urls: readonly string[],
  modelName: string,
  timeoutMilliseconds = 5_000,
): Promise<EndpointProbe[]> {
  return Promise.all(
    urls.map(async (url): Promise<EndpointProbe> => {
      try {
        const ready = await fetch(`${url}/v2/health/ready`, { signal: AbortSignal.timeout(timeoutMilliseconds) });
        if (ready.status === 404)
          return { url, ready: false, detail: 'not a Triton server: GET /v2/health/ready answered HTTP 404' };
        if (!ready.ok) return { url, ready: false, detail: `unreachable: not ready (HTTP ${ready.status})` };
        const metadata = await fetch(`${url}/v2/models/${modelName}`, {
          signal: AbortSignal.timeout(timeoutMilliseconds),
        });
        if (!metadata.ok)
          return { url, ready: false, detail: `not serving model ${modelName}: HTTP ${metadata.status}` };
        const inputs =
          ((await metadata.json()) as { inputs?: { name?: string }[] }).inputs?.map((input) => input.name) ?? [];
        const missing = ['reference_wav', 'reference_wav_len', 'reference_text', 'target_text'].filter(
          (name) => !inputs.includes(name),
        );
        if (missing.length > 0)
          return {
            url,
            ready: false,
            detail: `not the CosyVoice2 model: ${modelName} lacks inputs ${missing.join(', ')}`,
          };
        return { url, ready: true, detail: 'ready' };
      } catch (error) {
        return { url, ready: false, detail: `unreachable: ${describeNetworkError(error)}` };
      }
    }),
  );
}
