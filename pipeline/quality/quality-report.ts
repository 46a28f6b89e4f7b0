/**
 * The shape of `quality.json` (written by stages/score-quality.ts next to a dataset) and the
 * aggregation of per-dialogue values over any set of dialogues (the whole dataset, or a split).
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { QualityFlag, DialogueSignalChecks } from './signal-checks.ts';
import type { QualityThresholds } from './thresholds.ts';

/** File name of the quality report inside a dataset folder. */
export const QUALITY_FILE_NAME = 'quality.json';

/** DNSMOS values of one channel or one dialogue (1..5 scale), rounded to 4 decimals. */
export interface DnsmosValues {
  ovrl: number;
  sig: number;
  bak: number;
  p808: number;
}

/** DNSMOS of one dialogue. */
export interface DialogueDnsmos {
  /** Mean over the channels with speech (DnsmosScorer.scoreRecording); null when no channel has speech. */
  dialogue: DnsmosValues | null;
  channels: { channel: number; hasSpeech: boolean; scores: (DnsmosValues & { windows: number }) | null }[];
}

/** COMETKiwi of one dialogue's translated utterances. */
export interface DialogueCometKiwi {
  /** Mean of the segment scores; null when the dataset's COMETKiwi was not computed. */
  mean: number | null;
  /** Per translated utterance: its index in the metadata and its score (null when not computed). */
  segments: { utteranceIndex: number; score: number | null }[];
}

/** Everything measured for one dialogue. */
export interface DialogueQuality {
  id: string;
  durationSeconds: number;
  /** sha256 of the WAV scored, from manifest.json (null when unlisted); lets later stages detect staleness. */
  audioSha256: string | null;
  /** Speaker identities of both roles (metadata speakers.*.speakerId), sorted. */
  speakerIds: string[];
  /** Source conversation key shared across languages (dataset-files.ts sourceConversationKey). */
  sourceConversation: string;
  dnsmos: DialogueDnsmos;
  /** null for a dataset that is not a translation. */
  cometKiwi: DialogueCometKiwi | null;
  signal: DialogueSignalChecks;
}

/** Dataset-level COMETKiwi: computed with its scorer and system score, or not computed with the reason. */
export type DatasetCometKiwi =
  | { computed: true; scorer: 'command' | 'http'; model: string; systemScore: number; segments: number }
  | { computed: false; reason: string };

/** Aggregates over a set of dialogues. */
export interface QualityAggregates {
  dialogues: number;
  hours: number;
  /** Mean over dialogues of the dialogue-level DNSMOS; null when no dialogue has one. */
  dnsmos: DnsmosValues | null;
  /** Dialogues without a dialogue-level DNSMOS (no speech). */
  dnsmosMissing: number;
  /** Mean of all translated utterances' COMETKiwi scores of these dialogues; null when none. */
  cometKiwi: number | null;
  /** Translated utterances with a score. */
  cometKiwiSegments: number;
  /** Mean over dialogues and channels of the per-channel integrated loudness, LUFS (silent channels left out). */
  meanChannelLoudnessLufs: number | null;
  /** Highest per-channel true peak, dBTP. */
  maximumTruePeakDbtp: number | null;
  /** Units (syllables or morae) per second of speech, pooled over every utterance. */
  speechRate: number | null;
  speechRateUnit: 'syllable' | 'mora';
  /** Share of the total duration in which both channels are silent (duration-weighted mean), 0..1; null for no dialogues. */
  mutualSilenceRatio: number | null;
  /** Pooled speech rate per role. */
  speechRateByRole: Record<string, number | null>;
  /** Utterances whose role disagrees with the benchmark's label (questions/answers labelled BC, backchannels labelled TURN) or that have no speech in their span. */
  roleLabelDisagreements: number;
  /** Every flag, counted over the dialogues' channels and utterances. */
  flagCounts: Partial<Record<QualityFlag, number>>;
}

