/**
 * `duplexsynth build --dry-run`: what a build would do, without calling any service and without
 * writing anything (no dataset, no cache entry, no lock):
 * - the corpus is read (a local file) and the dialogues listed, with rejected conversations;
 * - text: each dialogue's rewrite (and translation) is looked up in the content cache; an offline
 *   backend (`rules`, `replay`: local computation and a local file) runs as in a build, so its text
 *   is exact; for a remote backend (`gemini`, `openai-compatible`) a cache miss is counted as a
 *   request the build would send, and nothing is sent;
 * - speech: for every dialogue whose text is known, each utterance (and the backchannel clips) is
 *   looked up in the cache under the key the build uses (the same stage code runs, through
 *   {@link PlanningCache}); a miss is counted as a synthesis request, and the planner answers it with
 *   the project's fake engine (tone bursts) so the stage code can go on; remote engines are created
 *   with `probe: false`, so no server is asked anything. For dialogues without known text, every
 *   utterance (questions and answers from the source conversation, plus the backchannel phrases) is a
 *   request.
 * Counts of requests are first attempts: re-syntheses of too-short answers, repairs of invalid model
 * replies and retries come on top in a real build.
 */
import { resolveSpeechDetectorOptions } from '../audio/speech-regions.ts';
import { datasetNameOf, ttsOf, type BuildConfig } from '../config.ts';
import type { Language, ScriptUtterance } from '../model/types.ts';
import { ingestCorpus } from '../../stages/ingest-corpus.ts';
import { prepareDialogueText } from './prepare-text.ts';
import { createTextBackends, type DialogueTextBackends } from '../services/llm/text-backends.ts';
import {
  createSynthesisQueue,
  dialogueScript,
  synthesizeDialogue,
  synthesizeSettingsOf,
  SYNTHESIZE_STAGE,
} from '../../stages/synthesize-speech.ts';
import type { DialogueTextBackend } from '../services/llm/dialogue-text-backend.ts';
import { FakeSpeechSynthesizer } from '../services/tts/fake-speech-synthesizer.ts';
import { drawDialogueSpeakers } from '../services/tts/offline-speaker-roster.ts';
import type { SpeechSynthesizer } from '../services/tts/speech-synthesizer.ts';
import { COSYVOICE2_ENGINE_ID } from '../services/tts/cosyvoice2-fastapi.ts';
import { COSYVOICE2_TRITON_ENGINE_ID } from '../services/tts/cosyvoice2-triton.ts';
import { createSpeechSynthesizer, isRemoteSpeechEngine } from '../services/tts/synthesizer-registry.ts';
import { planTurnHolds, protectedPhrasesOf } from '../text/turn-hold-split.ts';
import { dialogueRandomStream } from '../model/random.ts';
import { checkBuildIsPossible, checkOfflineVoices } from './build.ts';
import { checkCorpusNumbersCanBeSpoken } from '../../stages/rewrite-spoken-numbers.ts';
import { speakerRoster } from './speaker-roster.ts';
import { DEFAULT_BENCHMARK_TURN_HOLD_SHARE } from './dataset-output.ts';
import { ContentCache, type BinaryCodec } from '../storage/content-cache.ts';

/** Speech engines that ask their servers something when created, unless `probe: false`. */
const PROBING_ENGINES = new Set<string>([COSYVOICE2_ENGINE_ID, COSYVOICE2_TRITON_ENGINE_ID]);

/** Text backends that talk to a service. */
const REMOTE_TEXT_BACKENDS = new Set(['gemini', 'openai-compatible']);

/** Thrown by a planning stand-in instead of sending a request. */
class PlannedRequest extends Error {
  constructor(readonly task: string) {
    super(`dry run: ${task} request not sent`);
  }
}

const MISS = Symbol('dry-run cache miss');

/**
 * A content cache that reads like the build's and never writes: a hit returns the stored value; a
 * miss (or a corrupt entry) runs `compute` and returns its value without storing it. Hits and misses
 * are counted in `statistics` as in a build. An entry from before the content hashes is read but
 * not rewritten.
 */
export class PlanningCache extends ContentCache {
  protected override async store(): Promise<void> {}

  override async json<T>(stage: string, keyMaterial: unknown, compute: () => Promise<T>): Promise<T> {
    try {
      return await super.json<T>(stage, keyMaterial, () => Promise.reject(MISS));
    } catch (error) {
      if (error !== MISS) throw error;
      return compute();
    }
  }

