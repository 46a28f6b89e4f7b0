/**
 * An LLM endpoint whose 401 body echoes the API key (some gateways do) must not put
 * the key on stderr, in the build log, in any summary, metadata, cache or recorded-response file. The
 * key is planted in the replies of loopback servers speaking the real protocols (OpenAI-compatible,
 * Gemini): in a 401 error body and inside a successful reply's text.
 */
import { execFile } from 'node:child_process';
import { readdir, readFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { DEFAULT_CONFIG_FILE, loadConfigFile, PROJECT_ROOT, resolveConfig } from '../config.ts';
import { clearRegisteredSecrets } from '../storage/redact.ts';
import { geminiDialogueResponder, startGeminiLoopbackServer } from '../services/llm/testing/gemini-loopback-server.ts';
import {
  openAIDialogueResponder,
  startOpenAILoopbackServer,
  type OpenAILoopbackResponder,
} from '../services/llm/testing/openai-loopback-server.ts';
import { runBuild } from '../orchestration/build.ts';
import { TEST_CLI } from '../../scripts/testing/cli-command.ts';

const run = promisify(execFile);
const CLI = TEST_CLI; // the compiled command when dist/ is a build of these sources, else the sources through tsx (scripts/testing/cli-command.ts)
/** Letters and dashes only, so a reply carrying it still passes the spoken-text checks. */
const KEY = 'sk-loopback-Secret-Value-Never-Shown';

let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(path.join(os.tmpdir(), 'duplexsynth-redact-'));
});
afterEach(() => {
  vi.unstubAllEnvs();
});
afterAll(async () => {
  clearRegisteredSecrets();
  await rm(scratch, { recursive: true, force: true });
});

/** Every file under `directory` whose bytes contain `needle`. */
async function filesContaining(directory: string, needle: string): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir(directory, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const file = path.join(entry.parentPath, entry.name);
    if ((await readFile(file)).includes(needle)) found.push(path.relative(directory, file));
  }
  return found;
}

/** The first request gets a 401 echoing the key it was sent; the others a valid reply with the key planted in an answer. */
function leakingResponder(valid: OpenAILoopbackResponder): OpenAILoopbackResponder {
  return async (request) => {
    const sent = String(request.headers.authorization ?? '').replace(/^Bearer /, '');
    if (request.index === 0)
      return {
        kind: 'error',
        statusCode: 401,
        message: `Incorrect API key provided: ${sent}. You can find your API key at the gateway.`,
        type: 'invalid_request_error',
      };
    const reply = await valid(request);
    if (typeof reply !== 'string') return reply;
    const parsed = JSON.parse(reply) as { turns: { question: string; answer: string | null }[] };
    parsed.turns[0]!.answer = `${parsed.turns[0]!.answer ?? 'Yes'} and the gateway says ${sent}`;
    return JSON.stringify(parsed);
  };
}

describe('a key echoed by the server never reaches a message or a file', () => {
  it('OpenAI-compatible gateway, through the CLI: stderr, summaries, metadata, cache and the recorded responses', async () => {
    const server = await startOpenAILoopbackServer({ responder: leakingResponder(openAIDialogueResponder()) });
    try {
      const base = await loadConfigFile(DEFAULT_CONFIG_FILE);
      const folder = path.join(scratch, 'openai');
      const configFile = path.join(scratch, 'openai.yaml');
      const config = {
        name: 'redact-openai',
        languages: ['en'],
        corpus: { path: base.corpus.path, limit: 2 },
        output: { directory: path.join(folder, 'out'), cacheDirectory: path.join(folder, 'cache') },
        llm: {
          rewrite: {
            backend: 'openai-compatible',
            baseUrl: `${server.url}/v1`,
            model: 'gateway-model',
            apiKeyVariable: 'LOOPBACKAPIKEY',
            record: path.join(folder, 'recorded.jsonl'),
            retry: { maxRetries: 0 },
          },
          translate: { backend: 'none' },
        },
        quality: { enabled: false },
      };
      await writeFile(configFile, JSON.stringify(config));
      const result = await run(process.execPath, [CLI, 'build', '--config', configFile], {
        cwd: PROJECT_ROOT,
        env: { ...process.env, LOOPBACKAPIKEY: KEY },
      }).then(
        ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
        (error: { code: number; stdout: string; stderr: string }) => ({
          code: error.code,
          stdout: error.stdout,
          stderr: error.stderr,
        }),
      );
      // the key was really sent and really echoed
      expect(server.requests.map((request) => request.headers.authorization)).toContain(`Bearer ${KEY}`);
      expect(result.code).toBe(3); // one dialogue failed (the 401), one was built
      expect(result.stderr).not.toContain(KEY);
      expect(result.stderr).toMatch(/FAILED at prepare-text: .*Incorrect API key provided: \$LOOPBACKAPIKEY\./);
      expect(await filesContaining(folder, KEY)).toEqual([]);
      const summary = await readFile(path.join(folder, 'out', 'data/en/task/topiocqa/summary.json'), 'utf8');
      expect(summary).toContain('Incorrect API key provided: $LOOPBACKAPIKEY.');
      expect(await readFile(path.join(folder, 'recorded.jsonl'), 'utf8')).toContain('the gateway says $LOOPBACKAPIKEY');
    } finally {
      await server.close();
    }
  });

  it('Gemini API, in process: the build report, the log and every file', async () => {
    const responder = geminiDialogueResponder();
    const server = await startGeminiLoopbackServer({
      apiKey: KEY,
      responder: (request) =>
        request.index === 0
          ? { kind: 'error', code: 401, status: 'UNAUTHENTICATED', message: `API key not valid: ${request.apiKey}` }
          : responder(request),
    });
    vi.stubEnv('DUPLEXSYNTH_TEST_GEMINI_LEAK_KEY', KEY);
    try {
      const base = await loadConfigFile(DEFAULT_CONFIG_FILE);
      const folder = path.join(scratch, 'gemini');
      const config = resolveConfig(
        {
          name: 'redact-gemini',
          languages: ['en'],
          corpus: { path: base.corpus.path, limit: 2 },
          output: { directory: path.join(folder, 'out'), cacheDirectory: path.join(folder, 'cache') },
          llm: {
            rewrite: {
              backend: 'gemini',
              baseUrl: server.url,
              apiKeyVariable: 'DUPLEXSYNTH_TEST_GEMINI_LEAK_KEY',
              retry: { maxRetries: 0 },
            },
            translate: { backend: 'none' },
          },
          quality: { enabled: false },
        },
        'redact (test)',
        scratch,
      );
      const logged: string[] = [];
      const report = await runBuild(config, { log: (line) => logged.push(line) });
      expect(server.requests.map((request) => request.apiKey)).toContain(KEY);
      const failures = report.datasets[0]!.failed;
      expect(failures).toHaveLength(1);
      expect(failures[0]!.reason).toContain('API key not valid: $DUPLEXSYNTH_TEST_GEMINI_LEAK_KEY');
      expect(logged.join('\n')).not.toContain(KEY);
      expect(logged.join('\n')).toContain('$DUPLEXSYNTH_TEST_GEMINI_LEAK_KEY');
      expect(await filesContaining(folder, KEY)).toEqual([]);
    } finally {
      await server.close();
    }
  });
});
