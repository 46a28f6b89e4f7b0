import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Command } from 'commander';
import { execa } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';
import type { ReferenceRecording } from '../pipeline/model/types.ts';
import { FIXTURES } from '../corpora/reference-test-audio.ts';
import { renderHistogramSvg, timingStatisticsPlots } from '../pipeline/timeline/plots.ts';
import { loadTimingStatistics } from '../pipeline/timeline/timing-statistics.ts';
import { loadReferenceRecordingsForMeasure, type ReferenceRecordingLoader } from '../scripts/commands/measure.ts';
import { registerMeasureCommand } from '../scripts/commands/measure-command.ts';
import {
  measureReferenceRecordings,
  MeasureTurnTakingError,
  plotsDirectoryFor,
  writeTimingStatisticsFiles,
  type MeasurementProvenance,
} from './measure-conversations.ts';
import { TEST_CLI } from '../scripts/testing/cli-command.ts';

function recording(id: string, shift: number, sources = [`/data/corpus/${id}.wav`]): ReferenceRecording {
  return {
    id,
    format: 'stereo-wav',
    sources,
    durationCs: 3000 + shift,
    segments: {
      0: [
        { start: 0 + shift, end: 400 + shift },
        { start: 900 + shift, end: 2000 + shift },
        { start: 2300 + shift, end: 2340 + shift },
      ],
      1: [
        { start: 380 + shift, end: 1000 + shift },
        { start: 1200 + shift, end: 1240 + shift },
        { start: 2050 + shift, end: 2900 + shift },
      ],
    },
    channelSpeakers: { 0: 'A', 1: 'B' },
    notes: ['one note'],
  };
}

const provenance: MeasurementProvenance = {
  corpus: 'constructed recordings',
  licence: 'none',
  origin: 'stages/measure-conversations.test.ts',
  pathsRelativeTo: { directory: '/data', name: 'the data folder' },
  channelMapping: 'speaker A on channel 0',
  voiceActivityDetection: 'silero',
  command: 'duplexsynth measure --format stereo-wav ...',
  notes: ['a free note'],
};

describe('measureReferenceRecordings', () => {
  it('measures, skips exact duplicates, and records provenance with relative paths', () => {
    const duplicate = { ...recording('b-copy', 0), sources: ['/data/corpus/b-copy.wav'] };
    const statistics = measureReferenceRecordings({
      recordings: [recording('b', 0), recording('a', 100), duplicate],
      language: 'en',
      format: 'stereo-wav',
      provenance,
    });
    expect(statistics.provenance).toMatchObject({
      format: 'stereo-wav',
      recordingCount: 3,
      recordingsUsed: 2,
      duplicateRecordings: [{ recording: 'b-copy', sameAs: 'b' }],
      totalDurationSeconds: 61,
      sourcePaths: ['corpus/a.wav', 'corpus/b-copy.wav', 'corpus/b.wav'],
      pathsRelativeTo: 'the data folder',
      voiceActivityDetection: 'silero',
      loaderNotes: ['a: one note', 'b: one note'],
      counts: { turns: 8, backchannels: 4, floorTransfers: 6, withinTurnOverlaps: 0, turnHolds: 0, shortPauses: 0 },
    });
    expect(statistics.provenance.notes).toEqual(['0 of 6 floor-transfer offsets are exactly 0.00 s', 'a free note']);
    // each recording: 0->1 overlap 0.20 s, 1->0 overlap 1.00 s (barge-in), 0->1 gap 0.50 s
    expect(statistics.speakerChange.byDirection['channel0->channel1'].offsets).toEqual([-0.2, -0.2, 0.5, 0.5]);
    expect(statistics.speakerChange.byDirection['channel1->channel0'].offsets).toEqual([-1, -1]);
    // BC [1200, 1240] of channel 1 inside channel 0's TURN [900, 2000]; BC [2300, 2340] of channel 0 inside [2050, 2900]
    expect(statistics.backchannels.rates.channel1).toEqual({ count: 2, hostTurnSeconds: 30, perMinute: 4 });
    expect(statistics.backchannels.relativePositions.values).toEqual([0.272, 0.272, 0.294, 0.294]);
  });

  it('refuses no recordings and repeated ids, and names the recording of invalid segments', () => {
    const input = { language: 'en' as const, format: 'stereo-wav', provenance };
    expect(() => measureReferenceRecordings({ ...input, recordings: [] })).toThrow(MeasureTurnTakingError);
    expect(() => measureReferenceRecordings({ ...input, recordings: [recording('a', 0), recording('a', 5)] })).toThrow(
      /appears twice/,
    );
    const broken = recording('broken', 0);
    broken.segments[1] = [
      { start: 500, end: 400 },
      { start: 600, end: 700 },
    ];
    expect(() => measureReferenceRecordings({ ...input, recordings: [broken] })).toThrow(
      /recording broken: channel 1, segment 0/,
    );
  });
});

