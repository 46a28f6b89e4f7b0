/**
 * Where the project's own files are, the same whether this code runs from the TypeScript sources
 * (tsx, vitest) or compiled to `dist/` (`npm run build`, the `duplexsynth` command). Files that are
 * not compiled (the default config, the config schema, prompt templates, timing statistics defaults,
 * the demo corpus and its recorded responses, the report's style sheet and script) are read from the
 * source tree at the package root, never copied into `dist/`; modules that must be started as their
 * own process or thread are found with {@link runnableModule}.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** The `name` in the project's package.json, which marks the package root. */
const PACKAGE_NAME = 'duplexsynth';

function findPackageRoot(start: string): string {
  for (let folder = start; ; folder = path.dirname(folder)) {
    const manifest = path.join(folder, 'package.json');
    if (
      existsSync(manifest) &&
      (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: unknown }).name === PACKAGE_NAME
    )
      return folder;
    if (path.dirname(folder) === folder)
      throw new Error(`no package.json named '${PACKAGE_NAME}' in ${start} or any folder above it`);
  }
}

/** Absolute path of the project root (the folder holding package.json), from the sources or from dist/. */
export const PACKAGE_ROOT: string = findPackageRoot(path.dirname(fileURLToPath(import.meta.url)));

/**
 * True when this code runs compiled (JavaScript in `dist/`), false when it runs from the TypeScript
 * sources through tsx or vitest.
 */
export const RUNNING_COMPILED: boolean = !fileURLToPath(import.meta.url).endsWith('.ts');

/** Folder of the compiled code (tsconfig.build.json `outDir`). */
export const DIST_DIRECTORY: string = path.join(PACKAGE_ROOT, 'dist');

/**
 * Absolute path of a file shipped with the project's sources (not compiled).
 * @param segments path from the package root, e.g. `('pipeline', 'default-config.yaml')`
 */
export function packageFile(...segments: string[]): string {
  return path.join(PACKAGE_ROOT, ...segments);
}

/**
 * The file to start for a project module given by its source path: the `.ts` source when running from
 * the sources (start it with tsx's loader, see {@link TYPESCRIPT_LOADER_ARGUMENTS}), the compiled `.js`
 * in `dist/` when running compiled.
 * @param sourcePath path of the `.ts` module from the package root, e.g. `pipeline/orchestration/build-saturation.bench.ts`
 * @throws Error when `sourcePath` does not end in `.ts`
 */
export function runnableModule(sourcePath: string): string {
  if (!sourcePath.endsWith('.ts')) throw new Error(`runnableModule: ${sourcePath} is not a TypeScript source path`);
  return RUNNING_COMPILED
    ? path.join(DIST_DIRECTORY, `${sourcePath.slice(0, -'.ts'.length)}.js`)
    : path.join(PACKAGE_ROOT, sourcePath);
}

/**
 * Node options a child process needs to run {@link runnableModule}'s file: tsx's loader (resolved from
 * this package, so the child's working folder does not matter) when running from the sources, none
 * when compiled.
 */
export const TYPESCRIPT_LOADER_ARGUMENTS: readonly string[] = RUNNING_COMPILED
  ? []
  : ['--import', pathToFileURL(createRequire(import.meta.url).resolve('tsx/esm')).href];
