/**
 * Regenerates corpora/demo/recorded-responses.jsonl from the HAND-WRITTEN texts in
 * corpora/demo/demo-responses.source.yaml (not model output), keyed by the exact requests the
 * pipeline builds. Run after changing a prompt template, the hand-written texts or the demo corpus:
 *
 *   npx tsx scripts/record-demo-responses.ts
 *
 * The same for another TopiOCQA-format corpus and its own texts (same YAML shape), e.g. the first 33
 * conversations of the TopiOCQA dev set, replayed by a build config with `corpus.limit: 33` and
 * `llm.rewrite` / `llm.translate` `{ backend: replay, file: OUT, model: MODEL }`:
 *
 *   npx tsx scripts/record-demo-responses.ts --corpus topiocqa_dev.json --limit 33 \
 *     --source texts.yaml --out recorded.jsonl --model assistant-written
 */
import { relative } from 'node:path';
import { Command, InvalidArgumentError } from 'commander';
import {
  DEMO_GENERATION_SETTINGS,
  DEMO_RECORDED_RESPONSES_FILE,
  recordDemoResponses,
} from '../corpora/demo/demo-recordings.ts';

const program = new Command()
  .name('record-demo-responses')
  .description(
    'Record hand-written spoken English and Japanese texts as a recorded-response file for `backend: replay`',
  )
  .option('--corpus <file>', 'TopiOCQA-format corpus (default: the demo corpus)')
  .option('--limit <count>', 'only the first N conversations', (value) => {
    const count = Number(value);
    if (!Number.isInteger(count) || count < 1) throw new InvalidArgumentError('must be a positive integer');
    return count;
  })
  .option('--source <file>', 'the hand-written texts, YAML (default: corpora/demo/demo-responses.source.yaml)')
  .option('--out <file>', 'recorded-response file to write (default: corpora/demo/recorded-responses.jsonl)')
  .option(
    '--model <name>',
    'model name the records carry; the replay config must use the same',
    DEMO_GENERATION_SETTINGS.model,
  )
  .parse();
const options = program.opts<{ corpus?: string; limit?: number; source?: string; out?: string; model: string }>();
const outputFile = options.out ?? DEMO_RECORDED_RESPONSES_FILE;
const { conversations, records } = await recordDemoResponses({
  ...(options.corpus !== undefined ? { corpusFile: options.corpus } : {}),
  ...(options.source !== undefined ? { sourceFile: options.source } : {}),
  ...(options.limit !== undefined ? { limit: options.limit } : {}),
  outputFile,
  settings: { ...DEMO_GENERATION_SETTINGS, model: options.model },
});
console.log(
  `wrote ${records} recorded responses for ${conversations} conversations to ${relative(process.cwd(), outputFile)}`,
);
