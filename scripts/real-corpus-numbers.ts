/**
 * The README's numbers about the real-corpus build, generated from that build, so that the README
 * and the build it describes cannot disagree. Reads a build's output folder (the
 * README's real-corpus command with `--out`): per dataset `summary.json`, `split.json`, `quality.json`
 * and `all.jsonl`, and the base dataset's `fidelity.json`, and writes the table between the README's `<!-- real-corpus-numbers:begin -->` and
 * `<!-- real-corpus-numbers:end -->` markers.
 *
 *   npx tsx scripts/real-corpus-numbers.ts OUT [--lang en] [--dataset topiocqa] [--write README.md | --check README.md]
 *
 * Without `--write`/`--check` it prints the table. `--check` exits 1 when the README's table differs
 * from the build's (the README describes another build, or was edited by hand).
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { datasetSummarySchema, type DatasetSummary } from '../pipeline/model/dataset-summary.ts';
import { datasetQualityReportSchema } from '../pipeline/model/quality-report.ts';
import { splitReportSchema } from '../pipeline/model/split-report.ts';
import { parseEventsLine } from '../pipeline/events/jsonl.ts';
import { evaluableShare } from '../pipeline/events/evaluable-events.ts';
import { writeAtomic } from '../pipeline/storage/write-atomic.ts';

export const BEGIN_MARKER = '<!-- real-corpus-numbers:begin -->';
export const END_MARKER = '<!-- real-corpus-numbers:end -->';

/** The benchmark's own MT-QA TURN_HOLD pauses span 0.86–1.87 s. */
const BENCHMARK_PAUSE_RANGE: [number, number] = [0.86, 1.87];

/** The parts of `fidelity.json` (pipeline/timeline/fidelity.ts) the table quotes. */
const fidelitySchema = z.object({
  directions: z.array(z.object({ direction: z.string(), kolmogorovSmirnovDistance: z.number() })),
  bargeIn: z.object({ measuredFraction: z.number(), generatedFraction: z.number() }),
  backchannels: z.object({ measuredPerMinute: z.number(), generatedPerMinute: z.number() }),
  atoms: z.object({
    limitFraction: z.number(),
    generated: z.array(z.object({ list: z.string(), valueSeconds: z.number(), fraction: z.number() })),
  }),
  checks: z.array(z.object({ name: z.string(), passed: z.boolean() })),
});

/** The user channel of task data (docs/dataset-format.md, section audio/{id}.wav: user 1, system 0). */
const USER_CHANNEL = 1;

