import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { encodeWavPcm16 } from '../audio/wav.ts';
import type { BuildConfig } from '../config.ts';
import {
  classifyProfile,
  mainThreadCpuSeconds,
  stepOfFrame,
  synthesizedSeconds,
  type CpuProfile,
} from './build-saturation.bench.ts';

describe('local cost by step from a CPU profile', () => {
  it('names the step of a frame by its file, and leaves built-ins and WebAssembly to their caller', () => {
    expect(stepOfFrame('resample', 'file:///x/pipeline/audio/raw-audio.ts')).toBe('resample');
    // the resampler's own module: every function in it, the SpeexDSP WebAssembly it calls included (below)
    expect(stepOfFrame('resample', 'file:///x/pipeline/audio/resample.ts')).toBe('resample');
    expect(stepOfFrame('speexResampler', 'file:///x/pipeline/audio/resample.ts')).toBe('resample');
    expect(stepOfFrame('master', 'file:///x/pipeline/audio/resample-pool.ts')).toBe('resample');
    expect(stepOfFrame('placeOnTrackInPlace', 'file:///x/pipeline/audio/raw-audio.ts')).toBe('render');
    expect(stepOfFrame('encodeWavPcm16', 'file:///x/pipeline/audio/raw-audio.ts')).toBe('render');
    expect(stepOfFrame('decodeWav', 'file:///x/pipeline/audio/raw-audio.ts')).toBe('decode');
    expect(stepOfFrame('detectSpeechSegments', 'file:///x/pipeline/audio/speech-regions.ts')).toBe('detection');
    expect(stepOfFrame('spreadWordsOverSegments', 'file:///x/pipeline/services/tts/word-timing.ts')).toBe('timing');
    expect(stepOfFrame('composeTimeline', 'file:///x/stages/place-timeline.ts')).toBe('placement');
    expect(stepOfFrame('composeTimeline', 'file:///x/stages/place-timeline-compose.ts')).toBe('placement');
    expect(stepOfFrame('writeAtomic', 'file:///x/pipeline/storage/write-atomic.ts')).toBe('write');
    expect(stepOfFrame('(garbage collector)', '')).toBe('garbage collection');
    expect(stepOfFrame('wasm-function[12]', 'wasm://wasm/0001ce4a')).toBeNull();
    expect(stepOfFrame('set', '')).toBeNull();
    expect(stepOfFrame('encodeWavPcm16', 'file:///x/pipeline/audio/wav.ts')).toBe('render');
    expect(stepOfFrame('decodePcm16LittleEndian', 'file:///x/pipeline/audio/wav.ts')).toBe('decode');
    expect(stepOfFrame('interpolatedPeaks', 'file:///x/pipeline/audio/true-peak-limiter.ts')).toBe('true-peak limiter');
  });

  it('names compiled frames (dist/, what npm run bench runs) by the source file they were compiled from', () => {
    expect(stepOfFrame('placeOnTrackInPlace', 'file:///x/dist/pipeline/audio/raw-audio.js')).toBe('render');
    expect(stepOfFrame('detectSpeechSegments', 'file:///x/dist/pipeline/audio/speech-regions.js')).toBe('detection');
    expect(stepOfFrame('composeTimeline', 'file:///x/dist/stages/place-timeline.js')).toBe('placement');
    expect(stepOfFrame('limitTruePeakInPlace', 'file:///x/dist/pipeline/audio/true-peak-limiter.js')).toBe(
      'true-peak limiter',
    );
    expect(stepOfFrame('resample', 'file:///x/dist/pipeline/audio/resample.js')).toBe('resample');
  });

  it('sums self time per step, a frame without a step counting for its nearest ancestor with one', () => {
    const frame = (functionName: string, url: string) => ({ functionName, url });
    const profile: CpuProfile = {
      nodes: [
        { id: 1, callFrame: frame('(root)', ''), children: [2, 5, 6] },
        { id: 2, callFrame: frame('resample', 'file:///x/pipeline/audio/resample.ts'), children: [3] },
        { id: 3, callFrame: frame('js-to-wasm::i', ''), children: [4] },
        { id: 4, callFrame: frame('wasm-function[20]', 'wasm://wasm/0001ce4a') },
        { id: 5, callFrame: frame('(idle)', '') },
        { id: 6, callFrame: frame('placeTimeline', 'file:///x/stages/place-timeline.ts') },
      ],
      samples: [4, 4, 2, 5, 6, 4],
      timeDeltas: [1000, 1000, 500, 3000, 2000, 1000],
    };
    const steps = classifyProfile(profile);
    expect(steps.resample).toBeCloseTo(0.0035, 9);
    expect(steps.idle).toBeCloseTo(0.003, 9);
    expect(steps.placement).toBeCloseTo(0.002, 9);
  });

  it("counts the full-band master's subtree (its mix and WAV encoding) as one step, the limiter under it as the limiter", () => {
    const frame = (functionName: string, url: string) => ({ functionName, url });
    const profile: CpuProfile = {
      nodes: [
        { id: 1, callFrame: frame('(root)', ''), children: [2] },
        { id: 2, callFrame: frame('composeTimeline', 'file:///x/stages/place-timeline.ts'), children: [3, 5, 6] },
        { id: 3, callFrame: frame('composeFullBand', 'file:///x/stages/place-timeline.ts'), children: [4] },
        { id: 4, callFrame: frame('placeOnTrackInPlace', 'file:///x/pipeline/audio/raw-audio.ts') },
        { id: 5, callFrame: frame('placeOnTrackInPlace', 'file:///x/pipeline/audio/raw-audio.ts') },
        { id: 6, callFrame: frame('limitTruePeakInPlace', 'file:///x/pipeline/audio/true-peak-limiter.ts') },
      ],
      samples: [4, 4, 3, 5, 6, 2],
      timeDeltas: [1000, 1000, 1000, 1000, 4000, 500],
    };
    const steps = classifyProfile(profile);
    expect(steps['full-band master']).toBeCloseTo(0.003, 9);
    expect(steps.render).toBeCloseTo(0.001, 9);
    expect(steps['true-peak limiter']).toBeCloseTo(0.004, 9);
    expect(steps.placement).toBeCloseTo(0.0005, 9);
  });

  it('counts the synthesized audio of a cache entry once, not its full-band copy', async () => {
    const scratch = await mkdtemp(path.join(os.tmpdir(), 'duplexsynth-synthesized-seconds-'));
    try {
      const folder = path.join(scratch, 'synthesize-speech', 'ab');
      await mkdir(folder, { recursive: true });
      const clip = encodeWavPcm16({ channels: [new Float32Array(16000 * 1.5)], sampleRate: 16000 });
      const fullBand = encodeWavPcm16({ channels: [new Float32Array(24000 * 1.5)], sampleRate: 24000 });
      await writeFile(path.join(folder, 'with-full-band.wav'), Buffer.concat([clip, fullBand]));
      await writeFile(path.join(folder, 'alone.wav'), clip);
      const config = { output: { cacheDirectory: scratch }, audio: { sampleRate: 16000 } } as unknown as BuildConfig;
      expect(await synthesizedSeconds(config)).toBeCloseTo(3, 9);
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
  });

  it('reads the main thread CPU time on Linux', () => {
    const seconds = mainThreadCpuSeconds();
    if (process.platform === 'linux') expect(seconds).toBeGreaterThan(0);
    else expect(seconds).toBeNull();
  });
});
