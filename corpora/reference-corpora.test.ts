import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { sharedDirectory } from '../pipeline/config.ts';
import {
  isReferenceCorpusFormat,
  loadReferenceCorpus,
  REFERENCE_CORPUS_FORMATS,
  REFERENCE_CORPUS_LOADERS,
} from './reference-corpora.ts';
import { validateReferenceRecording } from './reference-recording.ts';
import { energyDetector, FIXTURES } from './reference-test-audio.ts';

const SHARED = sharedDirectory();

describe('reference corpus registry', () => {
  it('has one loader per format', () => {
    expect(Object.keys(REFERENCE_CORPUS_LOADERS).sort()).toEqual([...REFERENCE_CORPUS_FORMATS].sort());
    expect(isReferenceCorpusFormat('candor')).toBe(true);
    expect(isReferenceCorpusFormat('switchboard')).toBe(false);
  });

  it('loads every format through one call, all in the one ReferenceRecording shape', async () => {
    const loaded = {
      'stereo-wav': await loadReferenceCorpus('stereo-wav', [path.join(SHARED, 'corpora', 'reference-audio', 'ja')], {
        detector: energyDetector(),
      }),
      candor: await loadReferenceCorpus('candor', [path.join(FIXTURES, 'candor')]),
      magicdata: await loadReferenceCorpus('magicdata', [path.join(FIXTURES, 'magicdata')], {
        verifyChannelOrder: false,
      }),
      rttm: await loadReferenceCorpus('rttm', [path.join(SHARED, 'corpora', 'reference-timing', 'rttm', 'en')]),
      'm3-events': await loadReferenceCorpus('m3-events', [
        path.join(SHARED, 'conformance', 'm3-toy', 'data', 'ja', 'chat', 'magicdata_toy'),
        path.join(SHARED, 'conformance', 'm3-toy', 'data', 'ja', 'task', 'topiocqa_ja_toy'),
      ]),
      nxt: await loadReferenceCorpus('nxt', [
        path.join(SHARED, 'corpora', 'reference-timing', 'maptask', 'q1ec1.g.timed-units.xml'),
      ]),
      textgrid: await loadReferenceCorpus('textgrid', [path.join(FIXTURES, 'textgrid', 'mfa-long.TextGrid')]),
      ctm: await loadReferenceCorpus('ctm', [path.join(FIXTURES, 'ctm')]),
    };
    expect(
      Object.fromEntries(Object.entries(loaded).map(([format, recordings]) => [format, recordings.length])),
    ).toEqual({
      'stereo-wav': 2,
      candor: 2,
      magicdata: 2,
      rttm: 31,
      'm3-events': 2,
      nxt: 1,
      textgrid: 1,
      ctm: 3,
    });
    for (const [format, recordings] of Object.entries(loaded)) {
      for (const recording of recordings) {
        expect(recording.format).toBe(format);
        expect(recording.notes.length).toBeGreaterThan(0);
        validateReferenceRecording(recording);
      }
    }
  });

  it('names the known formats for an unknown one', () => {
    expect(() => loadReferenceCorpus('switchboard' as 'rttm', [])).toThrow(
      'unknown reference corpus format "switchboard"; known: stereo-wav, candor, magicdata, rttm, m3-events, nxt, textgrid, ctm',
    );
  });
});
