/**
 * Lists the user TURN_HOLD splits of a written dataset that fall inside a title: a question spoken in
 * two parts (metadata `questionPart` 1 and 2) whose pause lies strictly inside one of the dialogue's
 * TopiOCQA topics (e.g. "the man ‖ with the golden gun"). A person does not pause inside a title they
 * are asking about; the 30-dialogue real build must list none.
 *
 *   npx tsx scripts/check-pause-points.ts DATASET_DIR...
 *
 * Prints one line per split (`id turn: first ‖ second (inside: topic)`) and a count; exit code 1 when
 * any split is inside a title.
 */
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { phrasesAroundBoundary } from '../pipeline/text/turn-hold-split.ts';

interface MetadataUtterance {
  turnNumber: number;
  questionPart?: 1 | 2;
  text: { final: string; synthesized: string };
}
interface Metadata {
  id: string;
  source: { turns: { turnNumber: number; topic: string }[] };
  utterances: MetadataUtterance[];
}

/** One split of a dataset: where the pause falls and the titles it falls inside (none is right). */
export interface PausePoint {
  id: string;
  turnNumber: number;
  first: string;
  second: string;
  insideTitles: string[];
}

/** The TURN_HOLD splits of one dialogue's metadata, each with the topics its pause falls inside. */
export function pausePointsOf(metadata: Metadata): PausePoint[] {
  const topics = [...new Set(metadata.source.turns.map((turn) => turn.topic).filter((topic) => topic !== ''))];
  const points: PausePoint[] = [];
  for (const first of metadata.utterances.filter((utterance) => utterance.questionPart === 1)) {
    const second = metadata.utterances.find(
      (utterance) => utterance.questionPart === 2 && utterance.turnNumber === first.turnNumber,
    );
    const firstWords = first.text.synthesized.trim().split(/\s+/);
    const secondWords = (second?.text.synthesized ?? '').trim().split(/\s+/).filter(Boolean);
    const words = [...firstWords, ...secondWords];
    points.push({
      id: metadata.id,
      turnNumber: first.turnNumber,
      first: first.text.synthesized,
      second: second?.text.synthesized ?? '',
      insideTitles: phrasesAroundBoundary(words, firstWords.length, topics),
    });
  }
  return points;
}

async function main(directories: string[]): Promise<void> {
  if (directories.length === 0) throw new Error('usage: check-pause-points.ts DATASET_DIR...');
  let splits = 0;
  let inside = 0;
  for (const directory of directories) {
    const files = (await readdir(path.join(directory, 'metadata'))).filter((name) => name.endsWith('.json')).sort();
    for (const file of files) {
      const metadata = JSON.parse(await readFile(path.join(directory, 'metadata', file), 'utf8')) as Metadata;
      for (const point of pausePointsOf(metadata)) {
        splits += 1;
        if (point.insideTitles.length > 0) inside += 1;
        console.log(
          `${point.insideTitles.length > 0 ? 'INSIDE A TITLE' : 'ok'}\t${point.id} turn ${point.turnNumber}: ${point.first} ‖ ${point.second}${point.insideTitles.length > 0 ? ` (inside: ${point.insideTitles.join('; ')})` : ''}`,
        );
      }
    }
  }
  console.log(`${splits} TURN_HOLD splits, ${inside} inside a title`);
  if (inside > 0) process.exitCode = 1;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main(process.argv.slice(2)).catch((error: unknown) => {
    console.error(`check-pause-points: ${error instanceof Error ? error.message : String(error)}`);
    process.exitCode = 2;
  });
}
