/**
 * `quality.json` (written by stages/score-quality.ts next to a dataset): writing and reading it
 * through its schema (pipeline/model/quality-report.ts, which holds its shape and types), and the
 * aggregation of per-dialogue values over any set of dialogues (the whole dataset, or a split).
 */
import path from 'node:path';
import {
  datasetQualityReportSchema,
  type DatasetQualityReport,
  type DialogueQuality,
  type DnsmosValues,
  type QualityAggregates,
  type QualityFlag,
} from '../model/quality-report.ts';
import { formatRecord, readRecord, writeRecord } from '../storage/json-records.ts';

export {
  datasetQualityReportSchema,
  type DatasetCometKiwi,
  type DatasetQualityReport,
  type DialogueCometKiwi,
  type DialogueDnsmos,
  type DialogueQuality,
  type DnsmosValues,
  type QualityAggregates,
} from '../model/quality-report.ts';

/** File name of the quality report inside a dataset folder. */
export const QUALITY_FILE_NAME = 'quality.json';

function round(value: number, digits: number): number {
  const factor = 10 ** digits;
  const rounded = Math.round(value * factor) / factor;
  return rounded === 0 ? 0 : rounded; // no -0
}

function mean(values: readonly number[]): number | null {
  return values.length === 0 ? null : values.reduce((sum, value) => sum + value, 0) / values.length;
}

/**
 * Aggregates of `dialogues` (any subset of a report's dialogues): means rounded to 4 decimals
 * (DNSMOS, COMETKiwi), 0.1 LU (loudness), 0.01 (speech rate), hours to 4 decimals.
 * @param unit the speech-rate unit of the dataset's language.
 */
export function aggregateQuality(dialogues: readonly DialogueQuality[], unit: 'syllable' | 'mora'): QualityAggregates {
  const withDnsmos = dialogues.flatMap((dialogue) => (dialogue.dnsmos.dialogue ? [dialogue.dnsmos.dialogue] : []));
  const dnsmosMean = (key: keyof DnsmosValues) => round(mean(withDnsmos.map((values) => values[key]))!, 4);
  const cometScores = dialogues.flatMap((dialogue) =>
    (dialogue.cometKiwi?.segments ?? []).flatMap((segment) => (segment.score === null ? [] : [segment.score])),
  );
  const loudness = dialogues.flatMap((dialogue) =>
    dialogue.signal.channels.flatMap((channel) =>
      (channel.loudness?.integratedLufs ?? null) === null ? [] : [channel.loudness!.integratedLufs!],
    ),
  );
  const peaks = dialogues.flatMap((dialogue) =>
    dialogue.signal.channels.flatMap((channel) =>
      (channel.loudness?.truePeakDbtp ?? null) === null ? [] : [channel.loudness!.truePeakDbtp!],
    ),
  );
  const roleTotals: Record<string, { units: number; seconds: number }> = {};
  for (const dialogue of dialogues) {
    for (const [role, totals] of Object.entries(dialogue.signal.speechRateByRole)) {
      const entry = (roleTotals[role] ??= { units: 0, seconds: 0 });
      entry.units += totals.units;
      entry.seconds += totals.speechSeconds;
    }
  }
  const allUnits = Object.values(roleTotals).reduce((sum, totals) => sum + totals.units, 0);
  const allSeconds = Object.values(roleTotals).reduce((sum, totals) => sum + totals.seconds, 0);
  const flagCounts: Partial<Record<QualityFlag, number>> = {};
  for (const dialogue of dialogues) {
    for (const [flag, count] of Object.entries(dialogue.signal.flagCounts))
      flagCounts[flag as QualityFlag] = (flagCounts[flag as QualityFlag] ?? 0) + (count ?? 0);
  }
  const loudnessMean = mean(loudness);
  const totalSeconds = dialogues.reduce((sum, dialogue) => sum + dialogue.durationSeconds, 0);
  const cometMean = mean(cometScores);
  return {
    dialogues: dialogues.length,
    hours: round(totalSeconds / 3600, 4),
    dnsmos:
      withDnsmos.length === 0
        ? null
        : { ovrl: dnsmosMean('ovrl'), sig: dnsmosMean('sig'), bak: dnsmosMean('bak'), p808: dnsmosMean('p808') },
    dnsmosMissing: dialogues.length - withDnsmos.length,
    cometKiwi: cometMean === null ? null : round(cometMean, 4),
    cometKiwiSegments: cometScores.length,
    meanChannelLoudnessLufs: loudnessMean === null ? null : round(loudnessMean, 1),
    maximumTruePeakDbtp: peaks.length === 0 ? null : Math.max(...peaks),
    speechRate: allSeconds > 0 ? round(allUnits / allSeconds, 2) : null,
    speechRateUnit: unit,
    mutualSilenceRatio:
      totalSeconds > 0
        ? round(
            dialogues.reduce(
              (sum, dialogue) => sum + dialogue.signal.mutualSilenceRatio * dialogue.durationSeconds,
              0,
            ) / totalSeconds,
            4,
          )
        : null,
    speechRateByRole: Object.fromEntries(
      Object.keys(roleTotals)
        .sort()
        .map((role) => [
          role,
          roleTotals[role]!.seconds > 0 ? round(roleTotals[role]!.units / roleTotals[role]!.seconds, 2) : null,
        ]),
    ),
    roleLabelDisagreements: dialogues.reduce(
      (sum, dialogue) =>
        sum + dialogue.signal.utterances.filter((utterance) => utterance.roleLabel !== 'agrees').length,
      0,
    ),
    flagCounts: Object.fromEntries(Object.entries(flagCounts).sort(([a], [b]) => (a < b ? -1 : 1))) as Partial<
      Record<QualityFlag, number>
    >,
  };
}

/**
 * The text of `quality.json` (`JSON.stringify(report, null, 2)` and a newline, the writer's key
 * order), after checking the report against its schema.
 * @param file names the file in the message
 * @throws RecordFileError (pipeline/storage/json-records.ts) naming the file and field when the report does not fit (a bug)
 */
export function formatQualityReport(file: string, report: DatasetQualityReport): string {
  return formatRecord(file, datasetQualityReportSchema, report);
}

/**
 * Checks the report against its schema and writes `quality.json` of a dataset folder atomically
 * (pipeline/storage/json-records.ts `writeRecord`; same text as {@link formatQualityReport}).
 * @throws RecordFileError naming the file and field when the report does not fit (a bug)
 */
export async function writeQualityReport(datasetDirectory: string, report: DatasetQualityReport): Promise<void> {
  await writeRecord(path.join(datasetDirectory, QUALITY_FILE_NAME), datasetQualityReportSchema, report);
}

/**
 * Reads `quality.json` of a dataset folder, checked against its schema.
 * @returns the report, or null when the folder has none.
 * @throws RecordFileError (pipeline/storage/json-records.ts) naming the file (and the field) when it
 *   exists but cannot be read, is not JSON or is not a quality report.
 */
export async function readQualityReport(datasetDirectory: string): Promise<DatasetQualityReport | null> {
  return (
    (await readRecord(path.join(datasetDirectory, QUALITY_FILE_NAME), datasetQualityReportSchema, {
      optional: true,
    })) ?? null
  );
}
