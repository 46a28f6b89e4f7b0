/**
 * The service checks of `duplexsynth doctor --config FILE`: each service the build config names is
 * asked once, with a short timeout: the LLM endpoints of `llm.rewrite` and `llm.translate` (any HTTP
 * answer counts as reachable; the API key variable must be set), the recorded-responses file of a
 * `replay` backend, the speech servers of every remote `tts` backend (the engines' own probes:
 * pipeline/services/tts/cosyvoice2-fastapi.ts, cosyvoice2-triton.ts) and the Redis of `queue:`.
 */
import { access, constants } from 'node:fs/promises';
import { connect } from 'node:net';
import type { DoctorCheck } from './doctor-check.ts';

/** A URL answers over HTTP within the timeout (any status), or the reason it did not. */
async function httpReachable(url: string, timeoutMilliseconds: number): Promise<{ ok: boolean; detail: string }> {
  const { describeNetworkError } = await import('../../pipeline/services/tts/service-http.ts');
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(timeoutMilliseconds) });
    await response.body?.cancel();
    return { ok: true, detail: `${url} answered (HTTP ${response.status})` };
  } catch (error) {
    return { ok: false, detail: `${url} unreachable: ${describeNetworkError(error)}` };
  }
}

/** A TCP connection to HOST:PORT opens within the timeout, or the reason it did not. */
function tcpReachable(
  host: string,
  port: number,
  timeoutMilliseconds: number,
): Promise<{ ok: boolean; detail: string }> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (ok: boolean, detail: string) => {
      socket.destroy();
      resolve({ ok, detail });
    };
    socket.setTimeout(timeoutMilliseconds, () =>
      done(false, `${host}:${port}: no answer in ${timeoutMilliseconds} ms`),
    );
    socket.once('connect', () => done(true, `${host}:${port} accepts connections`));
    socket.once('error', (error) => done(false, `${host}:${port}: ${error.message}`));
  });
}

/** The settings of one dialogue text backend as the doctor reads them. */
interface TextBackendSettings {
  backend: string;
  baseUrl?: string;
  apiKeyVariable?: string;
  file?: string;
}

/**
 * Checks every service a build config names (module comment), in config order: `llm.rewrite`,
 * `llm.translate`, `tts.{language}` for the languages built, `queue`.
 * @param timeoutMilliseconds how long each service may take to answer
 * @throws ConfigError when the file cannot be read or is invalid (the message names the file)
 */
export async function checkConfiguredServices(configFile: string, timeoutMilliseconds: number): Promise<DoctorCheck[]> {
  const [{ loadConfigFile }, { DEFAULT_GEMINI_API_KEY_VARIABLES }] = await Promise.all([
    import('../../pipeline/config.ts'),
    import('../../pipeline/services/llm/gemini-model.ts'),
  ]);
  const config = await loadConfigFile(configFile);
  const checks: DoctorCheck[] = [];
  const service = (name: string, result: { ok: boolean; detail: string }, fix: string): DoctorCheck =>
    result.ok ? { name, group: 'service', ...result } : { name, group: 'service', ...result, fix };
  for (const role of ['rewrite', 'translate'] as const) {
    const settings = config.llm[role] as TextBackendSettings;
    const name = `llm.${role} ${settings.backend}`;
    if (settings.backend === 'replay' && settings.file) {
      const found = await access(settings.file, constants.R_OK).then(
        () => true,
        () => false,
      );
      checks.push(
        service(
          name,
          { ok: found, detail: found ? settings.file : `${settings.file}: cannot be read` },
          `record the responses first (llm.${role}.record) or fix llm.${role}.file in ${configFile}`,
        ),
      );
      continue;
    }
    if (!settings.baseUrl) continue; // rules and none call no service
    checks.push(
      service(
        name,
        await httpReachable(settings.baseUrl, timeoutMilliseconds),
        `start the server or fix llm.${role}.baseUrl in ${configFile}`,
      ),
    );
    const variables =
      settings.apiKeyVariable !== undefined
        ? [settings.apiKeyVariable]
        : settings.backend === 'gemini'
          ? [...DEFAULT_GEMINI_API_KEY_VARIABLES]
          : [];
    if (variables.length === 0) continue;
    const set = variables.find((variable) => process.env[variable]);
    checks.push(
      service(
        `llm.${role} API key`,
        { ok: set !== undefined, detail: set ? `${set} is set` : `${variables.join(' or ')} not set` },
        `export ${variables[0]}=... (the key of the service)`,
      ),
    );
  }
  for (const language of config.languages) {
    const tts = config.tts[language];
    if (!tts?.service) continue; // an offline engine: checked with the tools
    const urls = ((tts.service as { urls?: string[] }).urls ?? []).map((url) => url.replace(/\/+$/, ''));
    const fix = `start the speech server or fix tts.${language}.service.urls in ${configFile}`;
    const probes = await probeSpeechServers(
      tts.backend,
      { ...(tts.service as { modelName?: string }), urls },
      timeoutMilliseconds,
    );
    for (const [index, url] of urls.entries()) {
      const probe = probes[index]!;
      checks.push(service(`tts.${language} ${tts.backend} ${url}`, { ok: probe.ready, detail: probe.detail }, fix));
    }
  }
  if (config.queue) {
    const address = new URL(config.queue);
    checks.push(
      service(
        `queue ${address.host}`,
        await tcpReachable(address.hostname, Number(address.port || 6379), timeoutMilliseconds),
        `start redis-server (npm run setup installs it) or fix queue: in ${configFile}`,
      ),
    );
  }
  return checks;
}

/** One probe per URL of a remote speech backend: the engine's own probe, else an HTTP answer. */
async function probeSpeechServers(
  backend: string,
  settings: { urls: string[]; modelName?: string },
  timeoutMilliseconds: number,
): Promise<{ ready: boolean; detail: string }[]> {
  if (backend === 'cosyvoice2') {
    const { probeCosyVoice2Endpoints } = await import('../../pipeline/services/tts/cosyvoice2-fastapi.ts');
    return probeCosyVoice2Endpoints(settings.urls, timeoutMilliseconds);
  }
  if (backend === 'cosyvoice2-triton') {
    const { probeCosyVoice2TritonEndpoints } = await import('../../pipeline/services/tts/cosyvoice2-triton.ts');
    return probeCosyVoice2TritonEndpoints(settings.urls, settings.modelName ?? 'cosyvoice2', timeoutMilliseconds);
  }
  return Promise.all(
    settings.urls.map(async (url) => {
      const result = await httpReachable(url, timeoutMilliseconds);
      return { ready: result.ok, detail: result.detail };
    }),
  );
}
