import { copyFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { validateReferenceRecording, ReferenceCorpusError } from './reference-recording.ts';
import { FIXTURES, temporaryFolder, writeWavFile } from './reference-test-audio.ts';
import { decodeTextGrid, parseTextGrid, prepareTextGrid, readTextGrid } from './textgrid.ts';

const FOLDER = path.join(FIXTURES, 'textgrid');

describe('TextGrid reader: the long and the short text form', () => {
  it('reads the same tiers from the MFA-style long form and the short form', async () => {
    const long = await readTextGrid(path.join(FOLDER, 'mfa-long.TextGrid'));
    const short = await readTextGrid(path.join(FOLDER, 'mfa-short.TextGrid'));
    expect(long.form).toBe('long');
    expect(short.form).toBe('short');
    expect(long.tiers.map((tier) => tier.name)).toEqual([
      'spk1 - words',
      'spk1 - phones',
      'spk2 - words',
      'spk2 - phones',
    ]);
    const strip = (grid: typeof long) =>
      grid.tiers.map((tier) => ({
        ...tier,
        line: 0,
        intervals: tier.intervals.map((interval) => ({ ...interval, line: 0 })),
      }));
    expect(strip(short)).toEqual(strip(long));
    expect(long.tiers[0]?.intervals[1]).toEqual({ start: 42, end: 71, text: 'so', line: 20 });
    expect(long.end).toBe(600);
  });

  it('unescapes doubled quotes and reads UTF-16 with a byte-order mark', async () => {
    const grid = await readTextGrid(path.join(FOLDER, 'pair_1.TextGrid'));
    expect(grid.tiers[0]?.intervals[2]?.text).toBe('Montréal "downtown"');
    expect(decodeTextGrid(new Uint8Array([0xef, 0xbb, 0xbf, 0x41]))).toBe('A');
  });

  it('reads Praat files with comments, several values on a line, texts across lines and point tiers', () => {
    const grid = parseTextGrid(
      [
        'File type = "ooTextFile"',
        'Object class = "TextGrid"',
        '! a comment "with a quote" and 12 numbers',
        '0 2.5 <exists> 2',
        '"IntervalTier" "A" 0 2.5 2 ! type, name, xmin, xmax, size',
        '0 1.005 "two',
        'lines" 1.005 2.5 ""',
        '"TextTier" "bell" 0 2.5 1',
        '1.2 "ding"',
        '',
      ].join('\n'),
      'custom.TextGrid',
    );
    expect(grid.tiers[0]?.intervals).toEqual([
      { start: 0, end: 101, text: 'two\nlines', line: 6 },
      { start: 101, end: 250, text: '', line: 7 },
    ]);
    expect(grid.tiers[1]).toMatchObject({
      kind: 'TextTier',
      name: 'bell',
      intervals: [{ start: 120, end: 120, text: 'ding', line: 9 }],
    });
  });
});

describe('TextGrid reader: malformed files name file and line', () => {
  const header = 'File type = "ooTextFile"\nObject class = "TextGrid"\n\n';
  const cases: [string, string, RegExp][] = [
    ['not a Praat file', 'hello\n', /bad\.TextGrid:1: not a Praat text file/],
    [
      'a binary TextGrid',
      'ooBinaryFile\u0008TextGrid',
      /bad\.TextGrid:1: binary TextGrid \(ooBinaryFile\) is not read/,
    ],
    [
      'another object class',
      'File type = "ooTextFile"\nObject class = "Pitch 1"\n',
      /bad\.TextGrid:2: object class is "Pitch 1", not "TextGrid"/,
    ],
    [
      'a text where a time belongs',
      `${header}0\n6\n<exists>\n1\n"IntervalTier"\n"A"\n0\n6\n1\n0\n"six"\n""\n`,
      /bad\.TextGrid:14: the xmax of interval 1 of tier 1 \("A"\) "six" is not a number/,
    ],
    [
      'an interval that ends before it starts',
      `${header}0\n6\n<exists>\n1\n"IntervalTier"\n"A"\n0\n6\n1\n3\n2\n"x"\n`,
      /bad\.TextGrid:14: interval 1 of tier 1 \("A"\) ends before it starts/,
    ],
    [
      'a quote never closed',
      `${header}0\n6\n<exists>\n1\n"IntervalTier"\n"A\n0\n6\n`,
      /bad\.TextGrid:9: a text in double quotes is never closed/,
    ],
    [
      'fewer intervals than counted',
      `${header}xmin = 0\nxmax = 6\ntiers? <exists>\nsize = 1\nitem []:\n  item [1]:\n    class = "IntervalTier"\n    name = "A"\n    xmin = 0\n    xmax = 6\n    intervals: size = 2\n    intervals [1]:\n      xmin = 0\n      xmax = 6\n      text = "hi"\n`,
      /bad\.TextGrid:19: the file ends where the xmin of interval 2 of tier 1 \("A"\) should follow/,
    ],
    [
      'more values than counted',
      `${header}0\n6\n<exists>\n1\n"IntervalTier"\n"A"\n0\n6\n1\n0\n6\n"hi"\n6\n`,
      /bad\.TextGrid:16: unexpected the number 6 after the last tier/,
    ],
    ['an unknown tier class', `${header}0\n6\n<exists>\n1\n"Tier"\n"A"\n`, /bad\.TextGrid:8: tier 1 has class "Tier"/],
  ];
  for (const [what, text, message] of cases) {
    it(what, () => {
      expect(() => parseTextGrid(text, 'bad.TextGrid')).toThrow(ReferenceCorpusError);
      expect(() => parseTextGrid(text, 'bad.TextGrid')).toThrow(message);
    });
  }
});

describe('prepareTextGrid', () => {
  it('makes one recording of an MFA TextGrid with two speakers: words -> segments, IPUs -> supervisions', async () => {
    const [recording] = await prepareTextGrid([path.join(FOLDER, 'mfa-long.TextGrid')]);
    expect(recording).toBeDefined();
    if (recording === undefined) return;
    validateReferenceRecording(recording);
    expect(recording.id).toBe('mfa-long');
    expect(recording.format).toBe('textgrid');
    expect(recording.channelSpeakers).toEqual({ 0: 'spk1', 1: 'spk2' });
    // spk1: so where did you grow up (0.42-1.98), then oh nice (3.62-4.37): two IPUs (silence 1.64 s).
    expect(recording.segments[0]).toEqual([
      { start: 42, end: 198 },
      { start: 362, end: 437 },
    ]);
    // spk2: in toronto (2.10-3.05); [laughter] is not speech; <unk> actually (4.12-4.95).
    expect(recording.segments[1]).toEqual([
      { start: 210, end: 305 },
      { start: 412, end: 495 },
    ]);
    expect(
      recording.supervisions?.map((supervision) => [
        supervision.channel,
        supervision.start,
        supervision.end,
        supervision.text,
      ]),
    ).toEqual([
      [0, 42, 198, 'so where did you grow up'],
      [1, 210, 305, 'in toronto'],
      [0, 362, 437, 'oh nice'],
      [1, 412, 495, '<unk> actually'],
    ]);
    expect(recording.supervisions?.[0]?.words?.map((word) => word.word)).toEqual([
      'so',
      'where',
      'did',
      'you',
      'grow',
      'up',
    ]);
    expect(recording.notes.some((note) => note.includes('"[laughter]" 1'))).toBe(true);
    expect(recording.durationCs).toBe(600);
    expect(recording.audio).toBeUndefined();
    const short = await prepareTextGrid([path.join(FOLDER, 'mfa-short.TextGrid')]);
    expect(short[0]?.segments).toEqual(recording.segments);
    expect(short[0]?.supervisions).toEqual(recording.supervisions);
  });

  it('pairs <id>_0 / <id>_1 files (one speaker each) and finds the audio beside them', async () => {
    const temporary = await temporaryFolder('textgrid');
    try {
      for (const name of ['pair_0.TextGrid', 'pair_1.TextGrid'])
        await copyFile(path.join(FOLDER, name), path.join(temporary.folder, name));
      await writeWavFile(
        path.join(temporary.folder, 'pair.wav'),
        [new Float32Array(96000), new Float32Array(96000)],
        16000,
      );
      const recordings = await prepareTextGrid([path.join(temporary.folder, 'pair_1.TextGrid')]);
      expect(recordings).toHaveLength(1);
      const recording = recordings[0];
      if (recording === undefined) return;
      validateReferenceRecording(recording);
      expect(recording.id).toBe('pair');
      expect(recording.channelSpeakers).toEqual({ 0: 'pair:0', 1: 'pair:1' });
      expect(recording.supervisions?.find((supervision) => supervision.channel === 1)?.text).toBe(
        'in Montréal "downtown"',
      );
      expect(recording.audio).toEqual([
        { path: path.join(temporary.folder, 'pair.wav'), channel: 0 },
        { path: path.join(temporary.folder, 'pair.wav'), channel: 1 },
      ]);
      expect(recording.durationCs).toBe(600);
      // The same from the folder (both halves listed): still one recording.
      expect(await prepareTextGrid([temporary.folder])).toHaveLength(1);
    } finally {
      await temporary.remove();
    }
  });

  it('refuses overlapping intervals on one tier, naming file, line, tier and times', async () => {
    const temporary = await temporaryFolder('textgrid-overlap');
    try {
      const tier = (name: string, intervals: [number, number, string][]) =>
        `"IntervalTier"\n"${name}"\n0\n6\n${intervals.length}\n${intervals.map(([start, end, text]) => `${start}\n${end}\n"${text}"`).join('\n')}\n`;
      const file = path.join(temporary.folder, 'overlap.TextGrid');
      await writeFile(
        file,
        `File type = "ooTextFile"\nObject class = "TextGrid"\n\n0\n6\n<exists>\n2\n` +
          tier('a - words', [
            [0, 1, 'hello'],
            [1, 2.5, 'there'],
            [2.25, 3, 'you'],
          ]) +
          tier('b - words', [
            [0, 4, ''],
            [4, 5, 'hi'],
          ]),
      );
      await expect(prepareTextGrid([file])).rejects.toThrow(
        /overlap\.TextGrid:\d+: tier "a - words": the interval 2\.25-3\.00 s overlaps the interval 1\.00-2\.50 s \(line \d+\); the intervals of one tier must not overlap/,
      );
    } finally {
      await temporary.remove();
    }
  });

  it('names the problem when the speaker tiers do not fit, or a tier asked for is missing', async () => {
    const temporary = await temporaryFolder('textgrid-tiers');
    try {
      const text = await readFile(path.join(FOLDER, 'pair_0.TextGrid'), 'utf8');
      const lone = path.join(temporary.folder, 'lone.TextGrid');
      await writeFile(lone, text);
      await expect(prepareTextGrid([lone])).rejects.toThrow(
        /lone\.TextGrid: found 1 speaker tiers \("words"\), expected 2/,
      );
      await expect(
        prepareTextGrid([path.join(FOLDER, 'mfa-long.TextGrid')], { speakerTiers: ['spk1 - words', 'spk3 - words'] }),
      ).rejects.toThrow(/mfa-long\.TextGrid: no tier named "spk3 - words"/);
      const chosen = await prepareTextGrid([path.join(FOLDER, 'mfa-long.TextGrid')], {
        speakerTiers: ['spk2 - words', 'spk1 - words'],
      });
      expect(chosen[0]?.channelSpeakers).toEqual({ 0: 'spk2', 1: 'spk1' });
      await mkdir(path.join(temporary.folder, 'empty'));
      await expect(prepareTextGrid([path.join(temporary.folder, 'empty')])).rejects.toThrow(
        /no \*\.TextGrid files in the folder/,
      );
    } finally {
      await temporary.remove();
    }
  });
});

describe('TextGrid reader: a time that is not a number', () => {
  const RECORD = 'the xmin of interval 3 of tier 1 ("spk1 - words")';

  it.each([
    ['a bare word', 'xmin = abc ', 'abc'],
    ['a text in double quotes', 'xmin = "abc" ', 'abc'],
    ['a number that goes on', 'xmin = 1.2.3 ', '1.2.3'],
    ['a number with letters after it', 'xmin = 0.71s ', '0.71s'],
  ])('%s is a skipped record naming file:line and the field, or stops when strict', async (_, written, value) => {
    const text = (await readFile(path.join(FOLDER, 'mfa-long.TextGrid'), 'utf8')).replace(
      '            xmin = 0.71 ',
      `            ${written}`,
    );
    const reason = `${RECORD} ${JSON.stringify(value)} is not a number`;
    const grid = parseTextGrid(text, 'bad.TextGrid', { strict: false });
    expect(grid.skippedRecords).toEqual([{ source: 'bad.TextGrid', line: 24, reason }]);
    const [words] = grid.tiers;
    expect(words?.intervals.map((interval) => interval.text)).not.toContain('where');
    expect(
      words?.intervals.every((interval) => Number.isInteger(interval.start) && Number.isInteger(interval.end)),
    ).toBe(true);
    expect(() => parseTextGrid(text, 'bad.TextGrid')).toThrow(`bad.TextGrid:24: ${reason}`);
  });

  it('the recording lists the skipped interval as FILE:LINE: REASON', async () => {
    const temporary = await temporaryFolder('textgrid-nan');
    try {
      const file = path.join(temporary.folder, 'call.TextGrid');
      const text = await readFile(path.join(FOLDER, 'mfa-long.TextGrid'), 'utf8');
      await writeFile(file, text.replace('            xmin = 0.71 ', '            xmin = abc '));
      const [recording] = await prepareTextGrid([file], { strict: false });
      expect(recording?.skippedRecords).toEqual([`${file}:24: ${RECORD} "abc" is not a number`]);
      await expect(prepareTextGrid([file])).rejects.toThrow(`${file}:24: ${RECORD} "abc" is not a number`);
    } finally {
      await temporary.remove();
    }
  });
});
