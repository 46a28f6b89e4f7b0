/**
 * The metadata record of one MT-QA dialogue (`metadata/{id}.json`, schema `taskDialogueMetadataSchema`
 * in pipeline/model/dialogue-metadata.ts): the source conversation, the texts before and after
 * rewrite and translation, the speakers, the timing draws, the backchannels and every utterance on
 * the timeline; for the barge-in variant also its barge-ins. Times in seconds (the timeline's
 * centiseconds / 100).
 */
import path from 'node:path';
import type { BuildConfig } from '../config.ts';
import type { DialogueText, Language, SourceConversation, SpeakerRole } from '../model/types.ts';
import { languagePackOf } from '../model/language-pack.ts';
import type { TaskDialogueMetadata } from '../model/dialogue-metadata.ts';
import type { SpeechSynthesizer } from '../services/tts/speech-synthesizer.ts';
import type { SpeakerIdentity } from '../services/tts/offline-speaker-roster.ts';
import type { PlacedUtterance, RenderedBargeInTimeline, RenderedTimeline } from '../../stages/place-timeline.ts';
import { spokenPrefix } from '../alignment/spoken-transcript.ts';

/** What a dialogue's metadata is made from. */
export interface TaskMetadataInput {
  conversation: SourceConversation;
  text: DialogueText;
  /** The utterances as placed (a variant's cut answers included), in the timeline's order. */
  spoken: readonly PlacedUtterance[];
  timeline: RenderedTimeline;
  language: Language;
  dataset: string;
  config: BuildConfig;
  synthesizer: SpeechSynthesizer;
  speakers: Record<SpeakerRole, SpeakerIdentity>;
  /** The timing statistics file the timeline was drawn from (its base name is recorded). */
  statisticsFile: string;
}

/** The metadata record of one dialogue of a base dataset. */
export function taskDialogueMetadata(input: TaskMetadataInput): TaskDialogueMetadata {
  const { conversation, text, spoken, timeline, config } = input;
  const turnText = (turnNumber: number, field: 'question' | 'answer') => ({
    source: text.source.find((turn) => turn.turnNumber === turnNumber)?.[field] ?? null,
    spoken: text.spoken.find((turn) => turn.turnNumber === turnNumber)?.[field] ?? null,
    final: text.final.find((turn) => turn.turnNumber === turnNumber)?.[field] ?? null,
  });
  const speaker = (role: SpeakerRole) => ({
    role,
    channel: config.channels[role],
    speakerId: input.speakers[role].speakerId,
    engine: input.synthesizer.id,
    engineVersion: input.synthesizer.version,
    // prompt files by their path relative to the pool or config, and their sha256: no machine's paths
    voice: input.speakers[role].voiceRecord ?? input.speakers[role].voice,
  });
  return {
    id: conversation.id,
    language: input.language,
    dataset: input.dataset,
    seed: config.seed,
    source: {
      corpus: 'TopiOCQA',
      file: path.basename(conversation.sourceFile),
      conversationNumber: conversation.conversationNumber,
      turns: conversation.turns.map((turn) => ({
        turnNumber: turn.turnNumber,
        topic: turn.topic,
        topicSwitch: turn.topicSwitch,
        answerable: turn.answerable,
      })),
    },
    text: { rewrittenBy: text.producedBy.rewrite, translatedBy: text.producedBy.translate ?? null },
    speakers: { user: speaker('user'), system: speaker('system') },
    timing: {
      statistics: path.basename(input.statisticsFile),
      resampledDraws: timeline.placement.resampled,
      fallbacks: timeline.placement.fallbacks,
    },
    backchannels: timeline.backchannels.map((backchannel) => ({
      channel: backchannel.channel,
      start: backchannel.start / 100,
      end: backchannel.end / 100,
      text: backchannel.text,
      hostUtteranceIndex: backchannel.hostUtteranceIndex,
    })),
    sampleRate: timeline.sampleRate,
    ...(timeline.fullBand ? { fullBandSampleRate: timeline.fullBand.sampleRate } : {}),
    durationSeconds: timeline.totalDurationCs / 100,
    utterances: spoken.map((utterance, index) => ({
      index,
      turnNumber: utterance.turnNumber,
      role: utterance.role,
      kind: utterance.kind,
      channel: timeline.channels[index]!,
      start: timeline.placement.starts[index]! / 100,
      end: timeline.placement.ends[index]! / 100,
      offsetFromFloor: index > 0 ? timeline.placement.offsets[index - 1]! / 100 : null,
      ...(utterance.part !== undefined ? { questionPart: utterance.part } : {}),
      text: {
        ...turnText(utterance.turnNumber, utterance.kind === 'answer' ? 'answer' : 'question'),
        synthesized: utterance.spokenText,
        transcript: utterance.spokenText,
      },
      paddingSteps: utterance.paddingSteps,
      rephrasedForSpeechRate: utterance.rephrasedForSpeechRate,
      wordTimingSource: utterance.wordTimingSource,
    })),
  };
}

