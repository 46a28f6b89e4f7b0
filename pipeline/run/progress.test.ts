/**
 * The progress displays: plain lines when standard error is not a terminal, JSON lines with --json,
 * live bars (cli-progress) on a terminal, and the mode chosen from the options and the stream.
 */
import { describe, expect, it, vi } from 'vitest';
import { createProgressDisplay, progressModeFor, progressStagesFailedAt, type ProgressEvent } from './progress.ts';

function collector(isTTY: boolean) {
  const chunks: string[] = [];
  return { stream: { isTTY, columns: 120, write: (text: string) => chunks.push(text), on: () => {}, removeListener: () => {} }, text: () => chunks.join('') };
}

const events: ProgressEvent[] = [
  { type: 'stage-start', language: 'en', stage: 'synthesize-speech', total: 3 },
  { type: 'item', language: 'en', stage: 'synthesize-speech', id: 'a', status: 'cached' },
  { type: 'item', language: 'en', stage: 'synthesize-speech', id: 'b', status: 'failed', reason: 'espeak-ng: missing' },
  { type: 'item', language: 'en', stage: 'synthesize-speech', id: 'c', status: 'done' },
];

describe('progressModeFor', () => {
  it('gives bars on a terminal, lines elsewhere, json or quiet when asked', () => {
    expect(progressModeFor({}, { isTTY: true, write: () => true })).toBe('bars');
    expect(progressModeFor({}, { isTTY: false, write: () => true })).toBe('lines');
    expect(progressModeFor({ json: true }, { isTTY: true, write: () => true })).toBe('json');
    expect(progressModeFor({ quiet: true }, { isTTY: true, write: () => true })).toBe('quiet');
  });
});

describe('createProgressDisplay', () => {
  it('lines: the log lines, the stage start and its end with counts, no terminal codes', () => {
    const output = collector(false);
    const display = createProgressDisplay('lines', output.stream);
    display.log('ingest: 3 conversations');
    for (const event of events) display.progress(event);
    display.stop();
    expect(output.text()).toBe('ingest: 3 conversations\n[en] synthesize-speech: 3 dialogues\n[en] synthesize-speech: 3/3 (1 cached, 1 failed)\n');
  });

  it('json: one JSON object per event and per log line', () => {
    const output = collector(false);
    const display = createProgressDisplay('json', output.stream);
    display.log('hello');
    for (const event of events) display.progress(event);
    const lines = output.text().trim().split('\n').map((line) => JSON.parse(line));
    expect(lines).toEqual([{ type: 'log', line: 'hello' }, ...events]);
  });

  it('bars: a bar per stage with counts, and failures printed above it', () => {
    // cli-progress redraws on a timer (10 frames per second): fake timers run its frames without waiting
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] });
    try {
      const output = collector(true);
      const display = createProgressDisplay('bars', output.stream as never);
      for (const event of events) display.progress(event);
      display.log('a log line');
      vi.advanceTimersByTime(250);
      display.stop();
      checkBars(output.text());
    } finally {
      vi.useRealTimers();
    }
  });

  function checkBars(text: string): void {
    expect(text).toContain('[en] synthesize-speech');
    expect(text).toContain('3/3 (1 cached, 1 failed)');
    expect(text).toContain('[en] synthesize-speech b: FAILED: espeak-ng: missing');
    expect(text).toContain('a log line');
  }
});

describe('progressStagesFailedAt', () => {
  it('names the stages a failed dialogue never reaches', () => {
    expect(progressStagesFailedAt('prepare-text')).toEqual(['synthesize-speech', 'render-dataset']);
    expect(progressStagesFailedAt('synthesize-speech')).toEqual(['synthesize-speech', 'render-dataset']);
    expect(progressStagesFailedAt('annotate-events')).toEqual(['render-dataset']);
  });
});