  override async binary<T, M>(
    stage: string,
    keyMaterial: unknown,
    compute: () => Promise<T>,
    codec: BinaryCodec<T, M>,
    extension: string,
  ): Promise<T> {
    try {
      return await super.binary<T, M>(stage, keyMaterial, () => Promise.reject(MISS), codec, extension);
    } catch (error) {
      if (error !== MISS) throw error;
      return compute();
    }
  }
}

/** A text backend with the real one's identity (so cache keys match) that sends nothing. */
function standInTextBackend(real: DialogueTextBackend): DialogueTextBackend {
  return {
    id: real.id,
    describe: (task, targetLanguage) => real.describe(task, targetLanguage),
    rewrite: () => Promise.reject(new PlannedRequest('rewrite')),
    translate: () => Promise.reject(new PlannedRequest('translate')),
  };
}

/** A synthesizer with the real one's identity (so cache keys match) that counts requests and answers with tone bursts. */
function countingSynthesizer(real: SpeechSynthesizer): SpeechSynthesizer & { texts: string[] } {
  const fake = new FakeSpeechSynthesizer();
  const counting = {
    id: real.id,
    version: real.version,
    languages: real.languages,
    texts: [] as string[],
    synthesize: (request: Parameters<SpeechSynthesizer['synthesize']>[0]) => {
      counting.texts.push(request.text);
      return fake.synthesize(request);
    },
  };
  return counting;
}

/**
 * Utterances a dry run looks up (and stands in for) at once: the planner keeps no clip, so its memory
 * is this window's audio whatever the conversation's length (a 10,000-turn conversation once held all
 * 20,000 stand-in clips at a time, 5.3 GB). Larger than any synthesis concurrency.
 */
export const PLANNING_WINDOW_UTTERANCES = 64;

/**
 * Runs `synthesize` over `utterances` in windows of {@link PLANNING_WINDOW_UTTERANCES} (each utterance's
 * clip depends on its own text, voice and settings only, so windows give the same lookups and
 * requests as one call) and keeps of each clip only what the plan needs.
 * @param minimumUtteranceCs a part of a split question this short or shorter is spoken whole
 * @returns the turn numbers whose question part came out too short (centiseconds compared)
 */
export async function planSynthesis(
  utterances: readonly ScriptUtterance[],
  synthesize: (
    window: readonly ScriptUtterance[],
  ) => Promise<readonly { part?: unknown; durationCs: number; turnNumber: number }[]>,
  minimumUtteranceCs: number,
): Promise<Set<number>> {
  const tooShort = new Set<number>();
  for (let start = 0; start < utterances.length; start += PLANNING_WINDOW_UTTERANCES) {
    for (const utterance of await synthesize(utterances.slice(start, start + PLANNING_WINDOW_UTTERANCES))) {
      if (utterance.part !== undefined && utterance.durationCs <= minimumUtteranceCs)
        tooShort.add(utterance.turnNumber);
    }
  }
  return tooShort;
}

/** The plan of one language. */
export interface LanguagePlan {
  language: Language;
  dataset: string;
  dialogues: number;
  /** Questions and answers (from the text when known, else from the source turns). */
  utterances: number;
  text: {
    backends: string[];
    remote: boolean;
    /** Dialogues whose text comes from the cache. */
    cached: number;
    /** Dialogues whose text an offline backend makes (no service). */
    computedOffline: number;
    /** Requests (rewrite, translate) a build would send to a service. */
    serviceRequests: number;
  };
  synthesis: {
    engine: string;
    remote: boolean;
    /** Utterance and backchannel clips found in the cache. */
    cached: number;
    /** Clips a build would synthesize (first attempts: the script's own texts). */
    requests: number;
    /**
     * Further requests the stand-in audio led to (padded or rephrased re-syntheses of utterances it
     * made too short or too slow); the real engine may need fewer or none.
     */
    resynthesesForStandInAudio: number;
  };
  /** Dialogues the build would fail on, with the reason (e.g. a replay file without the request). */
  failures: { id: string; reason: string }[];
}

/** What a build would do. */
export interface BuildPlan {
  name: string;
  output: string;
  cacheDirectory: string;
  corpus: string;
  rejected: { id: string; reason: string }[];
  languages: LanguagePlan[];
  qualityScoring: boolean;
}

/**
 * Plans the build of `config` (module comment): reads the corpus and the cache, calls no service,
 * writes nothing.
 * @throws ConfigError as the build does before any work (checkBuildIsPossible); corpus errors from
 *   the ingest stage; the local engine's own errors when it is not installed (its version is part of
 *   the cache key)
 */
