/**
 * The progress displays: plain lines when standard error is not a terminal (or --plain), JSON lines
 * with --json (levels, a final summary), live bars (cli-progress) on a terminal, checked on the screen
 * of a real terminal emulator (xterm.js headless) fed what the bars wrote; and the mode chosen from
 * the options and the stream.
 */
import { Terminal } from '@xterm/headless';
import { describe, expect, it, vi } from 'vitest';
import {
  createProgressDisplay,
  failureOutcome,
  formatStageUnits,
  progressModeFor,
  progressStagesFailedAt,
  type ProgressDisplay,
  type ProgressEvent,
} from './progress.ts';

/** A fake standard error: what is written, a terminal or not, of `columns` width. */
function collector(isTTY: boolean, columns = 120) {
  const chunks: string[] = [];
  return {
    stream: { isTTY, columns, write: (text: string) => chunks.push(text), on: () => {}, removeListener: () => {} },
    text: () => chunks.join(''),
  };
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
    expect(progressModeFor({ plain: true }, { isTTY: true, write: () => true })).toBe('lines');
  });
});

describe('createProgressDisplay', () => {
  it('lines: the log lines, the stage start and its end with counts, no terminal codes', () => {
    const output = collector(false);
    const display = createProgressDisplay('lines', output.stream);
    display.log('ingest: 3 conversations');
    for (const event of events) display.progress(event);
    display.stop();
    expect(output.text()).toBe(
      'ingest: 3 conversations\n[en] synthesize-speech: 3 dialogues\n[en] synthesize-speech: 3/3 (1 cached, 1 failed)\n',
    );
  });

  it('lines: a stage counted in utterances ends with its utterances; a failure adds no line (the CLI prints its cause once, last)', () => {
    const output = collector(false);
    const display = createProgressDisplay('lines', output.stream);
    for (const event of utteranceEvents) display.progress(event);
    display.finish({ level: 'error', exitCode: 4, error: 'disk full', outputs: [] });
    expect(output.text()).toBe(
      '[en] synthesize-speech: 2 dialogues\n[en] synthesize-speech: 2/2, 9 utterances (0 cached, 0 failed)\n',
    );
  });

  it('json: one JSON object per event and per log line, each with a level, and a final summary event', () => {
    const output = collector(false);
    const display = createProgressDisplay('json', output.stream);
    display.log('hello');
    display.log('[en] 2/3 b: FAILED at synthesize-speech: espeak-ng: missing', 'warn');
    for (const event of events) display.progress(event);
    display.stop();
    display.finish({ level: 'warn', exitCode: 3, outputs: ['out/summary.md'], failedDialogues: 1 });
    const lines = output
      .text()
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(lines.slice(0, -1)).toEqual([
      { type: 'log', level: 'info', line: 'hello' },
      { type: 'log', level: 'warn', line: '[en] 2/3 b: FAILED at synthesize-speech: espeak-ng: missing' },
      ...events.map((event) => ({
        ...event,
        level: event.type === 'item' && event.status === 'failed' ? 'warn' : 'info',
      })),
    ]);
    expect(lines.at(-1)).toEqual({
      type: 'summary',
      level: 'warn',
      exitCode: 3,
      outputs: ['out/summary.md'],
      failedDialogues: 1,
      stages: [
        {
          language: 'en',
          stage: 'synthesize-speech',
          unit: 'utterances',
          total: 3,
          done: 1,
          cached: 1,
          failed: 1,
          unitsDone: 0,
          unitsTotal: null,
          unitsEstimated: false,
        },
      ],
    });
    // finish is said once
    display.finish({ level: 'info', exitCode: 0, outputs: [] });
    expect(output.text().trim().split('\n')).toHaveLength(lines.length);
  });

  it("json: a failed command's summary names the cause's first line and the outputs it kept before the failure", () => {
    const output = collector(false);
    const display = createProgressDisplay('json', output.stream);
    const kept = ['out/data/en/task/topiocqa', 'out/data/en/task/topiocqa_bargein'];
    display.finish(
      failureOutcome(new Error('out/data/ja/task/topiocqa_ja: no space left on the device\nat write'), 4, kept),
    );
    kept.push('changed after the failure');
    expect(JSON.parse(output.text())).toEqual({
      type: 'summary',
      level: 'error',
      exitCode: 4,
      error: 'out/data/ja/task/topiocqa_ja: no space left on the device',
      outputs: ['out/data/en/task/topiocqa', 'out/data/en/task/topiocqa_bargein'],
      stages: [],
    });
  });

  it('bars: a bar per stage with counts, and failures printed above it', () => {
    const output = collector(true);
    const text = drive(output, (display) => {
      for (const event of events) display.progress(event);
      display.log('a log line');
    });
    expect(text).toContain('[en] synthesize-speech');
    expect(text).toContain('3/3 dialogues (1 cached, 1 failed)');
    expect(text).toContain('[en] synthesize-speech b: FAILED: espeak-ng: missing');
    expect(text).toContain('a log line');
  });
});

