/**
 * Regenerates `pipeline/timeline/defaults/en.question-pauses.json`: the within-turn pauses of
 * question-like turns of the 128 HCRC Map Task dialogues (word-level NXT timings in the shared folder,
 * `corpora/reference-timing/maptask`; pipeline/timeline/question-pauses.ts says how they are found),
 * from which a question split in two draws its pause (the benchmark profile's user TURN_HOLD).
 *
 *     npx tsx scripts/derive-question-pauses.ts            # write the file, print its summary
 *     npx tsx scripts/derive-question-pauses.ts --check    # write nothing; exit 1 if the file would change
 *
 * CallFriend (English and Japanese) is utterance-level RTTM without words, so questions cannot be told
 * there; Japanese keeps the TURN_HOLD gaps of its timing statistics.
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { prepareNxt } from '../corpora/nxt.ts';
import { sharedDirectory } from '../pipeline/config.ts';
import {
  defaultQuestionPausesPath,
  measureQuestionPauses,
  questionPausesFile,
} from '../pipeline/timeline/question-pauses.ts';

const MAPTASK = 'corpora/reference-timing/maptask';

/** The file's text, as written (2-space JSON, final newline). */
export async function deriveQuestionPausesText(): Promise<string> {
  const recordings = await prepareNxt([path.join(sharedDirectory(), MAPTASK)]);
  const file = questionPausesFile(
    measureQuestionPauses(recordings),
    {
      corpus:
        'HCRC Map Task Corpus Annotations v2.1 (University of Edinburgh) via pastav/HCRC_Map_Task, commit cb3701b; CC BY-NC-SA 2.5',
      sourcePath: `${MAPTASK} in the shared folder (DUPLEXSYNTH_SHARED, default ../shared)`,
      command: 'npx tsx scripts/derive-question-pauses.ts',
    },
    'en',
  );
  return `${JSON.stringify(file, null, 2)}\n`;
}

async function main(check: boolean): Promise<void> {
  const text = await deriveQuestionPausesText();
  const target = defaultQuestionPausesPath('en');
  const summary = JSON.parse(text) as ReturnType<typeof questionPausesFile>;
  console.log(
    `${summary.questionPauses.summary.count} question pauses (median ${summary.questionPauses.summary.median} s, 10th-90th percentile ${summary.comparison.p10}-${summary.comparison.p90} s, ${(summary.comparison.shareInBenchmarkRange * 100).toFixed(1)} % in 0.86-1.87 s); all within-turn pauses: ${summary.withinTurnSummary.count}, median ${summary.withinTurnSummary.median} s`,
  );
  if (check) {
    const current = await readFile(target, 'utf8').catch(() => '');
    if (current !== text) {
      console.error(`${target} would change; run npx tsx scripts/derive-question-pauses.ts`);
      process.exitCode = 1;
    }
    return;
  }
  await writeFile(target, text);
  console.log(target);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  main(process.argv.includes('--check')).catch((error: unknown) => {
    console.error(`derive-question-pauses: ${error instanceof Error ? error.message : String(error)}`);
    process.exitCode = 2;
  });
}
