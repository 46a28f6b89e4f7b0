/**
 * globalSetup of the end-to-end test project (vitest.config.ts): one folder per `vitest run` for the
 * shared builds of ./shared-build.ts, removed when the run ends.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The run's folder of shared builds (./shared-build.ts). */
    sharedBuildRoot: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const root = await mkdtemp(path.join(os.tmpdir(), 'duplexsynth-shared-builds-'));
  project.provide('sharedBuildRoot', root);
  return async () => {
    await rm(root, { recursive: true, force: true });
  };
}