describe('statistics files and histograms', () => {
  const statistics = measureReferenceRecordings({
    recordings: [recording('a', 0), recording('b', 50)],
    language: 'ja',
    format: 'stereo-wav',
    provenance,
  });

  it('writes STATS.json and one SVG per distribution in STATS.plots, byte-identical on a second run', async () => {
    const folder = await mkdtemp(path.join(os.tmpdir(), 'measure-'));
    const out = path.join(folder, 'stats.json');
    const written = await writeTimingStatisticsFiles(statistics, out);
    expect(plotsDirectoryFor(out)).toBe(path.join(folder, 'stats.plots'));
    expect(written[0]).toBe(out);
    const plots = (await readdir(path.join(folder, 'stats.plots'))).sort();
    expect(plots).toEqual([
      'backchannel-durations.svg',
      'backchannel-relative-positions.svg',
      'floor-transfer-offsets.channel0-to-channel1.svg',
      'floor-transfer-offsets.channel1-to-channel0.svg',
      'short-pauses.svg',
      'turn-hold-gaps.svg',
      'within-turn-overlaps.channel0-to-channel1.svg',
      'within-turn-overlaps.channel1-to-channel0.svg',
    ]);
    const first = await Promise.all(written.map((file) => readFile(file, 'utf8')));
    await writeTimingStatisticsFiles(statistics, out);
    expect(await Promise.all(written.map((file) => readFile(file, 'utf8')))).toEqual(first);
    expect(await loadTimingStatistics(out)).toEqual(statistics);
    const svg = await readFile(
      path.join(folder, 'stats.plots', 'floor-transfer-offsets.channel0-to-channel1.svg'),
      'utf8',
    );
    expect(svg.startsWith('<svg')).toBe(true);
    expect(svg).toContain('Floor-transfer offsets channel0-&gt;channel1 (ja)');
  });

  it('renders the same SVG text every time (no canvas, no dates, no random ids)', async () => {
    const again = await timingStatisticsPlots(statistics);
    expect(await timingStatisticsPlots(statistics)).toEqual(again);
    const svg = await renderHistogramSvg({
      title: 't',
      axisTitle: 'x (s)',
      values: [0.1, 0.12, 0.5, 9],
      binWidth: 0.1,
      range: [0, 1],
    });
    expect(svg).toBe(
      await renderHistogramSvg({
        title: 't',
        axisTitle: 'x (s)',
        values: [9, 0.5, 0.12, 0.1],
        binWidth: 0.1,
        range: [0, 1],
      }),
    );
    expect(svg).toContain('outside the range shown: 0 below, 1 above');
    await expect(renderHistogramSvg({ title: 't', axisTitle: 'x', values: [], binWidth: 0 })).rejects.toThrow(
      RangeError,
    );
  });
});

