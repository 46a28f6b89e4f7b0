/**
 * "Flat at scale" in the `machines` bench section: the coordinator's CPU per dialogue and its peak
 * resident set at two build sizes (default 100 and 1,000 dialogues). TopiOCQA dev holds about 205
 * conversations, so the builds read a synthetic corpus written into the bench's folder: the dev
 * conversations over and over, each cut to its first {@link SCALE_TURNS_PER_CONVERSATION} turns and
 * numbered anew (1, 2, …; corpora/topiocqa.ts makes the ids from `Conversation_no`), so that 1,000
 * dialogues are cheap offline. Cutting at the first turns keeps each kept turn's `Context` (the earlier
 * questions and answers) as the loader checks it.
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { MachineRun } from './bench-machines-run.ts';

/** Turns kept of each conversation of the synthetic corpus. */
export const SCALE_TURNS_PER_CONVERSATION = 2;
/** Worker machines of the scale builds. */
export const SCALE_WORKERS = 4;
/** The build sizes compared, dialogues (the issue's 100 against 1,000). */
export const DEFAULT_SCALE_DIALOGUES: readonly [number, number] = [100, 1000];

/** A raw TopiOCQA turn record, as far as the synthetic corpus reads it (the other fields are copied). */
export interface RawTopiocqaRecord {
  Conversation_no: number;
  Turn_no: number;
  [field: string]: unknown;
}

/**
 * `conversations` conversations made of the source's conversations in order of their number, over
 * and over: each its first `turnsPerConversation` turns, renumbered 1 … `conversations`.
 * @throws RangeError when a count is not a positive integer or the source has no records
 */
export function repeatedConversations(
  records: readonly RawTopiocqaRecord[],
  conversations: number,
  turnsPerConversation: number,
): RawTopiocqaRecord[] {
  if (
    !Number.isInteger(conversations) ||
    conversations < 1 ||
    !Number.isInteger(turnsPerConversation) ||
    turnsPerConversation < 1
  )
    throw new RangeError('the conversations and the turns per conversation must be positive integers');
  const groups = new Map<number, RawTopiocqaRecord[]>();
  for (const record of records) {
    const group = groups.get(record.Conversation_no) ?? [];
    group.push(record);
    groups.set(record.Conversation_no, group);
  }
  if (groups.size === 0) throw new RangeError('the source corpus has no records');
  const sources = [...groups.keys()]
    .sort((a, b) => a - b)
    .map((number) =>
      groups
        .get(number)!
        .filter((record) => record.Turn_no <= turnsPerConversation)
        .sort((a, b) => a.Turn_no - b.Turn_no),
    );
  const out: RawTopiocqaRecord[] = [];
  for (let index = 0; index < conversations; index++)
    for (const record of sources[index % sources.length]!) out.push({ ...record, Conversation_no: index + 1 });
  return out;
}

/**
 * Write the synthetic corpus of `conversations` conversations made from the TopiOCQA file `source` into `directory`.
 * @returns the file's path
 * @throws Error when `source` is unreadable or not a JSON list
 */
export async function writeScaleCorpus(source: string, directory: string, conversations: number): Promise<string> {
  const records = JSON.parse(await readFile(source, 'utf8')) as unknown;
  if (!Array.isArray(records)) throw new Error(`${source}: not a JSON list of TopiOCQA turn records`);
  const file = path.join(directory, `topiocqa-repeated-${conversations}.json`);
  await writeFile(
    file,
    JSON.stringify(repeatedConversations(records as RawTopiocqaRecord[], conversations, SCALE_TURNS_PER_CONVERSATION)),
  );
  return file;
}

/**
 * The scale sizes from the command's option: two distinct positive integers, smaller first.
 * @throws RangeError naming the option otherwise
 */
export function scaleSizes(option: readonly number[] | undefined): [number, number] {
  if (option === undefined || option.length === 0) return [...DEFAULT_SCALE_DIALOGUES];
  const sizes = [...option].sort((a, b) => a - b);
  if (sizes.length !== 2 || sizes[0] === sizes[1] || !sizes.every((size) => Number.isInteger(size) && size > 0))
    throw new RangeError(
      `--scale-dialogues takes two different positive numbers of dialogues, got ${option.join(' ')}`,
    );
  return [sizes[0]!, sizes[1]!];
}

