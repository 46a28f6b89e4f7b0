import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { sharedDirectory } from '../pipeline/config.ts';
import { runMeasure, type MeasureOptions } from '../scripts/commands/measure.ts';
import { parseNxtTimedUnits, prepareNxt } from './nxt.ts';
import { ReferenceCorpusError, validateReferenceRecording } from './reference-recording.ts';
import { temporaryFolder } from './reference-test-audio.ts';

const MAP_TASK = path.join(sharedDirectory(), 'corpora', 'reference-timing', 'maptask');

/**
 * Floor-transfer offsets of the Map Task files computed independently of the loader, the events module
 * and the measure stage: words read with a regular expression straight from the XML text, times
 * converted through integer ten-thousandths, IPUs by merging any gap of at most 50 cs in one pass,
 * TURN when longer than 80 cs, then one walk over both speakers' TURNs keeping the floor (latest end):
 * a TURN of the other speaker that ends after the floor is a floor transfer, offset start - floor end.
 */
async function independentFloorTransferOffsets(folder: string): Promise<number[]> {
  const names = (await readdir(folder)).filter((name) => name.endsWith('.g.timed-units.xml')).sort();
  const offsets: number[] = [];
  const toCentiseconds = (seconds: string) => Math.floor((Math.round(Number(seconds) * 10000) + 50) / 100);
  for (const giverName of names) {
    const turns: { speaker: number; start: number; end: number }[] = [];
    for (const [speaker, name] of [giverName, giverName.replace('.g.', '.f.')].entries()) {
      const xml = await readFile(path.join(folder, name), 'utf8');
      const words = [...xml.matchAll(/<tu\b[^>]*?\bstart="([0-9.]+)"[^>]*?\bend="([0-9.]+)"[^>]*>([^<]*)<\/tu>/g)]
        .map((match) => ({ start: toCentiseconds(match[1] as string), end: toCentiseconds(match[2] as string) }))
        .filter((word) => word.end > word.start)
        .sort((a, b) => a.start - b.start);
      let current: { start: number; end: number } | undefined;
      const units: { start: number; end: number }[] = [];
      for (const word of words) {
        if (current !== undefined && word.start - current.end <= 50) current.end = Math.max(current.end, word.end);
        else units.push((current = { ...word }));
      }
      for (const unit of units) if (unit.end - unit.start > 80) turns.push({ speaker, ...unit });
    }
    turns.sort((a, b) => a.start - b.start || a.end - b.end);
    let floor = turns[0];
    for (const turn of turns.slice(1)) {
      if (floor === undefined) break;
      if (turn.speaker !== floor.speaker && turn.end > floor.end) offsets.push(turn.start - floor.end);
      if (turn.end > floor.end) floor = turn;
    }
  }
  return offsets;
}

/** Median by linear interpolation between order statistics (type 7), as the statistics file states. */
function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const position = (sorted.length - 1) / 2;
  const low = sorted[Math.floor(position)] as number;
  const high = sorted[Math.ceil(position)] as number;
  return low + (high - low) * (position - Math.floor(position));
}

const measureOptions = (out: string): MeasureOptions => ({
  format: 'nxt',
  out,
  language: 'en',
  vad: 'silero',
  samplerUse: 'pooled',
  licence: 'CC BY-NC-SA 2.5',
  origin: 'HCRC Map Task Corpus Annotations v2.1',
  channelMapping: 'giver on channel 0, follower on channel 1',
  note: [],
  relativeTo: path.dirname(MAP_TASK),
});

