/**
 * The scores of one dialogue's WAV for stage `score-quality`: its DNSMOS and its signal checks
 * (clipping, silence, loudness, speech rate, role/label agreement), each kept in the build's content
 * cache under the WAV's sha256 and everything else the result depends on. Whoever has the WAV at hand
 * scores it (a worker of a queued build, right after rendering); a dataset's scoring then finds every
 * dialogue's scores in the cache and reads no audio.
 */
import { readFile } from 'node:fs/promises';
import { decodeWav } from '../pipeline/audio/wav.ts';
import type { DatasetDialogue } from '../pipeline/quality/dataset-files.ts';
import type { DialogueQuality } from '../pipeline/quality/quality-report.ts';
import { checkDialogueSignal } from '../pipeline/quality/signal-checks.ts';
import type { QualityThresholds } from '../pipeline/quality/thresholds.ts';
import type { Language } from '../pipeline/model/types.ts';
import { cachedJson } from '../pipeline/run/stage.ts';
import type { RecordingMosScorer } from '../pipeline/services/mos/mos-scorer.ts';
import type { ContentCache } from '../pipeline/storage/content-cache.ts';
import { sourceDigest } from '../pipeline/storage/source-digest.ts';
import { dnsmosCacheKey, roundDnsmos } from './score-quality-dnsmos.ts';

/** Cache folder of the signal checks. */
export const SIGNAL_CHECKS_CACHE_STAGE = 'signal-checks';

/** How one dialogue is scored. */
export interface DialogueScoring {
  language: Language;
  thresholds: QualityThresholds;
  /** Measure EBU R 128 loudness with ffmpeg. */
  measureLoudness: boolean;
  /** DNSMOS windows' hop, seconds (part of the DNSMOS entry's key). */
  hopSeconds: number;
  /** The DNSMOS scorer, loaded on the first dialogue whose score is not cached. */
  scorer: () => Promise<RecordingMosScorer>;
  /** Where the scores are kept; null: nothing is cached. */
  cache: ContentCache | null;
  /** Whether DNSMOS scores may be cached (false for a scorer given by the caller, whose settings are not in the key). */
  cacheDnsmos: boolean;
  /** Channel-seconds scored as DNSMOS goes. */
  onProgress?: (channelSeconds: number) => void;
}

/** The utterances the signal checks read, from a dialogue's metadata. */
function utterancesForChecks(dialogue: DatasetDialogue) {
  return dialogue.metadata.utterances.map((utterance) => ({
    index: utterance.index,
    role: utterance.role,
    kind: utterance.kind,
    channel: utterance.channel,
    start: utterance.start,
    end: utterance.end,
    spokenText: utterance.text.transcript ?? utterance.text.synthesized ?? utterance.text.final ?? '',
  }));
}

/**
 * DNSMOS and signal checks of one dialogue (the WAV decoded only when one of them is not cached).
 * @returns the two results and whether DNSMOS was computed (not a cache hit)
 * @throws WavDecodeError for a bad WAV; LoudnessMeasurementError when ffmpeg fails; the scorer's errors
 */
export async function scoreDialogueAudio(
  dialogue: DatasetDialogue,
  scoring: DialogueScoring,
): Promise<{ dnsmos: DialogueQuality['dnsmos']; signal: DialogueQuality['signal']; dnsmosComputed: boolean }> {
  let audio: ReturnType<typeof decodeWav> | null = null;
  const decoded = async () => (audio ??= decodeWav(await readFile(dialogue.audioFile), dialogue.audioFile));
  let dnsmosComputed = false;
  const computeDnsmos = async () => {
    dnsmosComputed = true;
    const scorer = await scoring.scorer();
    return roundDnsmos(
      await scorer.scoreRecording(await decoded(), scoring.onProgress ? { onProgress: scoring.onProgress } : {}),
    );
  };
  const { cache } = scoring;
  const dnsmos =
    cache && dialogue.audioSha256 && scoring.cacheDnsmos
      ? await cachedJson(cache, dnsmosCacheKey(dialogue.audioSha256, scoring.hopSeconds), computeDnsmos)
      : await computeDnsmos();
  const utterances = utterancesForChecks(dialogue);
  const computeSignal = async () =>
    checkDialogueSignal(
      {
        file: dialogue.audioFile,
        audio: await decoded(),
        language: scoring.language,
        events: dialogue.events,
        utterances,
      },
      scoring.thresholds,
      { measureLoudness: scoring.measureLoudness },
    );
  const signal =
    cache && dialogue.audioSha256
      ? await cache.json(
          SIGNAL_CHECKS_CACHE_STAGE,
          {
            version: 1,
            code: sourceDigest(),
            audioSha256: dialogue.audioSha256,
            language: scoring.language,
            thresholds: scoring.thresholds,
            measureLoudness: scoring.measureLoudness,
            events: dialogue.events,
            utterances,
          },
          computeSignal,
        )
      : await computeSignal();
  return { dnsmos, signal, dnsmosComputed };
}