export async function planBuild(config: BuildConfig): Promise<BuildPlan> {
  checkBuildIsPossible(config);
  await checkOfflineVoices(config);
  const corpus = await ingestCorpus(config);
  checkCorpusNumbersCanBeSpoken(config, corpus.conversations);
  const cache = new PlanningCache(config.output.cacheDirectory);
  const real = await createTextBackends(config);
  const remote = {
    rewrite: REMOTE_TEXT_BACKENDS.has(config.llm.rewrite.backend),
    translate: REMOTE_TEXT_BACKENDS.has(config.llm.translate.backend),
  };
  const backends: DialogueTextBackends = {
    rewrite: remote.rewrite ? standInTextBackend(real.rewrite) : real.rewrite,
    translate: real.translate === null ? null : remote.translate ? standInTextBackend(real.translate) : real.translate,
  };
  // as runBuild resolves them (same keys, so the same cache keys)
  const detector = resolveSpeechDetectorOptions(
    Object.fromEntries(
      Object.entries({
        thresholdDbfs: config.speechDetection.thresholdDbfs,
        minimumSilenceSeconds: config.speechDetection.minimumSilenceSeconds,
        minimumSpeechSeconds: config.speechDetection.minimumSpeechSeconds,
      }).filter(([, value]) => value !== undefined),
    ),
  );
  const queue = createSynthesisQueue(config.synthesis.concurrency);
  // as runBuild: a share of the questions spoken in two parts (user TURN_HOLDs)
  const turnHoldShare =
    config.timeline.turnHoldShare ?? (config.timeline.profile === 'benchmark' ? DEFAULT_BENCHMARK_TURN_HOLD_SHARE : 0);
  const minimumUtteranceCs = Math.round(config.synthesis.minimumUtteranceSeconds * 100);
  const languages: LanguagePlan[] = [];
  for (const language of config.languages) {
    const engine = ttsOf(config, language).backend;
    const service = ttsOf(config, language).service;
    const remoteEngine = isRemoteSpeechEngine(engine);
    const synthesizer = countingSynthesizer(
      await createSpeechSynthesizer(
        engine,
        PROBING_ENGINES.has(engine) && typeof service === 'object' && service !== null
          ? { ...service, probe: false }
          : service,
      ),
    );
    const roster = speakerRoster(language, config, synthesizer);
    const backchannelPhrases = config.timeline.backchannels.enabled
      ? (config.timeline.backchannels.phrases[language] ?? [])
      : [];
    const plan: LanguagePlan = {
      language,
      dataset: datasetNameOf(config, language),
      dialogues: corpus.conversations.length,
      utterances: 0,
      text: {
        backends: [config.llm.rewrite.backend, ...(language === 'en' ? [] : [config.llm.translate.backend])],
        remote: remote.rewrite || (language !== 'en' && remote.translate),
        cached: 0,
        computedOffline: 0,
        serviceRequests: 0,
      },
      synthesis: { engine, remote: remoteEngine, cached: 0, requests: 0, resynthesesForStandInAudio: 0 },
      failures: [],
    };
    const synthesisHits = () => cache.statistics[SYNTHESIZE_STAGE]?.hits ?? 0;
    for (const conversation of corpus.conversations) {
      const sourceUtterances = conversation.turns.reduce((sum, turn) => sum + 1 + (turn.answer === null ? 0 : 1), 0);
      const textMisses = () =>
        (cache.statistics['rewrite-spoken']?.misses ?? 0) + (cache.statistics.translate?.misses ?? 0);
      const missesBefore = textMisses();
      let text;
      try {
        text = await prepareDialogueText(conversation, language, backends, cache);
        if (textMisses() === missesBefore) plan.text.cached += 1;
        else plan.text.computedOffline += 1;
      } catch (error) {
        if (error instanceof PlannedRequest) {
          // a rewrite miss also means a translation request (its input is the rewrite)
          plan.text.serviceRequests +=
            error.task === 'rewrite' && language !== 'en' && backends.translate !== null ? 2 : 1;
          plan.utterances += sourceUtterances;
          plan.synthesis.requests += sourceUtterances + backchannelPhrases.length;
          continue;
        }
        plan.failures.push({
          id: conversation.id,
          reason: error instanceof Error ? error.message.split('\n')[0]! : String(error),
        });
        continue;
      }
      const protectedPhrases = protectedPhrasesOf(conversation.turns);
      const holds = await planTurnHolds(
        text.final.map((turn) => ({
          turnNumber: turn.turnNumber,
          question: turn.question,
          protectedPhrases: protectedPhrases.get(turn.turnNumber) ?? [],
          pausePoint: turn.pausePoint,
        })),
        language,
        turnHoldShare,
        dialogueRandomStream(config.seed, conversation.id, 'turn-holds'),
      );
      let script = dialogueScript(text, holds);
      const firstScript = script;
      const speakers = roster.fixed ?? drawDialogueSpeakers(roster.identities, config.seed, conversation.id);
      const settings = {
        ...synthesizeSettingsOf(config, language, detector),
        voices: { user: speakers.user.voice, system: speakers.system.voice },
      };
      const hitsBefore = synthesisHits();
      synthesizer.texts.length = 0; // this dialogue's requests only: nothing kept from one dialogue to the next
      const backchannelScript: ScriptUtterance[] = backchannelPhrases.map((phrase, position) => ({
        index: position,
        turnNumber: 0,
        kind: 'backchannel',
        role: 'user',
        text: phrase,
      }));
      const synthesize = (utterances: readonly ScriptUtterance[]) =>
        planSynthesis(
          utterances,
          (window) => synthesizeDialogue(window, synthesizer, settings, cache, queue),
          minimumUtteranceCs,
        );
      try {
        // a question whose part comes out too short is spoken whole, as the build does
        const tooShort = await synthesize(script);
        if (tooShort.size > 0) {
          for (const turnNumber of tooShort) holds.delete(turnNumber);
          script = dialogueScript(text, holds);
          await synthesize(script);
        }
        await synthesize(backchannelScript);
      } catch (error) {
        plan.failures.push({
          id: conversation.id,
          reason: error instanceof Error ? error.message.split('\n')[0]! : String(error),
        });
      }
      plan.utterances += script.length;
      plan.synthesis.cached += synthesisHits() - hitsBefore;
      const ownTexts = new Set([...firstScript, ...script, ...backchannelScript].map((utterance) => utterance.text));
      const requested = synthesizer.texts;
      const first = requested.filter((requestedText) => ownTexts.has(requestedText)).length;
      plan.synthesis.requests += first;
      plan.synthesis.resynthesesForStandInAudio += requested.length - first;
    }
    languages.push(plan);
  }
  return {
    name: config.name,
    output: config.output.directory,
    cacheDirectory: config.output.cacheDirectory,
    corpus: config.corpus.path,
    rejected: corpus.rejected,
    languages,
    qualityScoring: config.quality.enabled,
  };
}

