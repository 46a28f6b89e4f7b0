/**
 * The steps one dialogue goes through, each a stage wired to the dialogue's state (`DialogueWork`):
 * what the stage reads from the state, its parameters for the language, and what it adds. The order
 * they run in is ./stage-list.ts; the language settings they are made from are ./language-work.ts.
 */
import type { RenderPool } from '../audio/render-pool.ts';
import type { BuildConfig } from '../config.ts';
import type { DialogueText, Language, SourceConversation, SpeakerRole } from '../model/types.ts';
import type { ProgressListener } from '../run/progress.ts';
import { stageStep, type StageStep } from '../run/stage-runner.ts';
import type { SpeechSynthesizer } from '../services/tts/speech-synthesizer.ts';
import type { SpeakerIdentity } from '../services/tts/offline-speaker-roster.ts';
import { protectedPhrasesOf } from '../text/turn-hold-split.ts';
import type { PlaceDialogueOptions } from '../timeline/place-dialogue-input.ts';
import type { TimingStatistics } from '../timeline/timing-statistics.ts';
import { annotateEventsStage, type AnnotatedDialogue } from '../../stages/annotate-events.ts';
import {
  placeBargeInTimelineStage,
  placeTimelineStage,
  type RenderedBargeInTimeline,
  type RenderedTimeline,
} from '../../stages/place-timeline.ts';
import { renderDatasetStage, type DialogueSink } from '../../stages/render-dataset.ts';
import { synthesizeSettingsOf, synthesizeSpeechStage, type DialogueSpeech } from '../../stages/synthesize-speech.ts';
import type { DialogueRecord } from './dialogue-record.ts';
import { prepareTextStage } from './prepare-text.ts';
import type { SharedBuildServices } from './shared-build-services.ts';
import { bargeInVariantMetadata, taskDialogueMetadata } from './task-metadata.ts';

/**
 * Dialogues whose text and speech are made ahead of the one being placed and written (their
 * utterances wait in the synthesis queue, so the TTS servers never run dry between dialogues).
 */
const SYNTHESIS_LOOKAHEAD = 3;

/** One dialogue on its way through the stages: each stage adds its output. */
export interface DialogueWork {
  conversation: SourceConversation;
  speakers: Record<SpeakerRole, SpeakerIdentity>;
  text?: DialogueText;
  speech?: DialogueSpeech;
  timeline?: RenderedTimeline;
  bargeInTimeline?: RenderedBargeInTimeline;
  annotated?: AnnotatedDialogue;
  /** Set when the dialogue was written from the record a queued build's worker stored (./queued-dialogue-steps.ts): no stage runs for it. */
  record?: DialogueRecord;
}

/** A stage's output that an earlier stage of the list makes. @throws Error when the list is out of order */
export function made<T>(value: T | undefined, what: string, work: DialogueWork): T {
  if (value === undefined) throw new Error(`${work.conversation.id}: no ${what} yet (the stage list is out of order)`);
  return value;
}

/** The placement parameters of a language's dialogues (stage `place-timeline`). */
export interface TimelinePlacement {
  seed: number;
  channelOfRole: BuildConfig['channels'];
  statistics: TimingStatistics;
  renderPool: RenderPool | null;
  options: Pick<PlaceDialogueOptions, 'leadingSilenceCs' | 'trailingSilenceCs' | 'maximumGapCs' | 'gapOnlyChannel'>;
}

/** What the steps of one language are made from, and the dataset the list's render step writes into. */
export interface DialogueStepContext {
  config: BuildConfig;
  language: Language;
  /** The base dataset's name. */
  dataset: string;
  /** The barge-in variant's dataset name. */
  variantDataset: string;
  textBackends: SharedBuildServices['textBackends'];
  detector: SharedBuildServices['detector'];
  queue: SharedBuildServices['queue'];
  resamplePool: SharedBuildServices['resamplePool'];
  synthesizer: SpeechSynthesizer;
  /** Synthesis progress events. */
  progress: ProgressListener;
  turnHoldShare: number;
  backchannelPhrases: string[];
  placement: TimelinePlacement;
  /** The fields of every dialogue's metadata record that the language fixes. */
  metadataOf: { language: Language; config: BuildConfig; synthesizer: SpeechSynthesizer; statisticsFile: string };
  /** Where the list's render step writes. */
  sink: DialogueSink;
}

/** Stage `prepare-text`: the turns rewritten as spoken, then translated. Every dialogue's text is requested up front. */
export function prepareTextStep({ language, textBackends }: DialogueStepContext): StageStep<DialogueWork> {
  // The LLM endpoint queues bound what is in flight, so remote backends work in parallel while
  // speech is synthesized.
  return stageStep(prepareTextStage, {
    startAhead: 'all',
    progress: 'prepare-text',
    input: (work) => ({ conversation: work.conversation, language }),
    parameters: { backends: textBackends },
    output: (work, text) => ({ ...work, text }),
  });
}

/**
 * Stage `synthesize-speech`, started SYNTHESIS_LOOKAHEAD dialogues ahead of the one being placed and
 * written, so the TTS servers are never idle.
 */
export function synthesizeSpeechStep(context: DialogueStepContext): StageStep<DialogueWork> {
  const { config, language, detector, queue, resamplePool, synthesizer, progress } = context;
  return stageStep(synthesizeSpeechStage, {
    startAhead: SYNTHESIS_LOOKAHEAD,
    progress: 'synthesize-speech',
    input: (work) => ({
      dialogueId: work.conversation.id,
      text: made(work.text, 'text', work),
      voices: { user: work.speakers.user.voice, system: work.speakers.system.voice },
      protectedPhrases: protectedPhrasesOf(work.conversation.turns),
    }),
    parameters: {
      synthesizer,
      queue,
      seed: config.seed,
      turnHoldShare: context.turnHoldShare,
      backchannelPhrases: context.backchannelPhrases,
      settings: {
        ...synthesizeSettingsOf(config, language, detector),
        ...(resamplePool ? { resampler: resamplePool.resample } : {}),
      },
      progress: {
        planned: (id, amount) => progress({ type: 'item-planned', language, stage: 'synthesize-speech', id, amount }),
        spoken: (id) => progress({ type: 'item-advanced', language, stage: 'synthesize-speech', id, amount: 1 }),
      },
    },
    output: (work, speech) => ({ ...work, speech }),
  });
}

