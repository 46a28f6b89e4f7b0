/**
 * The summary of a written dataset: a statistics table per dataset like the paper's Table 3 (dialogues, total
 * and mean duration, counts of TURN_SHIFT, TURN_HOLD, BC, BARGE_IN; plus SHORTPAUSE), the place of every
 * question or answer the 0.8 s rule labelled BC, padding and resampling counts, and failed dialogues.
 * Written as Markdown and JSON. Deterministic: no timestamps, everything sorted.
 */
import {
  benchmarkLoaderSettings,
  evaluableEventsReport,
  formatEvaluableEventsMarkdown,
} from '../events/evaluable-events.ts';
import type { BenchmarkEventType, Channel, ChannelEvents, Language } from '../model/types.ts';
import type { DatasetSummary, FailedDialogue, RoleLabelDisagreement } from '../model/dataset-summary.ts';

/** What the summary needs from one written dialogue. */
export interface DialogueSummaryInput {
  id: string;
  durationSeconds: number;
  events: ChannelEvents;
  disagreements: RoleLabelDisagreement[];
  paddedUtterances: number;
  /** Utterances re-synthesized with phrase breaks because the engine spoke implausibly slowly. */
  rephrasedUtterances: number;
  resampledDraws: number;
  placementFallbacks: number;
  sampledOffsetsCs: number[];
  /** Questions spoken in two parts around a TURN_HOLD pause. */
  splitQuestions?: number;
  /** Questions chosen for a split but spoken whole because a part came out too short. */
  splitQuestionsSpokenWhole?: number;
  /** Barge-in variant only: answers barged in on, answers too short to hold one, smallest-barge-in fallbacks. */
  bargeIns?: {
    placed: number;
    answersTooShort: number;
    fallbacks: number;
    unspokenCs?: number[];
    unspokenWords?: number[];
  };
}

const EVENT_TYPES: BenchmarkEventType[] = ['TURN', 'TURN_SHIFT', 'TURN_HOLD', 'BC', 'BARGE_IN', 'SHORTPAUSE'];

/**
 * Aggregate dialogue results into a dataset summary (dialogues sorted by id first).
 * @param options the variant (default `default`), the user channel the evaluation reads (default 1) and the corpus loader's warnings (kept as `corpusWarnings`)
 */
