// Types of scripts/build-dist.js (plain JavaScript, so that the `duplexsynth` command needs no loader).

/** The project root. */
export const PROJECT_ROOT: string;
/** SHA-256 (hex) over the path and content of every compiled input of the project at `root`. */
export function sourceFingerprint(root?: string): string;
/** Whether `root/dist` holds a build of the sources as they are now. */
export function distState(root?: string): { fresh: true } | { fresh: false; reason: string };
/** Compiles the project at `root` to `root/dist` (tsc -p tsconfig.build.json). @throws Error when tsc fails */
export function buildDist(root?: string): void;