/** Stage `place-timeline`: the utterances and backchannels placed on the two channels and mastered. */
export function placeTimelineStep({ placement }: DialogueStepContext): StageStep<DialogueWork> {
  return stageStep(placeTimelineStage, {
    input: (work) => ({
      dialogueId: work.conversation.id,
      utterances: made(work.speech, 'speech', work).spoken,
      backchannelClips: made(work.speech, 'speech', work).backchannelClips,
    }),
    parameters: placement,
    output: (work, timeline) => ({ ...work, timeline }),
  });
}

/** Stage `annotate-events` of the placed timeline. */
export function annotateEventsStep(): StageStep<DialogueWork> {
  return stageStep(annotateEventsStage, {
    input: (work) => ({
      dialogueId: work.conversation.id,
      timeline: made(work.timeline, 'timeline', work),
      utterances: made(work.speech, 'speech', work).spoken,
    }),
    parameters: {},
    output: (work, annotated) => ({ ...work, annotated }),
  });
}

/** Stage `render-dataset`: the dialogue's files added to the base dataset. */
export function renderDatasetStep({ config, dataset, metadataOf, sink }: DialogueStepContext): StageStep<DialogueWork> {
  return stageStep(renderDatasetStage, {
    progress: 'render-dataset',
    input: (work) => {
      const { conversation, speakers } = work;
      const [text, speech, timeline] = [
        made(work.text, 'text', work),
        made(work.speech, 'speech', work),
        made(work.timeline, 'timeline', work),
      ];
      return {
        id: conversation.id,
        timeline,
        annotated: made(work.annotated, 'events', work),
        metadata: taskDialogueMetadata({
          ...metadataOf,
          conversation,
          text,
          spoken: speech.spoken,
          timeline,
          dataset,
          speakers,
        }),
        spoken: speech.spoken,
        counts: { splitQuestionsSpokenWhole: speech.splitQuestionsSpokenWhole },
      };
    },
    parameters: { output: sink, userChannel: config.channels.user },
    output: (work) => work,
  });
}

/** Stage `place-timeline` of the barge-in variant: the same synthesized audio, the user barging in on every answer long enough. */
export function placeBargeInTimelineStep({
  config,
  placement,
  detector,
}: DialogueStepContext): StageStep<DialogueWork> {
  return stageStep(placeBargeInTimelineStage, {
    input: (work) => ({
      dialogueId: work.conversation.id,
      utterances: made(work.speech, 'speech', work).spoken,
      backchannelClips: made(work.speech, 'speech', work).backchannelClips,
    }),
    parameters: {
      ...placement,
      options: { ...placement.options, gapOnlyChannel: config.channels.system },
      systemYields: config.timeline.bargeIn.systemYields,
      minimumUnspoken: config.timeline.bargeIn.minimumUnspoken,
      detector,
    },
    output: (work, bargeInTimeline) => ({ ...work, bargeInTimeline }),
  });
}

/** Stage `annotate-events` of the barge-in timeline. */
export function annotateBargeInEventsStep(): StageStep<DialogueWork> {
  return stageStep(annotateEventsStage, {
    input: (work) => ({
      dialogueId: work.conversation.id,
      timeline: made(work.bargeInTimeline, 'barge-in timeline', work),
      utterances: made(work.bargeInTimeline, 'barge-in timeline', work).utterances,
    }),
    parameters: {},
    output: (work, annotated) => ({ ...work, annotated }),
  });
}

/** Stage `render-dataset` of the barge-in variant, with the counts of its barge-ins. */
export function renderBargeInDatasetStep(context: DialogueStepContext): StageStep<DialogueWork> {
  const { config, dataset, variantDataset, metadataOf, sink } = context;
  return stageStep(renderDatasetStage, {
    input: (work) => {
      const { conversation, speakers } = work;
      const [text, speech, timeline] = [
        made(work.text, 'text', work),
        made(work.speech, 'speech', work),
        made(work.bargeInTimeline, 'barge-in timeline', work),
      ];
      return {
        id: conversation.id,
        timeline,
        annotated: made(work.annotated, 'events', work),
        metadata: bargeInVariantMetadata(
          { ...metadataOf, conversation, text, timeline, dataset: variantDataset, speakers },
          speech.spoken,
          dataset,
        ),
        spoken: timeline.utterances,
        counts: {
          splitQuestionsSpokenWhole: speech.splitQuestionsSpokenWhole,
          bargeIns: {
            placed: timeline.bargeIns.length,
            answersTooShort: timeline.answersTooShort.length,
            fallbacks: timeline.bargeIns.filter((bargeIn) => bargeIn.fallback).length,
            unspokenCs: timeline.bargeIns.map((bargeIn) => bargeIn.unspokenCs),
            // measured as the metadata lists them: the answer's words starting at or after the cut
            unspokenWords: timeline.bargeIns.map(
              (bargeIn) =>
                speech.spoken[bargeIn.answerIndex]!.words.filter((word) => word.start >= bargeIn.cutCs).length,
            ),
          },
        },
      };
    },
    parameters: { output: sink, userChannel: config.channels.user },
    output: (work) => work,
  });
}
