/** Credentials written into a configured URL (user info, query values) are redacted wherever the URL is quoted. */
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG_FILE, loadConfigFile } from '../config.ts';
import { clearRegisteredSecrets, redactErrorInPlace, redactSecrets } from '../storage/redact.ts';
import { configuredUrls, registerConfiguredSecrets } from './build-guards.ts';

afterEach(() => {
  clearRegisteredSecrets();
});

const TOKEN = 'tok-Query-Secret-0123456789';
const PASSWORD = 'sk-Password-Secret-42';

async function configWith(baseUrl: string, speechUrl: string) {
  const base = await loadConfigFile(DEFAULT_CONFIG_FILE);
  return {
    ...base,
    llm: { ...base.llm, rewrite: { ...base.llm.rewrite, backend: 'openai-compatible', baseUrl } },
    tts: { ...base.tts, en: { ...base.tts.en, service: { url: speechUrl } } },
  } as unknown as typeof base;
}

describe('registerConfiguredSecrets', () => {
  it('redacts query values and user info of every configured endpoint in lines and SDK errors', async () => {
    const config = await configWith(
      `http://me:${PASSWORD}@127.0.0.1:9/v1?token=${TOKEN}&api-version=2024`,
      `http://127.0.0.1:10/tts?key=${encodeURIComponent('a+b/c=Secret')}`,
    );
    expect(configuredUrls(config).length).toBeGreaterThanOrEqual(2);
    registerConfiguredSecrets(config, {});
    const line = `FAILED at prepare-text: fetch failed for http://me:${PASSWORD}@127.0.0.1:9/v1?token=${TOKEN}&api-version=2024`;
    const redacted = redactSecrets(line);
    expect(redacted).not.toContain(TOKEN);
    expect(redacted).not.toContain(PASSWORD);
    expect(redacted).toContain('token=$URL_QUERY_VALUE');
    // a short, ordinary value (a version) is left as it is
    expect(redacted).toContain('api-version=2024');
    // the speech service's key, decoded and as written
    expect(redactSecrets('key a+b/c=Secret')).toBe('key $URL_QUERY_VALUE');
    expect(redactSecrets('key=a%2Bb%2Fc%3DSecret')).toBe('key=$URL_QUERY_VALUE');
    const error = redactErrorInPlace(new Error('request to', { cause: new Error(`GET ?token=${TOKEN}`) }));
    expect(String((error.cause as Error).message)).toBe('GET ?token=$URL_QUERY_VALUE');
  });
});