describe('NXT timed units: the 128 real HCRC Map Task dialogues', () => {
  it('measure --format nxt gives the median floor-transfer offset and overlap fraction of an independent computation', async () => {
    const temporary = await temporaryFolder('nxt-measure');
    try {
      const out = path.join(temporary.folder, 'maptask.timing.json');
      await runMeasure([MAP_TASK], measureOptions(out));
      const statistics = JSON.parse(await readFile(out, 'utf8'));
      const offsets = await independentFloorTransferOffsets(MAP_TASK);
      expect(offsets.length).toBeGreaterThan(5000);
      const pooled = statistics.speakerChange.pooledSummary;
      expect(pooled.count).toBe(offsets.length);
      expect(pooled.median).toBeCloseTo(median(offsets) / 100, 3);
      expect(pooled.overlapFraction).toBeCloseTo(offsets.filter((offset) => offset < 0).length / offsets.length, 4);
      expect(statistics.provenance.recordingsUsed).toBe(128);
      expect(statistics.provenance.format).toBe('nxt');
      // Word-level timings: no single offset value (e.g. the 0.00 s of abutting utterance bullets) holds 2 %.
      const counts = new Map<number, number>();
      for (const offset of offsets) counts.set(offset, (counts.get(offset) ?? 0) + 1);
      expect(Math.max(...counts.values()) / offsets.length).toBeLessThan(0.02);
    } finally {
      await temporary.remove();
    }
  });

  it('loads every dialogue with supervisions and word timings, and notes the quirks', async () => {
    const recordings = await prepareNxt([MAP_TASK]);
    expect(recordings).toHaveLength(128);
    expect(recordings.map((recording) => recording.id)).toEqual(
      [...recordings.map((recording) => recording.id)].sort(),
    );
    for (const recording of recordings) {
      validateReferenceRecording(recording);
      expect(recording.channelSpeakers).toEqual({ 0: `${recording.id}.g`, 1: `${recording.id}.f` });
      for (const supervision of recording.supervisions ?? []) {
        expect(supervision.words?.every((word) => word.start >= supervision.start && word.end <= supervision.end)).toBe(
          true,
        );
      }
    }
    const first = recordings[0];
    expect(first?.id).toBe('q1ec1');
    expect(first?.supervisions?.[0]?.text).toBe('okay starting off'); // the <sil> at 1.37-1.58 s ends the speech segment
    expect(first?.supervisions?.[0]?.words?.[0]).toEqual({ channel: 0, start: 0, end: 33, word: 'okay' });
    // q3ec8.g has a zero-length timed unit "i'll try" at 252.0066 s: no speech time, text kept.
    const q3ec8 = recordings.find((recording) => recording.id === 'q3ec8');
    expect(q3ec8?.notes.some((note) => note.startsWith('1 speech words start and end on the same centisecond'))).toBe(
      true,
    );
    expect(
      q3ec8?.supervisions?.some(
        (supervision) =>
          supervision.text.includes("i'll try") && supervision.start <= 25201 && supervision.end >= 25201,
      ),
    ).toBe(true);
    expect(recordings.some((recording) => recording.notes.some((note) => note.includes('realisation attribute')))).toBe(
      true,
    );
    // Noises are not speech by default: the first giver file's breath at 4.86-5.35 s lies in no segment.
    expect(first?.segments[0].some((segment) => segment.start < 535 && segment.end > 486)).toBe(false);
    const withLaughs = await prepareNxt([path.join(MAP_TASK, 'q1ec1.g.timed-units.xml')], {
      noiseTypesAsSpeech: ['breath'],
    });
    expect(withLaughs).toHaveLength(1);
    expect(withLaughs[0]?.segments[0].some((segment) => segment.start <= 486 && segment.end >= 535)).toBe(true);
  });
});

describe('NXT timed units: malformed files', () => {
  const wrap = (body: string) =>
    `<?xml version="1.0" encoding="UTF-8"?>\n<nite:root xmlns:nite="http://nite.sourceforge.net/" id="tu.d1.g">\n${body}</nite:root>\n`;

  it('names file and line for malformed XML, a missing or bad time, and an end before the start', () => {
    const cases: [string, RegExp][] = [
      [
        wrap('<tu id="a" start="0.1" end="0.5">ok</tu>\n<tu id="b" start="0.6" end="0.9">no</sil>\n'),
        /d1\.g\.timed-units\.xml:4: malformed XML/,
      ],
      [
        wrap('<tu id="a" start="0.1" end="0.5">ok</tu>\n<sil id="b" start="0.5"/>\n'),
        /d1\.g\.timed-units\.xml:4: column "end": <sil> has no end attribute/,
      ],
      [
        wrap('<tu id="a" start="0.1" end="0,5">ok</tu>\n'),
        /d1\.g\.timed-units\.xml:3: column "end": <tu> end="0,5" is not a non-negative decimal/,
      ],
      [
        wrap('\n\n<noi id="a" start="2.0" end="1.5" type="breath"/>\n'),
        /d1\.g\.timed-units\.xml:5: column "end": <noi> ends \(1\.5\) before it starts \(2\.0\)/,
      ],
    ];
    for (const [text, message] of cases) {
      expect(() => parseNxtTimedUnits(text, 'd1.g.timed-units.xml')).toThrow(ReferenceCorpusError);
      expect(() => parseNxtTimedUnits(text, 'd1.g.timed-units.xml')).toThrow(message);
    }
  });

  it('names the missing partner file and a bad file name', async () => {
    const temporary = await temporaryFolder('nxt-errors');
    try {
      const folder = path.join(temporary.folder, 'timed-units');
      await mkdir(folder, { recursive: true });
      await writeFile(path.join(folder, 'd1.g.timed-units.xml'), wrap('<tu id="a" start="0.1" end="0.5">okay</tu>\n'));
      await expect(prepareNxt([folder])).rejects.toThrow(
        /d1\.f\.timed-units\.xml: missing: dialogue d1 needs the timed units of agents g and f/,
      );
      await writeFile(path.join(folder, 'notes.timed-units.xml'), wrap(''));
      await expect(prepareNxt([folder])).rejects.toThrow(/notes\.timed-units\.xml: not an NXT timed-units file name/);
    } finally {
      await temporary.remove();
    }
  });
});