/** The plan as lines of text (what `--dry-run` prints). */
export function formatBuildPlan(plan: BuildPlan): string {
  const lines = [
    `dry run of build "${plan.name}": nothing is written and no service is called`,
    `corpus: ${plan.corpus}${plan.rejected.length ? ` (${plan.rejected.length} conversations rejected)` : ''}`,
    `output: ${plan.output}; cache: ${plan.cacheDirectory}`,
  ];
  for (const language of plan.languages) {
    lines.push(
      `[${language.language}] ${language.dataset}: ${language.dialogues} dialogues, ${language.utterances} utterances`,
      `  text (${language.text.backends.join(' + ')}${language.text.remote ? ', remote' : ', offline'}): ${language.text.cached} cached, ${language.text.computedOffline} made offline, ${language.text.serviceRequests} service requests`,
      `  speech (${language.synthesis.engine}${language.synthesis.remote ? ', remote' : ', local'}): ${language.synthesis.cached} clips cached, ${language.synthesis.requests} to synthesize${language.synthesis.remote ? ' (service requests)' : ''}${
        language.synthesis.resynthesesForStandInAudio
          ? `, up to ${language.synthesis.resynthesesForStandInAudio} re-syntheses of short or slow clips`
          : ''
      }`,
    );
    for (const failure of language.failures) lines.push(`  would fail: ${failure.id}: ${failure.reason}`);
  }
  for (const rejected of plan.rejected) lines.push(`rejected: ${rejected.id}: ${rejected.reason}`);
  lines.push(`quality scoring: ${plan.qualityScoring ? 'yes (DNSMOS, local)' : 'no'}`);
  lines.push('counts of requests are first attempts; re-syntheses of short answers, repairs and retries come on top');
  return `${lines.join('\n')}\n`;
}
