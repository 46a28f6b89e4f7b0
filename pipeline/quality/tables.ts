/**
 * Per-track tables, written next to a dataset as `tables.md` and `tables.json`:
 * - a quality table per split: DNSMOS OVRL / SIG / BAK / P808, COMETKiwi (or "not computed: reason"),
 *   mean channel loudness and highest true peak, speech rate, role/label disagreements;
 * - a statistics table per split (like the paper's): dialogues, hours, mean seconds, TURN_SHIFT,
 *   TURN_HOLD, BC, BARGE_IN.
 * Splits come from `split.json` (stages/split-dev-test.ts) when present, plus `all` (every dialogue
 * of all.jsonl). Quality values come from `quality.json` when present ("not scored" otherwise).
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { BenchmarkEventType, Language } from '../model/types.ts';
import { writeAtomic } from '../storage/write-atomic.ts';
import { readDatasetFolder, type DatasetFolder } from './dataset-files.ts';
import { speechRateUnit, speechRateUnitLabel } from './speech-rate.ts';
import {
  aggregateQuality,
  readQualityReport,
  type DatasetCometKiwi,
  type QualityAggregates,
} from './quality-report.ts';

/** Name of the split report a split stage writes in the dataset folder. */
export const SPLIT_FILE_NAME = 'split.json';
/** Names of the table files. */
export const TABLES_MARKDOWN_FILE_NAME = 'tables.md';
export const TABLES_JSON_FILE_NAME = 'tables.json';

/** The split names in table order; `all` is every dialogue of all.jsonl. */
/** Split names in split.json (`dev` is the rest, shown as `test_other`). */
export const TABLE_SPLITS = ['test', 'test_small', 'dev', 'all'] as const;

/**
 * Event types of the statistics table: those of the paper's published table (SHIFT, BARGE_IN) plus
 * TURN_HOLD and BC.
 */
export const STATISTICS_EVENT_TYPES = [
  'TURN_SHIFT',
  'TURN_HOLD',
  'BC',
  'BARGE_IN',
] as const satisfies readonly BenchmarkEventType[];

/** One row of the statistics table. */
export interface StatisticsRow {
  split: string;
  dialogues: number;
  hours: number;
  meanSeconds: number;
  events: Record<(typeof STATISTICS_EVENT_TYPES)[number], number>;
}

/** One row of the quality table; `quality` is null when the dataset has not been scored. */
export interface QualityRow {
  split: string;
  quality: QualityAggregates | null;
}

/** The tables of one dataset (one track). */
export interface DatasetTables {
  /** Track label like the paper's, e.g. `MT-QA (Ja)`. */
  track: string;
  language: Language;
  dataset: string;
  /** Dataset-level COMETKiwi status (null: not a translated dataset, or not scored). */
  cometKiwi: DatasetCometKiwi | null;
  scored: boolean;
  quality: QualityRow[];
  statistics: StatisticsRow[];
}

/** `MT-QA (En)` for domain `task`, `Chat (Ja)` for `chat`, else `{domain} ({Lang})`. */
export function trackLabel(domain: string, language: Language): string {
  const name = domain === 'task' ? 'MT-QA' : domain === 'chat' ? 'Chat' : domain;
  return `${name} (${language.charAt(0).toUpperCase()}${language.slice(1)})`;
}

function round(value: number, digits: number): number {
  const factor = 10 ** digits;
  const rounded = Math.round(value * factor) / factor;
  return rounded === 0 ? 0 : rounded; // no -0
}

/** Split name -> dialogue ids, from split.json when present, plus `all`. */
async function readSplitIds(folder: DatasetFolder): Promise<Map<string, string[]>> {
  const splits = new Map<string, string[]>();
  const file = path.join(folder.directory, SPLIT_FILE_NAME);
  const text = await readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return null;
    throw error;
  });
  if (text !== null) {
    const report = JSON.parse(text) as { splits?: Record<string, { ids?: unknown }> };
    for (const name of TABLE_SPLITS) {
      const ids = report.splits?.[name]?.ids;
      // split.json's `dev` is the rest, written as test_other.jsonl (the benchmark's split name; dev.jsonl is its alias)
      if (Array.isArray(ids)) splits.set(name === 'dev' ? 'test_other' : name, ids.map(String));
    }
  }
  splits.set(
    'all',
    folder.dialogues.map((dialogue) => dialogue.id),
  );
  return splits;
}

/**
 * The statistics row of the dialogues `ids` of `folder` (durations from metadata, events from
 * all.jsonl).
 * @throws Error naming an id that is not in the dataset.
 */
export function statisticsRow(folder: DatasetFolder, split: string, ids: readonly string[]): StatisticsRow {
  const byId = new Map(folder.dialogues.map((dialogue) => [dialogue.id, dialogue]));
  const events = Object.fromEntries(STATISTICS_EVENT_TYPES.map((type) => [type, 0])) as StatisticsRow['events'];
  let seconds = 0;
  for (const id of ids) {
    const dialogue = byId.get(id);
    if (!dialogue)
      throw new Error(`${folder.directory}: split ${split} names dialogue ${id}, which all.jsonl does not have`);
    seconds += dialogue.metadata.durationSeconds;
    for (const channel of [0, 1] as const) {
      for (const event of dialogue.events[channel])
        if (event.event in events) events[event.event as keyof StatisticsRow['events']] += 1;
    }
  }
  return {
    split,
    dialogues: ids.length,
    hours: round(seconds / 3600, 2),
    meanSeconds: ids.length ? round(seconds / ids.length, 1) : 0,
    events,
  };
}

/**
 * Builds the tables of one dataset folder from all.jsonl, metadata, and (when present) quality.json
 * and split.json.
 * @param directory the folder, or the folder as `readDatasetFolder` read it (not read again)
 * @throws DatasetReadError for an unreadable dataset; Error when quality.json or split.json is
 *   malformed or names unknown dialogues.
 */
