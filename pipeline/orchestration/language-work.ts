/**
 * One language's work for the build: its synthesizer, speaker roster, timing statistics and
 * placement settings, and from them its stage lists (./stage-list.ts) ready to run.
 */
import path from 'node:path';
import type { BuildConfig } from '../config.ts';
import { datasetNameOf, ttsOf } from '../config.ts';
import type { Language, SourceConversation } from '../model/types.ts';
import type { ProgressListener } from '../run/progress.ts';
import type { StageStep } from '../run/stage-runner.ts';
import { createSpeechSynthesizer } from '../services/tts/synthesizer-registry.ts';
import { drawDialogueSpeakers } from '../services/tts/offline-speaker-roster.ts';
import { loadTimingStatistics, shippedTimingStatisticsOf } from '../timeline/timing-statistics.ts';
import { loadDefaultQuestionPauses, withQuestionPauses } from '../timeline/question-pauses.ts';
import type { DialogueSink } from '../../stages/render-dataset.ts';
import { BARGE_IN_SUFFIX, DEFAULT_BENCHMARK_TURN_HOLD_SHARE } from './dataset-output.ts';
import type { DialogueStepContext, DialogueWork, TimelinePlacement } from './dialogue-steps.ts';
import type { SharedBuildServices } from './shared-build-services.ts';
import { speakerRoster } from './speaker-roster.ts';
import { speechRecognitionCheckOf } from './speech-recognition-check.ts';
import { speechLengthCheckOf } from './speech-length-check.ts';
import { BARGE_IN_STAGE_LIST, DIALOGUE_STAGE_LIST } from './stage-list.ts';

/**
 * One language's stage lists, `stepsInto(sinks)`: `steps` (text, speech, placement, events, render
 * into `sinks.base`) and `variantSteps` (the barge-in variant from the same speech, rendered into
 * `sinks.variant`; empty without a variant), the state a dialogue starts from, and the warning when
 * the language has no measured timing statistics, and the synthesizer (its counters for the summary). The local build runs them over the whole corpus, a
 * queue worker (./queue-worker.ts) over one dialogue per job: the same code either way.
 * @param progress synthesis progress events
 * @throws as createSpeechSynthesizer and the timing statistics' loading
 */
export async function languageWork(
  config: BuildConfig,
  language: Language,
  shared: SharedBuildServices,
  progress: ProgressListener,
) {
  const { textBackends, detector, queue, resamplePool, renderPool } = shared;
  const dataset = datasetNameOf(config, language);
  const speechRecognition = speechRecognitionCheckOf(config, language);
  const speechLength = speechLengthCheckOf(config, language);
  const synthesizer = await createSpeechSynthesizer(
    ttsOf(config, language).backend,
    ttsOf(config, language).service,
    speechRecognition || speechLength
      ? { ...(speechRecognition ? { speechRecognition } : {}), ...(speechLength ? { speechLength } : {}) }
      : undefined,
  );
  const roster = speakerRoster(language, config, synthesizer);
  const shipped = shippedTimingStatisticsOf(language);
  const statisticsFile = config.timeline.statistics[language] ?? shipped.file;
  // with the shipped statistics, a question split in two draws its pause from the measured pauses inside questions
  const statistics = config.timeline.statistics[language]
    ? await loadTimingStatistics(statisticsFile)
    : withQuestionPauses(await loadTimingStatistics(statisticsFile), await loadDefaultQuestionPauses(language));
  const timingPriorWarning =
    !config.timeline.statistics[language] && shipped.prior
      ? `${language}: no measured timing statistics (its language pack has timing.statistics: null); using the cross-language prior ${path.basename(shipped.file)} (CallFriend/CallHome calls of en, ja, zh, de pooled; Stivers et al. 2009, PNAS 106:10587). Measure real ${language} conversations with duplexsynth measure and set timeline.statistics.${language}`
      : null;
  const variantDataset = `${dataset}${BARGE_IN_SUFFIX}`;
  const benchmarkProfile = config.timeline.profile === 'benchmark';
  const turnHoldShare = config.timeline.turnHoldShare ?? (benchmarkProfile ? DEFAULT_BENCHMARK_TURN_HOLD_SHARE : 0);
  const placement: TimelinePlacement = {
    seed: config.seed,
    channelOfRole: config.channels,
    statistics,
    renderPool,
    options: {
      leadingSilenceCs: Math.round(config.timeline.leadingSilenceSeconds * 100),
      trailingSilenceCs: Math.round(config.timeline.trailingSilenceSeconds * 100),
      maximumGapCs:
        config.timeline.maximumGapSeconds === null ? null : Math.round(config.timeline.maximumGapSeconds * 100),
      gapOnlyChannel: benchmarkProfile ? config.channels.system : null,
    },
  };
  const backchannelPhrases = config.timeline.backchannels.enabled
    ? (config.timeline.backchannels.phrases[language] ?? [])
    : [];
  const metadataOf = { language, config, synthesizer, statisticsFile };
  const settings: Omit<DialogueStepContext, 'sink'> = {
    config,
    language,
    dataset,
    variantDataset,
    textBackends,
    detector,
    queue,
    resamplePool,
    synthesizer,
    progress,
    turnHoldShare,
    backchannelPhrases,
    placement,
    metadataOf,
  };

  const stepsInto = (sinks: { base: DialogueSink; variant: DialogueSink | null }) => {
    const steps: StageStep<DialogueWork>[] = DIALOGUE_STAGE_LIST.map((entry) =>
      entry.step({ ...settings, sink: sinks.base }),
    );
    const { variant } = sinks;
    const variantSteps: StageStep<DialogueWork>[] = !variant
      ? []
      : BARGE_IN_STAGE_LIST.map((entry) => entry.step({ ...settings, sink: variant }));
    return { steps, variantSteps };
  };
  const initial = (conversation: SourceConversation): DialogueWork => ({
    conversation,
    speakers: roster.fixed ?? drawDialogueSpeakers(roster.identities, config.seed, conversation.id),
  });
  return {
    stepsInto,
    initial,
    statistics,
    placement,
    turnHoldShare,
    backchannelPhrases,
    timingPriorWarning,
    synthesizer,
  };
}
