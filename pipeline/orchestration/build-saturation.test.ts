import { describe, expect, it } from 'vitest';
import { classifyProfile, mainThreadCpuSeconds, stepOfFrame, type CpuProfile } from './build-saturation.bench.ts';

describe('local cost by step from a CPU profile', () => {
  it('names the step of a frame by its file, and leaves built-ins and WebAssembly to their caller', () => {
    expect(stepOfFrame('resample', 'file:///x/pipeline/audio/raw-audio.ts')).toBe('resample');
    expect(stepOfFrame('encodeWavPcm16', 'file:///x/pipeline/audio/raw-audio.ts')).toBe('render');
    expect(stepOfFrame('decodeWav', 'file:///x/pipeline/audio/raw-audio.ts')).toBe('decode');
    expect(stepOfFrame('detectSpeechSegments', 'file:///x/pipeline/audio/speech-regions.ts')).toBe('detection');
    expect(stepOfFrame('spreadWordsOverSegments', 'file:///x/pipeline/services/tts/word-timing.ts')).toBe('timing');
    expect(stepOfFrame('composeTimeline', 'file:///x/stages/place-timeline.ts')).toBe('placement');
    expect(stepOfFrame('writeAtomic', 'file:///x/pipeline/storage/write-atomic.ts')).toBe('write');
    expect(stepOfFrame('(garbage collector)', '')).toBe('garbage collection');
    expect(stepOfFrame('wasm-function[12]', 'wasm://wasm/0001ce4a')).toBeNull();
    expect(stepOfFrame('set', '')).toBeNull();
  });

  it('sums self time per step, a frame without a step counting for its nearest ancestor with one', () => {
    const frame = (functionName: string, url: string) => ({ functionName, url });
    const profile: CpuProfile = {
      nodes: [
        { id: 1, callFrame: frame('(root)', ''), children: [2, 5, 6] },
        { id: 2, callFrame: frame('resample', 'file:///x/pipeline/audio/raw-audio.ts'), children: [3] },
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

  it('reads the main thread CPU time on Linux', () => {
    const seconds = mainThreadCpuSeconds();
    if (process.platform === 'linux') expect(seconds).toBeGreaterThan(0);
    else expect(seconds).toBeNull();
  });
});
