/**
 * `npm run bench`: builds the first N (default 20) English dialogues of the real TopiOCQA dev set with
 * a fresh cache and reports the time per stage, audio seconds produced per wall-clock second, and, as a
 * baseline measured in the same run, the bare TTS engine on the same texts (the synthesize stage's
 * time as a ratio to it). A second, cached build measures the cache's effect. No wall-clock limits are
 * asserted anywhere: these are measurements.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { DEFAULT_CONFIG_FILE, loadConfigFile, sharedDirectory, type BuildConfig } from '../pipeline/config.ts';
import { runBuild, type BuildReport } from '../pipeline/run/build.ts';
import { createSpeechSynthesizer } from '../pipeline/services/tts/synthesizer-registry.ts';
import { DEFAULT_VOICES } from '../pipeline/services/tts/synthesizer-registry.ts';

function formatRow(cells: (string | number)[]): string {
  return `| ${cells.join(' | ')} |`;
}

/** Run the benchmark and print a Markdown report to stdout. */
export async function runBenchmarks(options: { corpus?: string; limit: number }): Promise<void> {
  const corpus = options.corpus ?? path.join(sharedDirectory(), 'corpora', 'topiocqa', 'topiocqa_dev.json');
  const scratch = await mkdtemp(path.join(os.tmpdir(), 'duplexsynth-bench-'));
  try {
    const base = await loadConfigFile(DEFAULT_CONFIG_FILE);
    const config: BuildConfig = {
      ...base,
      name: 'bench',
      languages: ['en'],
      corpus: { ...base.corpus, path: corpus, limit: options.limit },
      llm: { rewrite: { backend: 'rules' }, translate: { backend: 'none' } },
      datasets: { en: 'topiocqa' },
      output: { directory: path.join(scratch, 'out'), cacheDirectory: path.join(scratch, 'cache') },
    };
    const memoryBefore = process.memoryUsage().rss;
    const started = performance.now();
    const cold = await runBuild(config);
    const coldSeconds = (performance.now() - started) / 1000;
    const warmStarted = performance.now();
    const warm = await runBuild(config);
    const warmSeconds = (performance.now() - warmStarted) / 1000;

    // Baseline: the bare engine on the texts the build synthesized (same process-spawn path, no cache,
    // no resampling or analysis).
    const synthesizer = await createSpeechSynthesizer('espeak-ng');
    const texts = await synthesizedTexts(cold);
    const baselineStarted = performance.now();
    for (const [role, text] of texts) await synthesizer.synthesize({ text, language: 'en', voice: DEFAULT_VOICES.en.voices[role] });
    const baselineSeconds = (performance.now() - baselineStarted) / 1000;

    const lines = [
      `# duplexsynth benchmark: ${options.limit} English dialogues of ${path.basename(corpus)}`,
      '',
      `${cold.datasets[0]?.dialogues ?? 0} dialogues, ${cold.audioSeconds.toFixed(1)} s of dialogue audio, ${texts.length} utterances synthesized; ${os.cpus().length} cores.`,
      '',
      formatRow(['stage', 'cold build s', 'cached build s']),
      '|---|---:|---:|',
      ...Object.keys(cold.stageSeconds).map((stage) => formatRow([stage, cold.stageSeconds[stage]!.toFixed(2), warm.stageSeconds[stage]!.toFixed(2)])),
      formatRow(['**total (wall clock)**', coldSeconds.toFixed(2), warmSeconds.toFixed(2)]),
      '',
      `- audio seconds produced per wall-clock second: cold ${(cold.audioSeconds / coldSeconds).toFixed(1)}, cached ${(warm.audioSeconds / warmSeconds).toFixed(1)}`,
      `- baseline, bare espeak-ng on the same ${texts.length} texts, one at a time: ${baselineSeconds.toFixed(2)} s; synthesize stage / baseline = ${(cold.stageSeconds['synthesize-speech']! / baselineSeconds).toFixed(2)} (the stage runs ${config.synthesis.concurrency} engine processes at once and adds resampling, speech detection and word timing)`,
      `- cached build / cold build = ${(warmSeconds / coldSeconds).toFixed(3)}; synthesis cache on the cached build: ${JSON.stringify(warm.cache['synthesize-speech'] ?? {})}`,
      `- resident memory: ${(memoryBefore / 2 ** 20).toFixed(0)} MiB before, ${(process.memoryUsage().rss / 2 ** 20).toFixed(0)} MiB after`,
    ];
    console.log(lines.join('\n'));
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

async function synthesizedTexts(report: BuildReport): Promise<['user' | 'system', string][]> {
  const { readFile, readdir } = await import('node:fs/promises');
  const directory = path.join(report.outputDirectory, 'data', 'en', 'task', 'topiocqa', 'metadata');
  const texts: ['user' | 'system', string][] = [];
  for (const file of (await readdir(directory)).sort()) {
    const metadata = JSON.parse(await readFile(path.join(directory, file), 'utf8')) as { utterances: { role: 'user' | 'system'; text: { synthesized: string } }[] };
    for (const utterance of metadata.utterances) texts.push([utterance.role, utterance.text.synthesized]);
  }
  return texts;
}
