/**
 * The bench's `build` section: a cold and a cached English build of the real corpus with the offline
 * engines, time per stage, against the bare espeak-ng engine on the same texts; the cold build's
 * main-thread CPU by step; quality scoring of the written datasets against the bare DNSMOS loop.
 */
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { decodeWav } from '../pipeline/audio/wav.ts';
import { DEFAULT_CONFIG_FILE, loadConfigFile, sharedDirectory, type BuildConfig } from '../pipeline/config.ts';
import {
  formatStepTable,
  profileMainThread,
  synthesizedSeconds,
} from '../pipeline/orchestration/build-saturation.bench.ts';
import { runBuild, type BuildReport } from '../pipeline/orchestration/build.ts';
import { BARGE_IN_SUFFIX } from '../pipeline/orchestration/dataset-output.ts';
import { readDatasetFolder } from '../pipeline/quality/dataset-files.ts';
import { createSpeechSynthesizer, DEFAULT_VOICES } from '../pipeline/services/tts/synthesizer-registry.ts';
import { scoreDatasetQuality } from '../stages/score-quality.ts';
import { formatMeasurement, formatRow, measure, ratio, totalCpuSeconds, type Measurement } from './bench-measure.ts';
import type { BenchOptions, SectionFindings } from './bench-section.ts';