/**
 * The metadata record of one dialogue of the barge-in variant: the base record of the variant's
 * timeline plus `variant` (what was cut where, against the full answers of the base dataset).
 * @param input as {@link taskDialogueMetadata}, with the variant's timeline and dataset
 * @param baseSpoken the utterances as synthesized (uncut), indexed like the variant's
 * @param of the base dataset's name
 */
export function bargeInVariantMetadata(
  input: Omit<TaskMetadataInput, 'spoken' | 'timeline'> & { timeline: RenderedBargeInTimeline },
  baseSpoken: readonly PlacedUtterance[],
  of: string,
): TaskDialogueMetadata {
  const { timeline, config } = input;
  const record = taskDialogueMetadata({ ...input, spoken: timeline.utterances });
  // an answer the user barged in on says only the words before the cut: its transcript, and what it was to say
  // words are joined by spaces in a language segmented at spaces, directly in any other (zh, ja, th)
  const separator = languagePackOf(input.language).script.segmentation === 'spaces' ? ' ' : '';
  const utterances = record.utterances.map((utterance, index) => {
    const spoken = timeline.utterances[index]!;
    const planned = baseSpoken[index]!;
    if (spoken.durationCs >= planned.durationCs) return utterance;
    return {
      ...utterance,
      text: {
        ...utterance.text,
        transcript: spokenPrefix(
          spoken.spokenText,
          spoken.words.map((word) => word.word),
          separator,
        ),
      },
      cutOff: {
        plannedText: planned.spokenText,
        atSeconds: utterance.end,
        plannedDurationSeconds: planned.durationCs / 100,
        unspokenWords: planned.words.slice(spoken.words.length).map((word) => word.word),
      },
    };
  });
  return {
    ...record,
    utterances,
    variant: {
      kind: 'barge-in',
      of,
      systemYields: config.timeline.bargeIn.systemYields,
      bargeIns: timeline.bargeIns.map((bargeIn) => ({
        answerIndex: bargeIn.answerIndex,
        questionIndex: bargeIn.questionIndex,
        userStartsIntoAnswerSeconds: bargeIn.leadCs / 100,
        drawnOverlapSeconds: bargeIn.drawnOverlapCs / 100,
        overlapSeconds: (bargeIn.cutCs - bargeIn.leadCs) / 100,
        answerSpokenSeconds: bargeIn.cutCs / 100,
        answerFullSeconds: baseSpoken[bargeIn.answerIndex]!.durationCs / 100,
        unspokenWords: baseSpoken[bargeIn.answerIndex]!.words.filter((word) => word.start >= bargeIn.cutCs).map(
          (word) => word.word,
        ),
        fallback: bargeIn.fallback,
      })),
      answersTooShort: timeline.answersTooShort,
    },
  };
}