export async function buildDatasetTables(directory: string | DatasetFolder): Promise<DatasetTables> {
  const folder = typeof directory === 'string' ? await readDatasetFolder(directory) : directory;
  const report = await readQualityReport(folder.directory);
  const splits = await readSplitIds(folder);
  const qualityById = new Map((report?.dialogues ?? []).map((dialogue) => [dialogue.id, dialogue]));
  const unit = speechRateUnit(folder.language);
  const quality: QualityRow[] = [];
  const statistics: StatisticsRow[] = [];
  for (const [split, ids] of splits) {
    statistics.push(statisticsRow(folder, split, ids));
    const scored = report ? ids.map((id) => qualityById.get(id)).filter((dialogue) => dialogue !== undefined) : [];
    quality.push({ split, quality: report && scored.length === ids.length ? aggregateQuality(scored, unit) : null });
  }
  return {
    track: trackLabel(folder.domain, folder.language),
    language: folder.language,
    dataset: folder.dataset,
    cometKiwi: report?.cometKiwi ?? null,
    scored: report !== null,
    quality,
    statistics,
  };
}

function cell(value: number | null | undefined, digits: number): string {
  return value === null || value === undefined ? '—' : value.toFixed(digits);
}

function escapeCell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\s+/g, ' ');
}

/** The COMETKiwi cell: the score, `not computed: reason`, or `—` (not a translated dataset). */
function cometCell(tables: DatasetTables, aggregates: QualityAggregates): string {
  if (tables.cometKiwi === null) return '—';
  if (!tables.cometKiwi.computed) return escapeCell(`not computed: ${tables.cometKiwi.reason}`);
  return cell(aggregates.cometKiwi, 3);
}

/** Markdown of the tables of one or more datasets: per dataset a quality table and a statistics table. */
export function formatTablesMarkdown(tables: readonly DatasetTables[]): string {
  const lines: string[] = [];
  for (const table of tables) {
    lines.push(`## ${table.track}: ${table.dataset}`, '');
    lines.push('### Quality', '');
    if (!table.scored) {
      lines.push('not scored (run `duplexsynth score` on the dataset folder)', '');
    } else {
      const unit = speechRateUnitLabel(table.language);
      lines.push(
        `| split | dialogues | DNSMOS OVRL | SIG | BAK | P808 | COMETKiwi | loudness (LUFS, mean channel) | max true peak (dBTP) | speech rate (${unit}) | role/label disagreements |`,
      );
      lines.push('|---|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|');
      for (const row of table.quality) {
        const q = row.quality;
        if (!q) {
          lines.push(`| ${row.split} | — | not scored | | | | | | | | |`);
          continue;
        }
        lines.push(
          `| ${row.split} | ${q.dialogues} | ${cell(q.dnsmos?.ovrl, 2)} | ${cell(q.dnsmos?.sig, 2)} | ${cell(q.dnsmos?.bak, 2)} | ${cell(q.dnsmos?.p808, 2)} | ${cometCell(table, q)} | ${cell(q.meanChannelLoudnessLufs, 1)} | ${cell(q.maximumTruePeakDbtp, 1)} | ${cell(q.speechRate, 2)} | ${q.roleLabelDisagreements} |`,
        );
      }
      lines.push('');
    }
    lines.push('### Statistics', '');
    lines.push('| split | dialogues | hours | mean s | SHIFT (TURN_SHIFT) | PAUSE (TURN_HOLD) | BC | BARGE_IN |');
    lines.push('|---|---:|---:|---:|---:|---:|---:|---:|');
    for (const row of table.statistics) {
      const e = row.events;
      lines.push(
        `| ${row.split} | ${row.dialogues} | ${row.hours.toFixed(2)} | ${row.meanSeconds.toFixed(1)} | ${e.TURN_SHIFT} | ${e.TURN_HOLD} | ${e.BC} | ${e.BARGE_IN} |`,
      );
    }
    lines.push('');
  }
  return lines.join('\n');
}

/**
 * The paper's Table 3 over several datasets (variants included): one row per dataset and split —
 * dialogues, hours, mean seconds, SHIFT (TURN_SHIFT), PAUSE (TURN_HOLD), BC, BARGE_IN.
 */
export function formatStatisticsTableMarkdown(tables: readonly DatasetTables[]): string {
  const lines = [
    '| dataset | split | dialogues | hours | mean s | SHIFT | PAUSE | BC | BARGE_IN |',
    '|---|---|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const table of tables) {
    for (const row of table.statistics) {
      const e = row.events;
      lines.push(
        `| ${table.dataset} (${table.language}) | ${row.split} | ${row.dialogues} | ${row.hours.toFixed(2)} | ${row.meanSeconds.toFixed(1)} | ${e.TURN_SHIFT} | ${e.TURN_HOLD} | ${e.BC} | ${e.BARGE_IN} |`,
      );
    }
  }
  return `${lines.join('\n')}\n`;
}

/**
 * Builds the tables of a dataset folder and writes `tables.md` and `tables.json` into it (atomically).
 * @returns the tables written.
 * @throws as {@link buildDatasetTables}.
 */
export async function writeQualityTables(directory: string): Promise<DatasetTables> {
  const tables = await buildDatasetTables(directory);
  await writeAtomic(
    path.join(directory, TABLES_MARKDOWN_FILE_NAME),
    `# ${tables.track}: ${tables.dataset}\n\n${formatTablesMarkdown([tables]).replace(/^## .*\n\n/, '')}`,
  );
  await writeAtomic(path.join(directory, TABLES_JSON_FILE_NAME), `${JSON.stringify(tables, null, 2)}\n`);
  return tables;
}
