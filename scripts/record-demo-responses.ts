/**
 * Regenerates corpora/demo/recorded-responses.jsonl from the HAND-WRITTEN texts in
 * corpora/demo/demo-responses.source.yaml (not model output), keyed by the exact requests the
 * pipeline builds. Run after changing a prompt template, the hand-written texts or the demo corpus:
 *
 *   npx tsx scripts/record-demo-responses.ts
 */
import { relative } from 'node:path';
import { DEMO_RECORDED_RESPONSES_FILE, recordDemoResponses } from '../corpora/demo/demo-recordings.ts';

const { conversations, records } = await recordDemoResponses();
console.log(`wrote ${records} recorded responses for ${conversations} demo conversations to ${relative(process.cwd(), DEMO_RECORDED_RESPONSES_FILE)}`);