export function summarizeDataset(
  language: Language,
  dataset: string,
  dialogues: readonly DialogueSummaryInput[],
  failed: readonly FailedDialogue[],
  corpusNotes: readonly string[] = [],
  options: { variant?: 'default' | 'barge-in'; userChannel?: Channel; corpusWarnings?: readonly string[] } = {},
): DatasetSummary {
  const variant = options.variant ?? 'default';
  const sorted = [...dialogues].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const events = Object.fromEntries(EVENT_TYPES.map((type) => [type, 0])) as Record<BenchmarkEventType, number>;
  let totalSeconds = 0;
  let overlaps = 0;
  let bargeInOverlaps = 0;
  let transitions = 0;
  for (const dialogue of sorted) {
    totalSeconds += dialogue.durationSeconds;
    for (const channel of [0, 1] as const) for (const event of dialogue.events[channel]) events[event.event] += 1;
    transitions += dialogue.sampledOffsetsCs.length;
    overlaps += dialogue.sampledOffsetsCs.filter((offset) => offset < 0).length;
    bargeInOverlaps += dialogue.sampledOffsetsCs.filter((offset) => offset < -40).length;
  }
  const sum = (value: (dialogue: DialogueSummaryInput) => number) =>
    sorted.reduce((total, dialogue) => total + value(dialogue), 0);
  const evaluableEvents = benchmarkLoaderSettings('task', {
    bargeInVariant: variant === 'barge-in',
    channels: [options.userChannel ?? 1],
  }).map(({ name, settings }) =>
    evaluableEventsReport(
      name,
      settings,
      sorted.map((dialogue) => ({ id: dialogue.id, events: dialogue.events })),
    ),
  );
  return {
    language,
    dataset,
    variant,
    dialogues: sorted.length,
    totalHours: round(totalSeconds / 3600, 4),
    meanSeconds: sorted.length ? round(totalSeconds / sorted.length, 2) : 0,
    events,
    sampledOverlaps: overlaps,
    sampledOverlapsBeyondBargeInThreshold: bargeInOverlaps,
    sampledTransitions: transitions,
    paddedUtterances: sorted.reduce((sum, dialogue) => sum + dialogue.paddedUtterances, 0),
    rephrasedUtterances: sorted.reduce((sum, dialogue) => sum + dialogue.rephrasedUtterances, 0),
    resampledDraws: sorted.reduce((sum, dialogue) => sum + dialogue.resampledDraws, 0),
    placementFallbacks: sorted.reduce((sum, dialogue) => sum + dialogue.placementFallbacks, 0),
    roleLabelDisagreements: sorted.flatMap((dialogue) => dialogue.disagreements),
    failed: [...failed].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)),
    corpusNotes: [...corpusNotes],
    corpusWarnings: [...(options.corpusWarnings ?? [])],
    splitQuestions: sum((dialogue) => dialogue.splitQuestions ?? 0),
    splitQuestionsSpokenWhole: sum((dialogue) => dialogue.splitQuestionsSpokenWhole ?? 0),
    bargeIns:
      variant === 'barge-in'
        ? {
            placed: sum((dialogue) => dialogue.bargeIns?.placed ?? 0),
            answersTooShort: sum((dialogue) => dialogue.bargeIns?.answersTooShort ?? 0),
            fallbacks: sum((dialogue) => dialogue.bargeIns?.fallbacks ?? 0),
            unspoken: unspokenSummary(
              sorted.flatMap((dialogue) => dialogue.bargeIns?.unspokenCs ?? []),
              sorted.flatMap((dialogue) => dialogue.bargeIns?.unspokenWords ?? []),
            ),
          }
        : null,
    evaluableEvents,
  };
}

/** Least and median unspoken part of the barge-ins' answers (seconds from centiseconds, words); nulls without barge-ins. */
function unspokenSummary(unspokenCs: readonly number[], unspokenWords: readonly number[]) {
  const median = (values: readonly number[]) => {
    const sorted = [...values].sort((a, b) => a - b);
    const middle = Math.floor(sorted.length / 2);
    return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
  };
  if (unspokenCs.length === 0)
    return {
      minimumSeconds: null,
      medianSeconds: null,
      minimumWords: null,
      medianWords: null,
      withoutUnspokenWords: 0,
    };
  return {
    minimumSeconds: round(Math.min(...unspokenCs) / 100, 2),
    medianSeconds: round(median(unspokenCs) / 100, 2),
    minimumWords: Math.min(...unspokenWords),
    medianWords: median(unspokenWords),
    withoutUnspokenWords: unspokenWords.filter((words) => words === 0).length,
  };
}

function round(value: number, digits: number): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}