/** The build benchmark (cold and cached build, bare-engine baseline) as Markdown. */
export async function buildSection(options: BenchOptions, findings: SectionFindings): Promise<string> {
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
      datasets: { ...base.datasets, en: 'topiocqa' },
      output: { directory: path.join(scratch, 'out'), cacheDirectory: path.join(scratch, 'cache') },
      // quality scoring is timed on its own below, so the build's time is synthesis and writing
      quality: { ...base.quality, enabled: false },
    };
    const memoryBefore = process.memoryUsage().rss;
    const { value: profiled, measurement: coldTime } = await measure(() => profileMainThread(() => runBuild(config)));
    const cold = profiled.value;
    const synthesized = await synthesizedSeconds(config);
    const { value: warm, measurement: warmTime } = await measure(() => runBuild(config));
    // Quality scoring of the written datasets as a build scores them (the base and its barge-in
    // variant; DNSMOS, signal checks, ffmpeg loudness), fresh cache.
    const datasetDirectories = ['topiocqa', `topiocqa${BARGE_IN_SUFFIX}`].map((name) =>
      path.join(config.output.directory, 'data', 'en', 'task', name),
    );
    const { value: quality, measurement: qualityTime } = await measure(() =>
      profileMainThread(async () => {
        const reports = [];
        for (const directory of datasetDirectories)
          reports.push(
            await scoreDatasetQuality(directory, {
              cacheDirectory: path.join(scratch, 'quality-cache'),
              dnsmos: base.quality.dnsmos,
            }),
          );
        return { dialogues: reports.flatMap((report) => report.dialogues) };
      }),
    );
    const scoredSeconds = quality.value.dialogues.reduce((sum, dialogue) => sum + dialogue.durationSeconds, 0);
    const scoredChannelSeconds = quality.value.dialogues.reduce(
      (sum, dialogue) =>
        sum + dialogue.durationSeconds * dialogue.dnsmos.channels.filter((channel) => channel.scores !== null).length,
      0,
    );
    // Baseline of scoring: the bare DNSMOS loop (model runs alone) on the same recordings.
    const recordings = [];
    for (const directory of datasetDirectories)
      for (const dialogue of (await readDatasetFolder(directory)).dialogues)
        recordings.push(decodeWav(await readFile(dialogue.audioFile), dialogue.audioFile));
    const { bareDnsmosLoop } = await import('../stages/chat-scoring.bench.ts');
    const bareScoring = await bareDnsmosLoop(recordings, path.join(sharedDirectory(), 'models', 'dnsmos'));
    const scoringCpu = totalCpuSeconds(qualityTime);
    findings.headlines.push(
      `quality scoring CPU (this process + ffmpeg) / bare DNSMOS loop CPU on the same ${recordings.length} recordings (base and barge-in variant): ${ratio(scoringCpu, bareScoring.cpuSeconds)} (goal: at most 1.10); ${scoringCpu.toFixed(1)} s against ${bareScoring.cpuSeconds.toFixed(1)} s`,
    );

    // Baseline: the bare engine on the texts the build synthesized (same process-spawn path, no cache,
    // no resampling or analysis).
    const synthesizer = await createSpeechSynthesizer('espeak-ng');
    const texts = await synthesizedTexts(cold);
    const { measurement: baseline } = await measure(async () => {
      for (const [role, text] of texts)
        await synthesizer.synthesize({ text, language: 'en', voice: DEFAULT_VOICES.en!.voices[role] });
    });

    const children = (time: Measurement) =>
      time.cpuChildrenSeconds === null ? 'not measured' : time.cpuChildrenSeconds.toFixed(2);
    const cpuLines =
      baseline.cpuChildrenSeconds === null
        ? [
            `- CPU: child processes are not measurable here (no /proc/self/stat); this process: cold build ${coldTime.cpuSelfSeconds.toFixed(2)} s, baseline ${baseline.cpuSelfSeconds.toFixed(2)} s.`,
          ]
        : [
            `- baseline CPU: ${totalCpuSeconds(baseline).toFixed(2)} s (${baseline.cpuChildrenSeconds.toFixed(2)} s in the espeak-ng processes, ${baseline.cpuSelfSeconds.toFixed(2)} s in this process)`,
            `- cold build CPU / baseline CPU = ${ratio(totalCpuSeconds(coldTime), totalCpuSeconds(baseline))}; (cold - cached build) CPU / baseline CPU = ${ratio(totalCpuSeconds(coldTime) - totalCpuSeconds(warmTime), totalCpuSeconds(baseline))}; ` +
              `child-process CPU, cold build / baseline = ${ratio(coldTime.cpuChildrenSeconds ?? 0, baseline.cpuChildrenSeconds)} (the build's children are the engine processes)`,
          ];
    findings.figures.push(
      {
        measure: `cold build of ${options.limit} English dialogues (quality scoring off): wall s`,
        value: coldTime.wallSeconds.toFixed(2),
        ratio: `${ratio(coldTime.wallSeconds, baseline.wallSeconds)} (/ bare espeak-ng on the same texts, wall)`,
      },
      {
        measure: 'cold build: CPU s (this process + child processes)',
        value: totalCpuSeconds(coldTime).toFixed(2),
        ...(baseline.cpuChildrenSeconds === null
          ? {}
          : { ratio: `${ratio(totalCpuSeconds(coldTime), totalCpuSeconds(baseline))} (/ bare espeak-ng, CPU)` }),
      },
      {
        measure: 'cold build: dialogue audio s per wall s',
        value: ratio(cold.audioSeconds, coldTime.wallSeconds, 1),
      },
      {
        measure: 'cached build: wall s',
        value: warmTime.wallSeconds.toFixed(2),
        ratio: `${ratio(warmTime.wallSeconds, coldTime.wallSeconds, 3)} (/ cold build, wall)`,
      },
      {
        measure: `quality scoring of the ${recordings.length} recordings: CPU s (this process + ffmpeg)`,
        value: scoringCpu.toFixed(1),
        ratio: `${ratio(scoringCpu, bareScoring.cpuSeconds)} (/ bare DNSMOS loop, CPU)`,
      },
    );
    return [
      `${options.limit} English dialogues of ${path.basename(corpus)}: ${cold.datasets[0]?.dialogues ?? 0} dialogues, ${cold.audioSeconds.toFixed(1)} s of dialogue audio, ${texts.length} utterances synthesized.`,
      '',
      'Stage times are wall clock summed over dialogues; synthesis runs up to 4 dialogues at once (the one being placed and 3 ahead), so its sum exceeds its share of the wall clock.',
      '',
      formatRow(['stage', 'cold build s', 'cached build s']),
      '|---|---:|---:|',
      ...Object.keys(cold.stageSeconds).map((stage) =>
        formatRow([stage, cold.stageSeconds[stage]!.toFixed(2), (warm.stageSeconds[stage] ?? 0).toFixed(2)]),
      ),
      formatRow(['**total (wall clock)**', coldTime.wallSeconds.toFixed(2), warmTime.wallSeconds.toFixed(2)]),
      formatRow(['CPU, this process', coldTime.cpuSelfSeconds.toFixed(2), warmTime.cpuSelfSeconds.toFixed(2)]),
      formatRow(['CPU, child processes', children(coldTime), children(warmTime)]),
      formatRow([
        'load average (1 min) start → end',
        `${coldTime.loadAverageStart[0]!.toFixed(2)} → ${coldTime.loadAverageEnd[0]!.toFixed(2)}`,
        `${warmTime.loadAverageStart[0]!.toFixed(2)} → ${warmTime.loadAverageEnd[0]!.toFixed(2)}`,
      ]),
      '',
      `- audio seconds produced per wall-clock second: cold ${ratio(cold.audioSeconds, coldTime.wallSeconds, 1)}, cached ${ratio(warm.audioSeconds, warmTime.wallSeconds, 1)}; per CPU second (this process + children): cold ${ratio(cold.audioSeconds, totalCpuSeconds(coldTime), 1)}, cached ${ratio(warm.audioSeconds, totalCpuSeconds(warmTime), 1)}`,
      `- baseline, bare espeak-ng on the same ${texts.length} texts, one at a time: ${formatMeasurement(baseline)}`,
      `- cold build (without quality scoring) / baseline, wall clock = ${ratio(coldTime.wallSeconds, baseline.wallSeconds)} (the build runs ${config.synthesis.concurrency} engine processes at once and adds resampling, speech detection, word timing, placement and writing of both variants)`,
      ...cpuLines,
      `- cached build / cold build = ${ratio(warmTime.wallSeconds, coldTime.wallSeconds, 3)} wall, ${ratio(totalCpuSeconds(warmTime), totalCpuSeconds(coldTime), 3)} CPU; synthesis cache on the cached build: ${JSON.stringify(warm.cache['synthesize-speech'] ?? {})}`,
      `- resident memory: ${(memoryBefore / 2 ** 20).toFixed(0)} MiB before, ${(process.memoryUsage().rss / 2 ** 20).toFixed(0)} MiB after`,
      '',
      `Cold build, main-thread CPU by step (${profiled.mainThreadCpuSeconds === null ? 'profile seconds' : `${profiled.mainThreadCpuSeconds.toFixed(2)} s`}; the engine processes and ffmpeg are child processes, not in it), per second of the ${synthesized.toFixed(0)} s of synthesized audio:`,
      '',
      formatStepTable(profiled.steps, synthesized),
      '',
      `Quality scoring of the ${quality.value.dialogues.length} dialogues (${scoredSeconds.toFixed(0)} s of dialogue audio, ${scoredChannelSeconds.toFixed(0)} s of channels with speech scored by DNSMOS; fresh cache; ${base.quality.dnsmos.concurrentDialogues} dialogues at once, ${base.quality.dnsmos.batchWindows} windows per model run): ${formatMeasurement(qualityTime)}; ` +
        `${ratio(qualityTime.wallSeconds * 1000, scoredChannelSeconds, 1)} ms wall per channel-second scored. ` +
        `Baseline, the bare DNSMOS loop (stages/chat-scoring.bench.ts \`bareDnsmosLoop\`: the two models' runs alone, one window at a time) on the same ${recordings.length} recordings: ${bareScoring.windows} windows, ${bareScoring.cpuSeconds.toFixed(2)} s CPU, ${bareScoring.wallSeconds.toFixed(2)} s wall; ` +
        `scoring CPU (this process + children) / bare loop CPU = ${ratio(scoringCpu, bareScoring.cpuSeconds)}. Main-thread CPU by step (onnxruntime's calling thread computes too, so DNSMOS shows here):`,
      '',
      formatStepTable(quality.steps, scoredChannelSeconds)
        .replace('ms per audio s', 'ms per channel-second')
        .replace('audio s per CPU s', 'channel-seconds per CPU s'),
    ].join('\n');
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/** The role and synthesized text of every utterance of the build's English TopiOCQA dataset, by metadata file name. */
async function synthesizedTexts(report: BuildReport): Promise<['user' | 'system', string][]> {
  const directory = path.join(report.outputDirectory, 'data', 'en', 'task', 'topiocqa', 'metadata');
  const texts: ['user' | 'system', string][] = [];
  for (const file of (await readdir(directory)).sort()) {
    const metadata = JSON.parse(await readFile(path.join(directory, file), 'utf8')) as {
      utterances: { role: 'user' | 'system'; text: { synthesized: string } }[];
    };
    for (const utterance of metadata.utterances) texts.push([utterance.role, utterance.text.synthesized]);
  }
  return texts;
}