async function readJson(file: string): Promise<unknown> {
  try {
    return JSON.parse(await readFile(file, 'utf8'));
  } catch (error) {
    throw new Error(`${file}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** The median of a non-empty list (mean of the middle two for an even count). */
function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/**
 * `samples of candidates` of one event type under one loader setting of a summary: the candidates are
 * the events that setting evaluates (`evaluableShare`: not on another channel, not ignored).
 */
function evaluable(
  summary: DatasetSummary,
  setting: 'with context' | 'without context',
  event: 'TURN_SHIFT' | 'TURN_HOLD' | 'BARGE_IN',
): string {
  const report = summary.evaluableEvents.find(
    (candidate) => candidate.settings.useContext === (setting === 'with context'),
  );
  if (report === undefined) return 'not reported';
  const { candidates, samples } = evaluableShare(report, event);
  return `${samples} of ${candidates}`;
}

/**
 * The README table of one real-corpus build (module comment).
 * @param out the build's `--out` folder
 * @returns markdown: a table, one row per figure, each computed from the files named in the module comment
 * @throws Error naming the file when one is missing or does not match its schema
 */
export async function realCorpusNumbers(out: string, language = 'en', dataset = 'topiocqa'): Promise<string> {
  const directoryOf = (name: string) => path.join(out, 'data', language, 'task', name);
  const base = directoryOf(dataset);
  const variant = directoryOf(`${dataset}_bargein`);
  const summary = datasetSummarySchema.parse(await readJson(path.join(base, 'summary.json')));
  const variantSummary = datasetSummarySchema.parse(await readJson(path.join(variant, 'summary.json')));
  // a build with --no-score (or whose scoring did not finish) has neither split.json nor quality.json: those rows say so
  const scored = existsSync(path.join(base, 'quality.json'));
  const split = scored ? splitReportSchema.parse(await readJson(path.join(base, 'split.json'))) : null;
  const quality = scored ? datasetQualityReportSchema.parse(await readJson(path.join(base, 'quality.json'))) : null;
  const variantQuality = scored
    ? datasetQualityReportSchema.parse(await readJson(path.join(variant, 'quality.json')))
    : null;
  const fidelity = fidelitySchema.parse(await readJson(path.join(base, 'fidelity.json')));
  // the user's TURN_HOLD pauses as the events file has them
  const pauses: number[] = [];
  const allFile = path.join(base, 'all.jsonl');
  (await readFile(allFile, 'utf8')).split('\n').forEach((line, index) => {
    if (line.trim() === '') return;
    const { events } = parseEventsLine(line, `${allFile}:${index + 1}`);
    for (const event of events[USER_CHANNEL])
      if (event.event === 'TURN_HOLD') pauses.push((event.end - event.start) / 100);
  });
  const [low, high] = BENCHMARK_PAUSE_RANGE;
  const inRange = pauses.filter((pause) => pause >= low && pause <= high).length;
  const seconds = (value: number | null | undefined) =>
    value === null || value === undefined ? 'n/a' : `${value.toFixed(2)} s`;
  const hours = (value: number) => `${value.toFixed(2)} h`;
  const words = (value: number | null | undefined) =>
    value === null || value === undefined ? 'n/a' : `${value} word${value === 1 ? '' : 's'}`;
  const splitCell = (name: 'test' | 'test_small' | 'dev') => {
    const entry = split?.splits[name];
    return entry ? `${entry.dialogues} (${hours(entry.hours)})` : 'none';
  };
  const bargeIns = variantSummary.bargeIns;
  const unspoken = bargeIns?.unspoken;
  const peak = (value: number | null) => (value === null ? 'n/a' : `${value.toFixed(1)} dBTP`);
  const atomsOf = (...lists: string[]) => {
    const atoms = fidelity.atoms.generated.filter((atom) => lists.includes(atom.list));
    return atoms.length === 0
      ? 'none'
      : atoms.map((atom) => `${atom.valueSeconds.toFixed(2)} s (${(atom.fraction * 100).toFixed(1)} %)`).join(', ');
  };
  const rows: [string, string][] = [
    [
      'dialogues, audio',
      `${summary.dialogues}, ${hours(summary.totalHours)} (mean ${summary.meanSeconds.toFixed(1)} s); ${summary.failed.length} failed`,
    ],
    [
      'split (`split.json`)',
      split === null
        ? 'not split: no split.json (built with --no-score, or its scoring did not finish)'
        : `test ${splitCell('test')}, test_small ${splitCell('test_small')}, test_other ${splitCell('dev')}; ${split.settings.unit} unit, ${split.excluded.length} excluded${split.excluded.length > 0 ? `: ${split.excluded.map((item) => `${item.id} (${item.reason})`).join(', ')}` : ''}`,
    ],
    [
      'system TURN_SHIFTs evaluable (task, channel 1, without context)',
      evaluable(summary, 'without context', 'TURN_SHIFT'),
    ],
    [
      'user TURN_HOLDs',
      `${pauses.length} (${summary.splitQuestions} split questions, ${summary.splitQuestionsSpokenWhole} chosen but spoken whole); evaluable ${evaluable(summary, 'without context', 'TURN_HOLD')}; pause median ${pauses.length > 0 ? seconds(median(pauses)) : 'n/a'}, range ${pauses.length > 0 ? `${seconds(Math.min(...pauses))}–${seconds(Math.max(...pauses))}` : 'n/a'}, ${inRange} of ${pauses.length} within the benchmark's ${low}–${high} s`,
    ],
    [
      `\`${dataset}_bargein\` barge-ins`,
      bargeIns
        ? `${bargeIns.placed} placed (${bargeIns.answersTooShort} answers too short); evaluable with context ${evaluable(variantSummary, 'with context', 'BARGE_IN')}; unspoken part (least, median): ${seconds(unspoken?.minimumSeconds)}, ${seconds(unspoken?.medianSeconds)}; ${words(unspoken?.minimumWords)}, ${words(unspoken?.medianWords)}; ${unspoken?.withoutUnspokenWords ?? 'n/a'} without an unspoken word`
        : 'none',
    ],
    [
      'fidelity (`fidelity.json`)',
      `${fidelity.checks.filter((check) => check.passed).length} of ${fidelity.checks.length} checks passed; KS ${fidelity.directions.map((direction) => `${direction.direction} ${direction.kolmogorovSmirnovDistance.toFixed(3)}`).join(', ')}; barge-in rate ${fidelity.bargeIn.generatedFraction.toFixed(3)} vs ${fidelity.bargeIn.measuredFraction.toFixed(3)} measured; backchannels ${fidelity.backchannels.generatedPerMinute.toFixed(2)} vs ${fidelity.backchannels.measuredPerMinute.toFixed(2)} per minute; offset values holding more than ${(fidelity.atoms.limitFraction * 100).toFixed(0)} % (all speaker changes; per direction): ${atomsOf('generated.both')}; ${atomsOf('generated.channel0->channel1', 'generated.channel1->channel0')}`,
    ],
    [
      'quality (`quality.json`)',
      quality === null || variantQuality === null
        ? 'not scored: no quality.json'
        : `DNSMOS OVRL ${quality.aggregates.dnsmos ? quality.aggregates.dnsmos.ovrl.toFixed(2) : 'n/a'}; highest true peak ${peak(quality.aggregates.maximumTruePeakDbtp)} (\`_bargein\` ${peak(variantQuality.aggregates.maximumTruePeakDbtp)}); loudness ${quality.aggregates.meanChannelLoudnessLufs === null ? 'n/a' : `${quality.aggregates.meanChannelLoudnessLufs.toFixed(1)} LUFS`} (mean channel)`,
    ],
  ];
  return ['| | result |', '|---|---|', ...rows.map(([name, value]) => `| ${name} | ${value} |`)].join('\n');
}