/** Markdown rendering of one or more dataset summaries (the table first, then the details). */
export function formatSummaryMarkdown(title: string, summaries: readonly DatasetSummary[]): string {
  const lines: string[] = [`# ${title}`, ''];
  lines.push(
    '| dataset | language | dialogues | hours | mean s | TURN_SHIFT | TURN_HOLD | BC | BARGE_IN | SHORTPAUSE | TURN |',
  );
  lines.push('|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const summary of summaries) {
    const e = summary.events;
    lines.push(
      `| ${summary.dataset} | ${summary.language} | ${summary.dialogues} | ${summary.totalHours.toFixed(2)} | ${summary.meanSeconds.toFixed(1)} | ${e.TURN_SHIFT} | ${e.TURN_HOLD} | ${e.BC} | ${e.BARGE_IN} | ${e.SHORTPAUSE} | ${e.TURN} |`,
    );
  }
  for (const summary of summaries) {
    lines.push('', `## ${summary.dataset} (${summary.language})`, '');
    lines.push(
      `- speaker changes placed: ${summary.sampledTransitions}; with sampled overlap: ${summary.sampledOverlaps}; overlap > 0.4 s (barge-in by the rules): ${summary.sampledOverlapsBeyondBargeInThreshold}`,
    );
    lines.push(
      `- timeline draws rejected and redrawn: ${summary.resampledDraws}; deterministic fallbacks: ${summary.placementFallbacks}`,
    );
    lines.push(
      `- utterances re-synthesized with padded phrasing (too short, would be BC): ${summary.paddedUtterances}`,
    );
    lines.push(
      `- utterances re-synthesized with phrase breaks (engine spoke implausibly slowly): ${summary.rephrasedUtterances}`,
    );
    lines.push(
      `- questions spoken in two parts around a pause (user TURN_HOLD): ${summary.splitQuestions}; chosen but spoken whole (a part too short): ${summary.splitQuestionsSpokenWhole}`,
    );
    if (summary.bargeIns) {
      lines.push(
        `- barge-in variant: user barge-ins placed ${summary.bargeIns.placed}; answers too short to hold one ${summary.bargeIns.answersTooShort}; smallest barge-in used (no drawn pair fitted) ${summary.bargeIns.fallbacks}`,
      );
      const unspoken = summary.bargeIns.unspoken;
      if (unspoken && unspoken.minimumSeconds !== null) {
        lines.push(
          `- answer left unspoken by a barge-in: least ${unspoken.minimumSeconds.toFixed(2)} s / ${unspoken.minimumWords} words, median ${unspoken.medianSeconds!.toFixed(2)} s / ${unspoken.medianWords} words; barge-ins with no unspoken word ${unspoken.withoutUnspokenWords}`,
        );
      }
    }
    lines.push(`- questions/answers labelled BC by the 0.8 s rule: ${summary.roleLabelDisagreements.length}`);
    for (const item of summary.roleLabelDisagreements) {
      const spans = item.backchannelSpans.map(([start, end]) => `${start.toFixed(2)}–${end.toFixed(2)} s`).join(', ');
      lines.push(
        `  - ${item.dialogueId} utterance ${item.utteranceIndex} (turn ${item.turnNumber}, ${item.role} ${item.kind}, ${item.extent}): ${spans} — "${item.text}"`,
      );
    }
    if (summary.speechRecognition) {
      const { unit, utterances, edits, referenceTokens, errorRate } = summary.speechRecognition;
      lines.push(
        `- speech recognition of the utterances of this dataset: ${unit} error rate ${errorRate === null ? 'none' : errorRate.toFixed(3)} (${edits} edits in ${referenceTokens} ${unit}s, ${utterances} utterances)`,
      );
    }
    lines.push(`- failed dialogues: ${summary.failed.length}`);
    for (const failure of summary.failed) lines.push(`  - ${failure.id} at ${failure.stage}: ${failure.reason}`);
    if ((summary.corpusWarnings ?? []).length > 0) {
      lines.push(`- what the corpus loader did (its warnings): ${summary.corpusWarnings!.length}`);
      for (const warning of summary.corpusWarnings!) lines.push(`  - ${warning}`);
    }
    if (summary.corpusNotes.length > 0) {
      lines.push(`- corpus quirks that change what is spoken: ${summary.corpusNotes.length}`);
      for (const note of summary.corpusNotes) lines.push(`  - ${note}`);
    }
    lines.push(
      '',
      formatEvaluableEventsMarkdown(
        `Evaluable events: ${summary.dataset} (${summary.language})`,
        summary.evaluableEvents,
      ).trimEnd(),
    );
  }
  return `${lines.join('\n')}\n`;
}