describe('duplexsynth measure', () => {
  const calls: { format: string; paths: readonly string[]; options: object }[] = [];
  const fakeLoader: ReferenceRecordingLoader = async (format, paths, options) => {
    calls.push({ format, paths, options });
    return [recording('a', 0, [path.resolve('corpus/a.wav')]), recording('b', 30, [path.resolve('corpus/b.wav')])];
  };
  const run = async (argv: string[]) => {
    const program = new Command('duplexsynth').exitOverride();
    registerMeasureCommand(program, fakeLoader);
    await program.parseAsync(['measure', ...argv], { from: 'user' });
  };
  afterEach(() => {
    calls.length = 0;
    process.exitCode = undefined;
  });

  it('takes --tiers for TextGrid, which the three-tier error suggests, and records it in the command', async () => {
    const folder = await mkdtemp(path.join(os.tmpdir(), 'measure-tiers-'));
    const out = path.join(folder, 'en.json');
    await run([
      '--format',
      'textgrid',
      '--language',
      'en',
      '--tiers',
      'spk2 - words',
      'spk1 - words',
      '--out',
      out,
      'grids',
    ]);
    expect(calls).toEqual([
      {
        format: 'textgrid',
        paths: ['grids'],
        options: { language: 'en', vad: 'silero', tiers: ['spk2 - words', 'spk1 - words'] },
      },
    ]);
    expect((await loadTimingStatistics(out)).provenance.command).toContain("--tiers 'spk2 - words' 'spk1 - words'");
    // The default loader passes them to the TextGrid reader: the channels follow the tiers named.
    const recordings = await loadReferenceRecordingsForMeasure(
      'textgrid',
      [path.join(FIXTURES, 'textgrid', 'mfa-long.TextGrid')],
      { vad: 'silero', tiers: ['spk2 - words', 'spk1 - words'] },
    );
    expect(recordings[0]?.channelSpeakers).toEqual({ 0: 'spk2', 1: 'spk1' });
    await rm(folder, { recursive: true, force: true });
  });

  it('loads with the chosen format, language and VAD, and writes the statistics with the command recorded', async () => {
    const folder = await mkdtemp(path.join(os.tmpdir(), 'measure-command-'));
    const out = path.join(folder, 'ja.json');
    await run([
      '--format',
      'stereo-wav',
      '--language',
      'ja',
      '--vad',
      'webrtc',
      '--corpus',
      'two calls',
      '--out',
      out,
      'corpus',
    ]);
    expect(calls).toEqual([{ format: 'stereo-wav', paths: ['corpus'], options: { language: 'ja', vad: 'webrtc' } }]);
    const statistics = await loadTimingStatistics(out);
    expect(statistics.language).toBe('ja');
    expect(statistics.provenance).toMatchObject({
      corpus: 'two calls',
      format: 'stereo-wav',
      voiceActivityDetection: 'webrtc',
      sourcePaths: ['corpus/a.wav', 'corpus/b.wav'],
      command:
        'duplexsynth measure --format stereo-wav --language ja --vad webrtc --sampler-use pooled --out ja.json corpus',
    });
    expect((await readdir(path.join(folder, 'ja.plots'))).length).toBe(8);

    // --check: current files pass, a changed file fails, nothing is written
    await run([
      '--format',
      'stereo-wav',
      '--language',
      'ja',
      '--vad',
      'webrtc',
      '--corpus',
      'two calls',
      '--check',
      '--out',
      out,
      'corpus',
    ]);
    expect(process.exitCode).toBeUndefined();
    await writeFile(out, 'stale');
    await run([
      '--format',
      'stereo-wav',
      '--language',
      'ja',
      '--vad',
      'webrtc',
      '--corpus',
      'two calls',
      '--check',
      '--out',
      out,
      'corpus',
    ]);
    expect(process.exitCode).toBe(1);
    expect(await readFile(out, 'utf8')).toBe('stale');
  });

  it('takes the language from single-language corpora, asks for it otherwise, and checks choices', async () => {
    const folder = await mkdtemp(path.join(os.tmpdir(), 'measure-command-'));
    await run(['--format', 'candor', '--out', path.join(folder, 'en.json'), 'candor']);
    expect((await loadTimingStatistics(path.join(folder, 'en.json'))).language).toBe('en');
    expect((await loadTimingStatistics(path.join(folder, 'en.json'))).provenance.voiceActivityDetection).toBeNull();
    await expect(run(['--format', 'rttm', '--out', path.join(folder, 'x.json'), 'calls'])).rejects.toThrow(
      /--language is required/,
    );
    await expect(run(['--format', 'wav', '--language', 'en', '--out', 'x.json', 'calls'])).rejects.toThrow(
      /Allowed choices/,
    );
    await expect(run(['--format', 'rttm', '--language', 'en', 'calls'])).rejects.toThrow(/--out/);
  });

  it('the default loader refuses an RTTM file with a third speaker; with --speakers most-talk it keeps that speaker as excluded speech', async () => {
    const folder = await mkdtemp(path.join(os.tmpdir(), 'rttm-'));
    await writeFile(
      path.join(folder, 'call.rttm'),
      [
        'SPEAKER call 1 0.00 2.00 <NA> <NA> A <NA> <NA>',
        'SPEAKER call 1 2.20 1.50 <NA> <NA> B <NA> <NA>',
        'SPEAKER call 1 4.00 1.00 <NA> <NA> C <NA> <NA>',
        'SPEAKER call 1 5.50 2.00 <NA> <NA> A <NA> <NA>',
      ].join('\n'),
    );
    await writeFile(path.join(folder, 'call-again.rttm'), await readFile(path.join(folder, 'call.rttm'), 'utf8'));
    // a third voice is refused (one line naming the file and the speakers) unless --speakers says which two
    await expect(loadReferenceRecordingsForMeasure('rttm', [folder])).rejects.toThrow(
      /call(-again)?\.rttm: has 3 speakers \(A, B, C\), a two-party recording has 2: pick the two with --speakers A,B \(channel order\) or --speakers most-talk/,
    );
    // through the registry (corpora/reference-corpora.ts), duplicates kept for the stage to record
    const recordings = await loadReferenceRecordingsForMeasure('rttm', [folder], {
      vad: 'silero',
      speakers: 'most-talk',
    });
    expect(recordings.map((item) => item.id).sort()).toEqual(['call', 'call-again']);
    expect(recordings.find((item) => item.id === 'call')).toMatchObject({
      id: 'call',
      format: 'rttm',
      channelSpeakers: { 0: 'A', 1: 'B' },
      excludedSpeech: [{ start: 400, end: 500 }],
    });
    expect(recordings[1]!.notes.some((note) => /dropped speaker C/.test(note))).toBe(true);
    const statistics = measureReferenceRecordings({ recordings, language: 'en', format: 'rttm', provenance });
    expect(statistics.provenance.duplicateRecordings).toEqual([{ recording: 'call-again', sameAs: 'call' }]);
    // the A -> B change and the B -> A change around C's speech: only the first is clean
    expect(statistics.provenance.discardedNearExcludedSpeech.speakerChanges).toBe(1);
    await expect(loadReferenceRecordingsForMeasure('candor', [path.join(folder, 'missing')])).rejects.toThrow();
  });

  it("--speakers A,B keeps the two named in channel order, excludes the others' speech and is recorded; the command line refuses a third speaker with one line, exit code 2", async () => {
    const folder = await mkdtemp(path.join(os.tmpdir(), 'rttm-speakers-'));
    const rttm = [
      'SPEAKER call 1 0.00 2.00 <NA> <NA> A <NA> <NA>',
      'SPEAKER call 1 2.20 1.50 <NA> <NA> B <NA> <NA>',
      'SPEAKER call 1 4.00 1.00 <NA> <NA> C <NA> <NA>',
      'SPEAKER call 1 5.50 2.00 <NA> <NA> A <NA> <NA>',
    ];
    await writeFile(path.join(folder, 'call.rttm'), `${rttm.join('\n')}\n`);
    const [chosen] = await loadReferenceRecordingsForMeasure('rttm', [folder], { vad: 'silero', speakers: ['B', 'A'] });
    expect(chosen).toMatchObject({ channelSpeakers: { 0: 'B', 1: 'A' }, excludedSpeech: [{ start: 400, end: 500 }] });
    expect(chosen?.segments[0]).toEqual([{ start: 220, end: 370 }]);
    await expect(
      loadReferenceRecordingsForMeasure('rttm', [folder], { vad: 'silero', speakers: ['A', 'D'] }),
    ).rejects.toThrow(/call\.rttm: no speaker "D" \(--speakers\); the file's speakers: A, B, C/);

    // through the command with the default loader: recorded in the command and the notes
    const out = path.join(folder, 'stats.json');
    const program = new Command('duplexsynth').exitOverride();
    registerMeasureCommand(program);
    await program.parseAsync(
      ['measure', '--format', 'rttm', '--language', 'en', '--speakers', 'A,B', '--out', out, folder],
      { from: 'user' },
    );
    const statistics = await loadTimingStatistics(out);
    expect(statistics.provenance.command).toContain('--speakers A,B');
    expect(statistics.provenance.loaderNotes).toContain('call: channel 0 = A, channel 1 = B (chosen by --speakers)');

    const cli = await execa(
      process.execPath,
      [TEST_CLI, 'measure', '--format', 'rttm', '--language', 'en', '--out', path.join(folder, 'refused.json'), folder],
      { reject: false },
    );
    expect(cli.exitCode).toBe(2);
    expect(cli.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(
        /^duplexsynth: .*call\.rttm: has 3 speakers \(A, B, C\), a two-party recording has 2: pick the two with --speakers A,B \(channel order\) or --speakers most-talk/,
      ),
    ]);
    await expect(readFile(path.join(folder, 'refused.json'))).rejects.toThrow();
    await rm(folder, { recursive: true, force: true });
  }, 120_000);

  it("--speaker-map renames the channels' speakers, noted per recording in the provenance; a line naming no recording is an error naming the file and line", async () => {
    const folder = await mkdtemp(path.join(os.tmpdir(), 'measure-speaker-map-'));
    const map = path.join(folder, 'speakers.tsv');
    await writeFile(map, '# recording\tchannel\tspeaker\na\t0\tami\nb\tB\tami\n');
    const out = path.join(folder, 'stats.json');
    await run(['--format', 'stereo-wav', '--language', 'ja', '--speaker-map', map, '--out', out, 'corpus']);
    const notes = (await loadTimingStatistics(out)).provenance.loaderNotes;
    expect(notes).toContain('a: speakers from the speaker map: channel 0 = ami, channel 1 = B');
    expect(notes).toContain('b: speakers from the speaker map: channel 0 = A, channel 1 = ami');
    await writeFile(map, 'a\t0\tami\nc\t1\tbo\n');
    await expect(
      run(['--format', 'stereo-wav', '--language', 'ja', '--speaker-map', map, '--out', out, 'corpus']),
    ).rejects.toThrow(/speakers\.tsv:2: no recording "c" among the 2 read/);
    await writeFile(map, 'a\t0\tB\n');
    await expect(
      run(['--format', 'stereo-wav', '--language', 'ja', '--speaker-map', map, '--out', out, 'corpus']),
    ).rejects.toThrow(/recording a: both channels would be speaker "B"/);
    await rm(folder, { recursive: true, force: true });
  });
});
