/**
 * `duplexsynth --help` and `--version` start in well under 0.5 s because the command loads its heavy
 * modules only when a command runs (scripts/cli.ts and scripts/commands/ import them lazily). The start time
 * itself is measured in `npm run bench` (section `cli`), not asserted here; this test checks the cause,
 * deterministically: which modules a start loads, recorded by a Node module loader hook (node:module
 * `register`, the `load` hook sees every module URL). A new static import of a heavy package on the
 * start path fails here, naming the package.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../pipeline/config.ts';
import { TEST_CLI, TEST_CLI_COMPILED } from './testing/cli-command.ts';

/** Packages a start may load: the option parser, the progress display, the config schema's validator. The TypeScript loader's own (tsx, esbuild) when the tests run the sources. */
const START_PACKAGES = new Set([
  'commander',
  'cli-progress',
  'zod',
  ...(TEST_CLI_COMPILED ? [] : ['tsx', 'esbuild', 'get-tsconfig', 'resolve-pkg-maps']),
]);

let scratch: string;
let hook: string;

beforeAll(async () => {
  scratch = await mkdtemp(path.join(os.tmpdir(), 'duplexsynth-cli-start-'));
  hook = path.join(scratch, 'record-modules.mjs');
  // the hook appends each module URL it is asked to load to the file in MODULE_LOG (hooks run on their own thread in Node 20)
  await writeFile(
    hook,
    [
      "import { register } from 'node:module';",
      'const hooks = `import { appendFileSync } from "node:fs"; export async function load(url, context, next) { appendFileSync(${JSON.stringify(process.env.MODULE_LOG)}, url + "\\\\n"); return next(url, context); }`;',
      "register('data:text/javascript,' + encodeURIComponent(hooks));",
      '',
    ].join('\n'),
  );
});

afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

/** The module URLs `duplexsynth ARGS` loaded, and its exit code and output. */
async function modulesLoadedBy(args: string[]): Promise<{ urls: string[]; code: number; stdout: string }> {
  const log = path.join(scratch, `${args.join('_').replace(/\W+/g, '-')}.log`);
  const { code, stdout } = await new Promise<{ code: number; stdout: string }>((resolve) =>
    execFile(
      process.execPath,
      ['--import', pathToFileURL(hook).href, TEST_CLI, ...args],
      { env: { ...process.env, MODULE_LOG: log } },
      (error, out) => resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout: out }),
    ),
  );
  return { urls: (await readFile(log, 'utf8')).trim().split('\n'), code, stdout };
}

/** The npm package a module URL belongs to (`@scope/name` or `name`), or undefined for the project's own and Node's modules. */
function packageOf(url: string): string | undefined {
  const match = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
  return match?.[1];
}

/** The project's own module of a URL, relative to the project root without `dist/` and extension (`pipeline/config`). */
function projectModuleOf(url: string): string | undefined {
  if (!url.startsWith(pathToFileURL(PROJECT_ROOT).href + '/') || packageOf(url) !== undefined) return undefined;
  return path
    .relative(PROJECT_ROOT, new URL(url).pathname)
    .replace(/^dist\//, '')
    .replace(/\.(ts|js)$/, '');
}

describe(`duplexsynth's start loads no heavy module (${TEST_CLI_COMPILED ? 'compiled' : 'sources through tsx'})`, () => {
  for (const args of [['--help'], ['--version'], ['build', '--help'], ['export', '--help'], ['doctor', '--help']]) {
    it(`${args.join(' ')}: only ${[...START_PACKAGES].join(', ')} from node_modules, and nothing of the stages, services or orchestration`, async () => {
      const { urls, code, stdout } = await modulesLoadedBy(args);
      expect(code).toBe(0);
      expect(stdout).toMatch(args.includes('--version') ? /^\d+\.\d+\.\d+/ : /Usage: duplexsynth/);
      // the hook saw the command itself: an empty list would pass the checks below for nothing
      expect(urls.some((url) => /scripts\/cli\.(ts|js)$/.test(url))).toBe(true);
      const packages = [...new Set(urls.map(packageOf).filter((name): name is string => name !== undefined))].sort();
      expect(
        packages.filter((name) => !START_PACKAGES.has(name)),
        `packages loaded at start: ${packages.join(', ')}`,
      ).toEqual([]);
      const heavy = urls
        .map(projectModuleOf)
        .filter(
          (module): module is string =>
            module !== undefined &&
            /^(stages|pipeline\/(services|orchestration|audio|timeline|report|quality))\//.test(module),
        );
      expect(heavy).toEqual([]);
    });
  }

  it('a command that does work loads its modules (the hook records them, so the checks above can fail)', async () => {
    const { urls } = await modulesLoadedBy(['verify', path.join(scratch, 'no-such-dataset')]);
    expect(urls.map(projectModuleOf)).toContain('pipeline/run/verify-dataset');
  });
});
