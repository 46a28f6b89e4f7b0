/**
 * Setup file of the unit test project (vitest.config.ts `setupFiles`): the unit files share their
 * worker threads' module graph (`poolOptions.threads.isolate: false`, which saves loading it again for
 * each of some 110 files: vitest.config.ts gives the measurements), so the state a file can leave in
 * a module is reset before each file: the language packs a build registered, the API keys registered
 * for redaction, environment variables stubbed with `vi.stubEnv`, fake timers and mocks.
 */
import { beforeAll, vi } from 'vitest';
import { forgetRegisteredLanguagePacks } from '../model/language-pack.ts';
import { clearRegisteredSecrets } from '../storage/redact.ts';

beforeAll(() => {
  forgetRegisteredLanguagePacks();
  clearRegisteredSecrets();
  vi.unstubAllEnvs();
  vi.unstubAllGlobals();
  vi.useRealTimers();
  vi.restoreAllMocks();
});
