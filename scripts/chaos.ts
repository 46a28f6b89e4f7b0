/**
 * The chaos run (a build killed at random moments must still commit the reference's bytes), for anyone
 * to rerun: `npm run chaos -- [--runs N] [--seed S] [--limit L] [--section kills|signals] [--keep]`
 * (`--section`: only the kills, steps 2 and 3, or only the signals, step 4; both by default). It runs
 * the compiled command, so dist/ is compiled first when it is missing or stale.
 *
 * 1. A reference build: `duplexsynth build` (offline English, rules rewrite, espeak-ng) of the first L
 *    real TopiOCQA dev conversations, with its own cold cache; its wall time is measured.
 * 2. N interrupted builds into another output folder, sharing a second cold cache: each is killed with
 *    SIGKILL at a moment drawn from a seeded random stream (uniform over the reference's wall time,
 *    so kills land in ingest, synthesis, writing, the commit's renames and the report alike).
 * 3. A last build runs to its end; its output folder must be byte-identical (every file's sha256) to
 *    the reference's, and no `.partial`, `.previous` or temporary file may be left.
 *
 * 4. The signal section (./chaos-signals.ts): SIGTERM at seeded random moments to build, export,
 *    report and score; each output must be the old one or the new one, with one line each time.
 *
 * Prints one line per kill and the verdict; exit code 0 when identical, 1 otherwise. Same seed, same
 * kill moments (the moments a kill hits depend on the machine's speed, so a run is a sample).
 */
import { execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { PROJECT_ROOT, sharedDirectory } from '../pipeline/config.ts';
import { dialogueRandomStream } from '../pipeline/model/random.ts';
import { runSignalChaos } from './chaos-signals.ts';

const CLI = path.join(PROJECT_ROOT, 'scripts', 'duplexsynth.js'); // the compiled command, as users run it

/** sha256 of every file under `directory` by relative path. */
async function hashTree(directory: string): Promise<Map<string, string>> {
  const result = new Map<string, string>();
  for (const entry of await readdir(directory, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const file = path.join(entry.parentPath, entry.name);
    result.set(
      path.relative(directory, file),
      createHash('sha256')
        .update(await readFile(file))
        .digest('hex'),
    );
  }
  return result;
}

/** Run `duplexsynth build --config FILE --quiet`; with `killAfterSeconds`, SIGKILL it then. */
function build(
  config: string,
  killAfterSeconds?: number,
): Promise<{ code: number | null; signal: NodeJS.Signals | null; seconds: number; stderr: string }> {
  const started = performance.now();
  const child = spawn(process.execPath, [CLI, 'build', '--config', config, '--quiet'], {
    cwd: PROJECT_ROOT,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const timer =
    killAfterSeconds === undefined ? undefined : setTimeout(() => child.kill('SIGKILL'), killAfterSeconds * 1000);
  return new Promise((resolve) =>
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, seconds: (performance.now() - started) / 1000, stderr });
    }),
  );
}

async function writeConfig(
  directory: string,
  name: string,
  limit: number,
  out: string,
  cache: string,
): Promise<string> {
  const file = path.join(directory, `${name}.yaml`);
  await writeFile(
    file,
    JSON.stringify({
      name: 'chaos',
      seed: 21,
      languages: ['en'],
      corpus: { path: path.join(sharedDirectory(), 'corpora', 'topiocqa', 'topiocqa_dev.json'), limit },
      output: { directory: out, cacheDirectory: cache },
      llm: { rewrite: { backend: 'rules' }, translate: { backend: 'none' } },
    }),
  );
  return file;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      runs: { type: 'string', default: '10' },
      seed: { type: 'string', default: '21' },
      limit: { type: 'string', default: '2' },
      keep: { type: 'boolean', default: false },
      section: { type: 'string' },
    },
  });
  const section = values.section;
  if (section !== undefined && section !== 'kills' && section !== 'signals')
    throw new Error(`--section ${section}: kills or signals`);
  // the command refuses a dist/ that is not a build of the sources as they are now
  execFileSync(process.execPath, [path.join(PROJECT_ROOT, 'scripts', 'build-dist.js'), '--if-stale'], {
    stdio: 'inherit',
  });
  const runs = Number(values.runs);
  const seed = Number(values.seed);
  const limit = Number(values.limit);
  const scratch = await mkdtemp(path.join(os.tmpdir(), 'duplexsynth-chaos-'));
  try {
    const referenceOut = path.join(scratch, 'reference', 'out');
    const reference = await build(
      await writeConfig(scratch, 'reference', limit, referenceOut, path.join(scratch, 'reference', 'cache')),
    );
    if (reference.code !== 0)
      throw new Error(
        `the reference build failed (exit ${reference.code}): ${reference.stderr.trim().split('\n').at(-1)}`,
      );
    console.log(`reference: ${limit} dialogues in ${reference.seconds.toFixed(1)} s`);
    const out = path.join(scratch, 'chaos', 'out');
    const config = await writeConfig(scratch, 'chaos', limit, out, path.join(scratch, 'chaos', 'cache'));
    if (section !== 'signals') await killRuns(config, out, referenceOut, reference.seconds, runs, seed);
    if (section === 'kills') return;
    // SIGTERM at random moments to build, export, report and score (./chaos-signals.ts)
    const problems = await runSignalChaos({
      cli: CLI,
      scratch,
      referenceOut,
      buildConfig: config,
      buildOut: out,
      runs,
      seed,
      hashTree,
    });
    console.log(
      problems === 0 ? `signals: every stop as it should be (seed ${seed})` : `signals: ${problems} problems`,
    );
    if (problems > 0) process.exitCode = 1;
  } finally {
    if (!values.keep) await rm(scratch, { recursive: true, force: true });
    else console.log(`kept: ${scratch}`);
  }
}

/**
 * Steps 2 and 3 (see the file header): `runs` builds into `out` killed with SIGKILL at seeded moments
 * uniform over `referenceSeconds`, then one to its end compared with `referenceOut`. Sets the exit code 1
 * on a difference or a leftover.
 * @throws Error when the last build fails
 */
async function killRuns(
  config: string,
  out: string,
  referenceOut: string,
  referenceSeconds: number,
  runs: number,
  seed: number,
): Promise<void> {
  const random = dialogueRandomStream(seed, 'chaos', 'kill-moments');
  for (let run = 1; run <= runs; run++) {
    const moment = random.uniform() * referenceSeconds;
    const result = await build(config, moment);
    const outcome = result.signal === 'SIGKILL' ? 'killed' : `ended first (exit ${result.code})`;
    console.log(`run ${run}/${runs}: kill at ${moment.toFixed(2)} s: ${outcome}`);
  }
  const last = await build(config);
  if (last.code !== 0)
    throw new Error(`the last build failed (exit ${last.code}): ${last.stderr.trim().split('\n').at(-1)}`);
  const [expected, actual] = [await hashTree(referenceOut), await hashTree(out)];
  const differing = [...new Set([...expected.keys(), ...actual.keys()])]
    .filter((file) => expected.get(file) !== actual.get(file))
    .sort();
  const leftovers = [...actual.keys()].filter((file) => /\.partial|\.previous|\.tmp|\.duplexsynth-/.test(file));
  if (differing.length === 0 && leftovers.length === 0) {
    console.log(
      `byte-identical: ${actual.size} files after ${runs} kills (seed ${seed}); resumed in ${last.seconds.toFixed(1)} s`,
    );
  } else {
    for (const file of differing) console.log(`differs: ${file}`);
    for (const file of leftovers) console.log(`left behind: ${file}`);
    process.exitCode = 1;
  }
}

await main();