describe('the bars on a terminal (xterm.js headless, 60 columns)', () => {
  const COLUMNS = 60;
  const shortWarning = `[en] quality: not done: ${'x'.repeat(COLUMNS)}`;
  const longWarning = `[en] 1/2 demo_topiocqa_0001: FAILED at synthesize-speech: ${'espeak-ng exited with code 1 and said a lot '.repeat(3).trim()}`;

  it('counts synthesis in utterances and scoring in channel-seconds, logs above the bars, whole and clean, bars fitted to the width', async () => {
    const output = collector(true, COLUMNS);
    drive(output, (display, frame) => {
      display.log('ingest: 2 conversations from demo.json'); // before any bar: written as is
      display.progress({ type: 'stage-start', language: 'en', stage: 'render-dataset', total: 2 });
      display.progress({ type: 'stage-start', language: 'en', stage: 'synthesize-speech', total: 2 });
      display.progress({ type: 'item-planned', language: 'en', stage: 'synthesize-speech', id: 'a', amount: 4 });
      frame();
      // two log lines in one frame, the first wrapped onto a second row: both rows over bars
      display.log(shortWarning, 'warn');
      display.log('short');
      frame();
      // one of two dialogues planned: the total is estimated from it
      for (let index = 0; index < 3; index += 1)
        display.progress({ type: 'item-advanced', language: 'en', stage: 'synthesize-speech', id: 'a', amount: 1 });
      frame();
      display.log(longWarning, 'warn');
      frame();
      display.log('ok');
      frame();
      display.progress({ type: 'stage-start', language: 'en', stage: 'score-quality', total: 1 });
      display.progress({ type: 'item-planned', language: 'en', stage: 'score-quality', id: 'a', amount: 61.5 });
      display.progress({ type: 'item-advanced', language: 'en', stage: 'score-quality', id: 'a', amount: 20.25 });
      frame();
    });
    const screen = await render(output.text(), COLUMNS);
    const rows = screen.rows;
    // every bar row fits the width whole: the ETA is on it
    const barRows = rows.filter((row) => row.text.startsWith('[en] ') && row.text.includes('|'));
    expect(barRows.map((row) => row.text.split(' |')[0])).toEqual([
      '[en] render-dataset',
      '[en] synthesize-speech',
      '[en] score-quality',
    ]);
    for (const row of barRows) {
      expect(row.text.length).toBeLessThan(COLUMNS);
      expect(row.text).toMatch(/ETA \S+$/);
    }
    expect(barRows[1]!.text).toContain('3/~8 utterances');
    expect(barRows[2]!.text).toContain('20/62 channel-seconds');
    // the bars are the last rows on the screen; the log lines above them, in order, whole (wrapped by
    // the terminal, not cut), with nothing of a bar left on their rows
    expect(rows.slice(-3).map((row) => row.text.split(' |')[0])).toEqual([
      '[en] render-dataset',
      '[en] synthesize-speech',
      '[en] score-quality',
    ]);
    const logs = screen.lines.slice(0, -3);
    expect(logs).toEqual(['ingest: 2 conversations from demo.json', shortWarning, 'short', longWarning, 'ok']);
    expect(barRows[0]!.text).toMatch(/ETA \?$/); // nothing done yet: no estimate
    expect(longWarning.length).toBeGreaterThan(COLUMNS);
  });

  it('a stage run per dataset (quality scoring of a dataset and its _bargein variant) has a bar per dataset, named, each with its own counts', async () => {
    const output = collector(true, 100);
    const scoring = (dataset: string, amount: number): ProgressEvent[] => [
      { type: 'stage-start', language: 'en', stage: 'score-quality', dataset, total: 1 },
      { type: 'item-planned', language: 'en', stage: 'score-quality', dataset, id: 'a', amount },
      { type: 'item-advanced', language: 'en', stage: 'score-quality', dataset, id: 'a', amount: amount / 2 },
    ];
    drive(output, (display, frame) => {
      for (const event of scoring('topiocqa_demo', 40)) display.progress(event);
      frame();
      for (const event of scoring('topiocqa_demo_bargein', 30)) display.progress(event);
      frame();
    });
    const rows = (await render(output.text(), 100)).rows.filter((row) => row.text.includes('|'));
    expect(rows.map((row) => row.text.split(' |')[0])).toEqual([
      '[en] score-quality topiocqa_demo',
      '[en] score-quality topiocqa_demo_bargein',
    ]);
    expect(rows[0]!.text).toContain('20/40 channel-seconds');
    expect(rows[1]!.text).toContain('15/30 channel-seconds');
    // the lines and the JSON summary keep them apart too
    const lines = collector(false);
    const json = collector(false);
    for (const [mode, target] of [
      ['lines', lines],
      ['json', json],
    ] as const) {
      const display = createProgressDisplay(mode, target.stream);
      for (const event of [...scoring('topiocqa_demo', 40), ...scoring('topiocqa_demo_bargein', 30)])
        display.progress(event);
      display.finish({ level: 'info', exitCode: 0, outputs: [] });
    }
    expect(lines.text()).toBe(
      '[en] score-quality topiocqa_demo: 1 dialogues\n[en] score-quality topiocqa_demo_bargein: 1 dialogues\n',
    );
    const summary = JSON.parse(json.text().trim().split('\n').at(-1)!);
    expect(
      summary.stages.map((stage: { dataset: string; unitsDone: number }) => [stage.dataset, stage.unitsDone]),
    ).toEqual([
      ['topiocqa_demo', 20],
      ['topiocqa_demo_bargein', 15],
    ]);
  });

  it('prints the log lines given just before the end; on a wider terminal the bar line has room for the counts', async () => {
    const output = collector(true, 100);
    drive(output, (display) => {
      display.progress({ type: 'stage-start', language: 'ja', stage: 'render-dataset', total: 1 });
      display.progress({ type: 'item', language: 'ja', stage: 'render-dataset', id: 'x', status: 'done' });
      display.log('[ja] wrote 1 dialogues to data/ja/task/topiocqa_ja');
    });
    const screen = await render(output.text(), 100);
    expect(screen.lines[0]).toBe('[ja] wrote 1 dialogues to data/ja/task/topiocqa_ja');
    expect(screen.lines[1]).toMatch(/^\[ja\] render-dataset \|█+\| 1\/1 dialogues \(0 cached, 0 failed\) ETA /);
  });
});

