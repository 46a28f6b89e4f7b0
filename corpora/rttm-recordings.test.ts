import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { sharedDirectory } from '../pipeline/config.ts';
import { validateReferenceRecording } from './reference-recording.ts';
import { temporaryFolder } from './reference-test-audio.ts';
import { readRttm, RttmFormatError, toTwoChannelSegments } from './rttm.ts';
import { prepareRttm } from './rttm-recordings.ts';

const RTTM_FOLDER = path.join(sharedDirectory(), 'corpora', 'reference-timing', 'rttm');

describe('prepareRttm on the real CallFriend timings', () => {
  it('loads the 31 English recordings with the segments and speakers of rttm.ts', async () => {
    const recordings = await prepareRttm([path.join(RTTM_FOLDER, 'en')]);
    expect(recordings).toHaveLength(31);
    for (const recording of recordings) {
      validateReferenceRecording(recording);
      expect(recording.format).toBe('rttm');
      expect(recording.supervisions).toBeUndefined();
      expect(recording.audio).toBeUndefined();
      const expected = toTwoChannelSegments(await readRttm(recording.sources[0] as string));
      expect(recording.id).toBe(expected.id);
      expect(recording.segments).toEqual(expected.segments);
      expect(recording.channelSpeakers).toEqual(expected.channelSpeakers);
      expect(recording.durationCs).toBe(expected.duration);
      expect(recording.notes.filter((note) => note.startsWith('dropped speaker '))).toHaveLength(
        expected.droppedSpeakers.length,
      );
      expect(recording.segments[0].length).toBeGreaterThan(0);
      expect(recording.segments[1].length).toBeGreaterThan(0);
    }
    const ids = recordings.map((recording) => recording.id);
    expect([...ids].sort()).toEqual(ids); // file-name order
    expect(recordings.some((recording) => recording.notes.some((note) => note.startsWith('dropped speaker ')))).toBe(
      true,
    );
  });

  it('loads the Japanese call published twice (4222, 4261) once, unless asked not to', async () => {
    const recordings = await prepareRttm([path.join(RTTM_FOLDER, 'ja')]);
    expect(recordings).toHaveLength(30);
    const first = recordings.find((recording) => recording.id === '4222');
    expect(first?.notes).toContain('the same call is also published as 4261.rttm (skipped)');
    expect(recordings.some((recording) => recording.id === '4261')).toBe(false);
    expect(await prepareRttm([path.join(RTTM_FOLDER, 'ja')], { skipDuplicates: false })).toHaveLength(31);
  });
});

describe('prepareRttm errors', () => {
  it('names a missing file, and passes on rttm.ts errors with file and line', async () => {
    const temporary = await temporaryFolder('rttm');
    try {
      await expect(prepareRttm([path.join(temporary.folder, 'none.rttm')])).rejects.toThrow(
        /none\.rttm: RTTM file not found/,
      );
      const bad = path.join(temporary.folder, 'bad', 'call.rttm');
      await mkdir(path.dirname(bad), { recursive: true });
      await writeFile(bad, 'SPEAKER call 1 0.5 1.x <NA> <NA> A <NA> <NA>\n');
      const error = await prepareRttm([path.dirname(bad)]).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(RttmFormatError);
      expect((error as Error).message).toContain('call.rttm:1: duration "1.x"');
    } finally {
      await temporary.remove();
    }
  });
});
