/**
 * Compiles the project's hand-written WebAssembly text (the files of {@link WAT_SOURCES}) to the binary
 * modules the code loads (`.wasm` beside each), with WABT's wat2wasm (the `wabt` package, the WebAssembly
 * project's own toolkit built for JavaScript; a development dependency: the binaries are committed, so
 * a build or an install without development dependencies needs no compiler).
 *
 *     npx tsx scripts/build-wasm.ts            # write every .wasm
 *     npx tsx scripts/build-wasm.ts --check    # write nothing; exit 1 if a .wasm differs from its .wat
 *
 * The output is deterministic (no names section, no timestamps), so `--check` and the tests compile
 * each file again byte for byte.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import initWabt from 'wabt';
import { packageFile } from '../pipeline/storage/package-files.ts';

/** The WebAssembly text sources, relative to the project root (a new one is added here, and so built and checked). */
export const WAT_SOURCES: readonly string[] = ['pipeline/audio/audio-kernels.wat'];

/**
 * The binary module of a WebAssembly text file (SIMD enabled; no debug names).
 * @param file path of the `.wat`
 * @returns the `.wasm` bytes
 * @throws Error naming the file and line when the text does not parse or validate
 */
export async function compileWat(file: string): Promise<Uint8Array> {
  const wabt = await initWabt();
  const module = wabt.parseWat(file, readFileSync(file, 'utf8'), { simd: true, sat_float_to_int: true });
  try {
    module.validate();
    return Uint8Array.from(module.toBinary({ log: false, write_debug_names: false }).buffer);
  } finally {
    module.destroy();
  }
}

/** The `.wasm` path of a `.wat` path. */
export function binaryPathOf(watFile: string): string {
  return watFile.replace(/\.wat$/, '.wasm');
}

async function main(): Promise<void> {
  const check = process.argv.includes('--check');
  let stale = 0;
  for (const source of WAT_SOURCES) {
    const file = packageFile(source);
    const binary = await compileWat(file);
    const target = binaryPathOf(file);
    if (existsSync(target) && readFileSync(target).equals(binary)) continue;
    if (check) {
      stale += 1;
      console.error(
        `${path.relative(packageFile(), target)}: differs from ${source}; run npx tsx scripts/build-wasm.ts`,
      );
    } else {
      writeFileSync(target, binary);
      console.log(`wrote ${path.relative(packageFile(), target)} (${binary.byteLength} bytes)`);
    }
  }
  if (stale > 0) process.exitCode = 1;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await main();