/** Feeds a `bars` display on fake timers (cli-progress redraws 10 times a second); `frame()` lets one frame pass. */
function drive(
  output: ReturnType<typeof collector>,
  script: (display: ProgressDisplay, frame: () => void) => void,
): string {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] });
  try {
    const display = createProgressDisplay('bars', output.stream as never);
    script(display, () => vi.advanceTimersByTime(150));
    vi.advanceTimersByTime(150);
    display.stop();
    return output.text();
  } finally {
    vi.useRealTimers();
  }
}

/** What a real terminal shows for `text`: its rows (trailing blanks trimmed) and its logical lines (wrapped rows joined), without trailing empty ones. */
async function render(
  text: string,
  columns: number,
): Promise<{ rows: { text: string; wrapped: boolean }[]; lines: string[] }> {
  // convertEol: a terminal's line discipline turns \n into \r\n (onlcr), as on a real tty
  const terminal = new Terminal({ cols: columns, rows: 30, allowProposedApi: true, convertEol: true });
  await new Promise<void>((resolve) => terminal.write(text, resolve));
  const buffer = terminal.buffer.active;
  const rows: { text: string; wrapped: boolean }[] = [];
  for (let index = 0; index < buffer.length; index += 1) {
    const line = buffer.getLine(index)!;
    rows.push({ text: line.translateToString(true), wrapped: line.isWrapped });
  }
  while (rows.length > 0 && rows.at(-1)!.text === '') rows.pop();
  const lines: string[] = [];
  for (const row of rows) {
    if (row.wrapped && lines.length > 0) lines[lines.length - 1] += row.text;
    else lines.push(row.text);
  }
  terminal.dispose();
  return { rows, lines };
}

const utteranceEvents: ProgressEvent[] = [
  { type: 'stage-start', language: 'en', stage: 'synthesize-speech', total: 2 },
  { type: 'item-planned', language: 'en', stage: 'synthesize-speech', id: 'a', amount: 4 },
  { type: 'item-planned', language: 'en', stage: 'synthesize-speech', id: 'b', amount: 5 },
  { type: 'item-advanced', language: 'en', stage: 'synthesize-speech', id: 'a', amount: 4 },
  { type: 'item', language: 'en', stage: 'synthesize-speech', id: 'a', status: 'done' },
  { type: 'item-advanced', language: 'en', stage: 'synthesize-speech', id: 'b', amount: 2 },
  { type: 'item', language: 'en', stage: 'synthesize-speech', id: 'b', status: 'done' },
];

describe('progressStagesFailedAt', () => {
  it('names the stages a failed dialogue never reaches', () => {
    expect(progressStagesFailedAt('prepare-text')).toEqual(['synthesize-speech', 'render-dataset']);
    expect(progressStagesFailedAt('synthesize-speech')).toEqual(['synthesize-speech', 'render-dataset']);
    expect(progressStagesFailedAt('annotate-events')).toEqual(['render-dataset']);
  });
});

describe('formatStageUnits', () => {
  it('shows units done of the (estimated) total, or dialogues before any plan', () => {
    const base = { total: 4, done: 1, cached: 0, failed: 0 };
    expect(formatStageUnits({ ...base, unit: 'utterances', unitsDone: 3, unitsTotal: 16, unitsEstimated: true })).toBe(
      '3/~16 utterances',
    );
    expect(
      formatStageUnits({ ...base, unit: 'channel-seconds', unitsDone: 20.4, unitsTotal: 61.5, unitsEstimated: false }),
    ).toBe('20/62 channel-seconds');
    expect(
      formatStageUnits({ ...base, unit: 'utterances', unitsDone: 0, unitsTotal: null, unitsEstimated: false }),
    ).toBe('1/4 dialogues');
  });
});