/** The whole `quality.json`. */
export interface DatasetQualityReport {
  format: 'duplexsynth-quality';
  version: 1;
  language: 'en' | 'ja';
  dataset: string;
  /** How the numbers were made. */
  methods: {
    dnsmos: string;
    cometKiwi: string;
    loudness: string;
    speechRate: string;
  };
  thresholds: QualityThresholds;
  /** null when the dataset is not a translation (COMETKiwi does not apply). */
  cometKiwi: DatasetCometKiwi | null;
  aggregates: QualityAggregates;
  /** Dialogues that failed during the build (summary.json), not part of the dataset. */
  quarantined: { id: string; stage: string; reason: string }[];
  /** In all.jsonl order. */
  dialogues: DialogueQuality[];
}

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
  const cometScores = dialogues.flatMap((dialogue) => (dialogue.cometKiwi?.segments ?? []).flatMap((segment) => (segment.score === null ? [] : [segment.score])));
  const loudness = dialogues.flatMap((dialogue) => dialogue.signal.channels.flatMap((channel) => (channel.loudness?.integratedLufs ?? null) === null ? [] : [channel.loudness!.integratedLufs!]));
  const peaks = dialogues.flatMap((dialogue) => dialogue.signal.channels.flatMap((channel) => (channel.loudness?.truePeakDbtp ?? null) === null ? [] : [channel.loudness!.truePeakDbtp!]));
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
    for (const [flag, count] of Object.entries(dialogue.signal.flagCounts)) flagCounts[flag as QualityFlag] = (flagCounts[flag as QualityFlag] ?? 0) + (count ?? 0);
  }
  const loudnessMean = mean(loudness);
  const totalSeconds = dialogues.reduce((sum, dialogue) => sum + dialogue.durationSeconds, 0);
  const cometMean = mean(cometScores);
  return {
    dialogues: dialogues.length,
    hours: round(totalSeconds / 3600, 4),
    dnsmos: withDnsmos.length === 0 ? null : { ovrl: dnsmosMean('ovrl'), sig: dnsmosMean('sig'), bak: dnsmosMean('bak'), p808: dnsmosMean('p808') },
    dnsmosMissing: dialogues.length - withDnsmos.length,
    cometKiwi: cometMean === null ? null : round(cometMean, 4),
    cometKiwiSegments: cometScores.length,
    meanChannelLoudnessLufs: loudnessMean === null ? null : round(loudnessMean, 1),
    maximumTruePeakDbtp: peaks.length === 0 ? null : Math.max(...peaks),
    speechRate: allSeconds > 0 ? round(allUnits / allSeconds, 2) : null,
    speechRateUnit: unit,
    mutualSilenceRatio: totalSeconds > 0 ? round(dialogues.reduce((sum, dialogue) => sum + dialogue.signal.mutualSilenceRatio * dialogue.durationSeconds, 0) / totalSeconds, 4) : null,
    speechRateByRole: Object.fromEntries(
      Object.keys(roleTotals)
        .sort()
        .map((role) => [role, roleTotals[role]!.seconds > 0 ? round(roleTotals[role]!.units / roleTotals[role]!.seconds, 2) : null]),
    ),
    roleLabelDisagreements: dialogues.reduce(
      (sum, dialogue) => sum + dialogue.signal.utterances.filter((utterance) => utterance.roleLabel !== 'agrees').length,
      0,
    ),
    flagCounts: Object.fromEntries(Object.entries(flagCounts).sort(([a], [b]) => (a < b ? -1 : 1))) as Partial<Record<QualityFlag, number>>,
  };
}

/**
 * Reads `quality.json` of a dataset folder.
 * @returns the report, or null when the folder has none.
 * @throws Error naming the file when it exists but is not JSON or not a quality report.
 */
export async function readQualityReport(datasetDirectory: string): Promise<DatasetQualityReport | null> {
  const file = path.join(datasetDirectory, QUALITY_FILE_NAME);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
  let report: unknown;
  try {
    report = JSON.parse(text);
  } catch (error) {
    throw new Error(`${file}: not valid JSON (${(error as Error).message})`);
  }
  if ((report as { format?: unknown }).format !== 'duplexsynth-quality' || !Array.isArray((report as { dialogues?: unknown }).dialogues)) {
    throw new Error(`${file}: not a duplexsynth quality report (format "duplexsynth-quality" with dialogues)`);
  }
  return report as DatasetQualityReport;
}