/**
 * `text` with the part between the markers replaced by `table` (the markers kept, each on its own line).
 * @throws Error when the markers are missing or out of order
 */
export function replaceGeneratedSection(text: string, table: string): string {
  const begin = text.indexOf(BEGIN_MARKER);
  const end = text.indexOf(END_MARKER);
  if (begin < 0 || end < begin) throw new Error(`the README has no ${BEGIN_MARKER} … ${END_MARKER} section`);
  return `${text.slice(0, begin + BEGIN_MARKER.length)}\n${table}\n${text.slice(end)}`;
}

async function main(argv: string[]): Promise<void> {
  const option = (name: string) => {
    const index = argv.indexOf(name);
    if (index < 0) return undefined;
    const value = argv[index + 1];
    if (value === undefined) throw new Error(`${name} needs a value`);
    argv.splice(index, 2);
    return value;
  };
  const language = option('--lang') ?? 'en';
  const dataset = option('--dataset') ?? 'topiocqa';
  const write = option('--write');
  const check = option('--check');
  const [out, ...rest] = argv;
  if (out === undefined || rest.length > 0)
    throw new Error(
      'usage: real-corpus-numbers.ts OUT [--lang en] [--dataset topiocqa] [--write README.md | --check README.md]',
    );
  const table = await realCorpusNumbers(out, language, dataset);
  const readme = write ?? check;
  if (readme === undefined) {
    console.log(table);
    return;
  }
  const text = await readFile(readme, 'utf8');
  const updated = replaceGeneratedSection(text, table);
  if (check !== undefined) {
    if (updated !== text) {
      console.error(`${readme}: the real-corpus numbers differ from the build in ${out}; run with --write ${readme}`);
      process.exitCode = 1;
    } else console.log(`${readme}: the real-corpus numbers match the build in ${out}`);
    return;
  }
  await writeAtomic(readme, updated);
  console.log(`${readme}: real-corpus numbers written from ${out}`);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main(process.argv.slice(2)).catch((error: unknown) => {
    console.error(`real-corpus-numbers: ${error instanceof Error ? error.message : String(error)}`);
    process.exitCode = 2;
  });
}
