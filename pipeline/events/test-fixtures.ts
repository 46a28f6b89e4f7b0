/**
 * Test-only helpers: paths of the shared conformance vectors, and a compact event constructor.
 * The shared folder is referenced by path, never copied: `DUPLEXSYNTH_SHARED` (absolute, or relative to
 * the project root), default `../shared` from the project root.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BenchmarkEvent, BenchmarkEventType, Centiseconds } from '../model/types.ts';

const PROJECT_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Absolute path of the shared read-only folder. */
export const SHARED_DIR = path.resolve(PROJECT_ROOT, process.env.DUPLEXSYNTH_SHARED ?? '../shared');

const TOY_DATA = path.join(SHARED_DIR, 'conformance/m3-toy/data/ja');

/** The two reference dialogues: events JSONL (one line) and word alignment. */
export const CONFORMANCE_VECTORS = [
  {
    name: 'real chat (MagicData)',
    id: 'A0022_S0003.0.0-120.0',
    jsonl: path.join(TOY_DATA, 'chat/magicdata_toy/test.jsonl'),
    alignment: path.join(TOY_DATA, 'chat/magicdata_toy/txt_align/A0022_S0003.0.0-120.0.txt'),
  },
  {
    name: 'synthetic MT-QA (TopiOCQA ja)',
    id: 'topiocqa_dev_0001',
    jsonl: path.join(TOY_DATA, 'task/topiocqa_ja_toy/test.jsonl'),
    alignment: path.join(TOY_DATA, 'task/topiocqa_ja_toy/txt_align/topiocqa_dev_0001.txt'),
  },
] as const;

/** `event('TURN', 0, 300)` -> `{ event: 'TURN', start: 0, end: 300 }` (centiseconds). */
export function event(type: BenchmarkEventType, start: Centiseconds, end: Centiseconds): BenchmarkEvent {
  return { event: type, start, end };
}