/** The coordinator at two build sizes. */
export interface FlatAtScale {
  /** Coordinator CPU ms per dialogue of the smaller and of the larger build. */
  cpuMillisecondsPerDialogue: [number, number];
  /** Larger over smaller (≤ 1 when the fixed start-up share shrinks: flat or better). */
  cpuPerDialogueRatio: number;
  /** Coordinator CPU ms per added dialogue between the two sizes. */
  marginalCpuMilliseconds: number;
  /** Peak resident set of the coordinator, MiB, of the smaller and of the larger build (null: not measured). */
  peakResidentMebibytes: [number | null, number | null];
  /** Larger over smaller; null when either was not measured. */
  peakResidentRatio: number | null;
}

/**
 * The coordinator's figures of the two scale builds.
 * @throws RangeError when `large` has no more dialogues than `small`
 */
export function flatAtScale(small: MachineRun, large: MachineRun): FlatAtScale {
  if (!(large.dialogues > small.dialogues)) throw new RangeError('the larger build must have more dialogues');
  const perDialogue = (run: MachineRun) => (run.coordinatorCpuSeconds * 1000) / run.dialogues;
  const peak = (run: MachineRun) =>
    run.coordinatorPeakResidentKibibytes == null ? null : run.coordinatorPeakResidentKibibytes / 1024;
  const [smallPeak, largePeak] = [peak(small), peak(large)];
  return {
    cpuMillisecondsPerDialogue: [perDialogue(small), perDialogue(large)],
    cpuPerDialogueRatio: perDialogue(large) / perDialogue(small),
    marginalCpuMilliseconds:
      ((large.coordinatorCpuSeconds - small.coordinatorCpuSeconds) * 1000) / (large.dialogues - small.dialogues),
    peakResidentMebibytes: [smallPeak, largePeak],
    peakResidentRatio: smallPeak && largePeak ? largePeak / smallPeak : null,
  };
}

/** The scale builds' table: one row per build. */
export function formatScaleRuns(runs: readonly MachineRun[]): string {
  const rows = runs.map(
    (run) =>
      `| ${run.dialogues} | ${run.workers} | ${run.wallSeconds.toFixed(1)} | ${run.coordinatorCpuSeconds.toFixed(2)} | ${((run.coordinatorCpuSeconds * 1000) / run.dialogues).toFixed(1)} | ${run.coordinatorPeakResidentKibibytes == null ? '–' : (run.coordinatorPeakResidentKibibytes / 1024).toFixed(0)} | ${(run.redisCommands / run.dialogues).toFixed(0)} | ${(run.redisBytes / run.dialogues / 1024).toFixed(1)} |`,
  );
  return [
    '| dialogues | workers | wall s | coordinator CPU s | coordinator CPU ms / dialogue | coordinator peak RSS MiB | Redis commands / dialogue | Redis KiB / dialogue |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...rows,
  ].join('\n');
}

/** One sentence of the scale builds for the scale-out page. */
export function scaleSentence(flat: FlatAtScale, sizes: readonly [number, number]): string {
  const [small, large] = sizes.map((size) => size.toLocaleString('en'));
  const [smallCpu, largeCpu] = flat.cpuMillisecondsPerDialogue.map((ms) => ms.toFixed(1));
  const [smallPeak, largePeak] = flat.peakResidentMebibytes.map((mib) => (mib === null ? '–' : mib.toFixed(0)));
  return (
    `Flat at scale (${SCALE_TURNS_PER_CONVERSATION}-turn dialogues, ${SCALE_WORKERS} workers): the coordinator spends ${smallCpu} CPU ms per dialogue at ${small} dialogues and ${largeCpu} at ${large} (${flat.cpuPerDialogueRatio.toFixed(2)} ×; ${flat.marginalCpuMilliseconds.toFixed(1)} ms per added dialogue), ` +
    `its peak resident set ${smallPeak} and ${largePeak} MiB (${flat.peakResidentRatio === null ? 'not measured' : `${flat.peakResidentRatio.toFixed(2)} ×`}).`
  );
}
