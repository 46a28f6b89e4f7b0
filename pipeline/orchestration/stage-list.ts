/**
 * The pipeline's stages, in the order a build runs them:
 *
 * 1. `ingest-corpus`, once for the build (../../stages/ingest-corpus.ts);
 * 2. per language, every dialogue through {@link DIALOGUE_STAGE_LIST}, and with `datasets.bargeIn`
 *    through {@link BARGE_IN_STAGE_LIST} from the same speech (./language-datasets.ts);
 * 3. per language, the datasets committed (./commit-datasets.ts);
 * 4. with `quality.enabled`, the recordings scored (DNSMOS) and the datasets split (./score-and-split.ts);
 * 5. `summary.md`, `summary.json`, the HTML report and the run record written (./build-outputs.ts).
 *
 * The local build and a queue worker (./queue-worker.ts) run the same lists.
 */
import type { StageStep } from '../run/stage-runner.ts';
import {
  annotateBargeInEventsStep,
  annotateEventsStep,
  placeBargeInTimelineStep,
  placeTimelineStep,
  prepareTextStep,
  renderBargeInDatasetStep,
  renderDatasetStep,
  synthesizeSpeechStep,
  type DialogueStepContext,
  type DialogueWork,
} from './dialogue-steps.ts';

/** One stage of a dialogue's list: its name (the stage's), what it does, and its step for a language. */
export interface DialogueStageEntry {
  name: string;
  does: string;
  step: (context: DialogueStepContext) => StageStep<DialogueWork>;
}

/** The stages every dialogue goes through, in order. */
export const DIALOGUE_STAGE_LIST: readonly DialogueStageEntry[] = [
  { name: 'prepare-text', does: 'rewrite-spoken, then translate (./prepare-text.ts)', step: prepareTextStep },
  { name: 'synthesize-speech', does: 'speech of every turn, and backchannels', step: synthesizeSpeechStep },
  { name: 'place-timeline', does: 'the utterances placed on two channels, mastered', step: placeTimelineStep },
  { name: 'annotate-events', does: 'turn-taking events of the timeline', step: annotateEventsStep },
  { name: 'render-dataset', does: 'WAV, events, words and metadata written', step: renderDatasetStep },
];

/** The barge-in variant's stages, from the speech of {@link DIALOGUE_STAGE_LIST}, in order. */
export const BARGE_IN_STAGE_LIST: readonly DialogueStageEntry[] = [
  { name: 'place-timeline', does: 'the user barging in on every answer long enough', step: placeBargeInTimelineStep },
  { name: 'annotate-events', does: 'turn-taking events of the barge-in timeline', step: annotateBargeInEventsStep },
  { name: 'render-dataset', does: 'the variant dataset, with its barge-in counts', step: renderBargeInDatasetStep },
];

/** The stage names, in order; used for timings. */
export const STAGES: readonly string[] = ['ingest-corpus', ...DIALOGUE_STAGE_LIST.map((entry) => entry.name)];
