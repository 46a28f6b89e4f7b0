/**
 * Derives the shipped default timing statistics, `pipeline/timeline/defaults/{en,ja}.timing.json`,
 * from the real CallFriend speaker timings in the shared folder
 * (`corpora/reference-timing/rttm/{en,ja}/*.rttm`; `DUPLEXSYNTH_SHARED`, default `../shared`).
 *
 *     npx tsx scripts/derive-default-timing.ts            # write both files
 *     npx tsx scripts/derive-default-timing.ts --check    # exit 1 if a file would change
 *
 * Per language: read every RTTM file (sorted by name), skip files whose timing content repeats an
 * earlier file, keep the two speakers with the most talk time (corpora/rttm.ts), apply the event
 * rules (pipeline/events), keep every speaker change's floor-transfer offset, every TURN_HOLD gap and
 * every SHORTPAUSE, discarding those that contain a dropped speaker's speech
 * (pipeline/timeline/measure-turn-taking.ts), and write the statistics with provenance. The output is
 * deterministic (sorted values, no date), so `--check` and the tests can regenerate it byte for byte.
 */
import { readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { readRttm, recordingContentKey, toTwoChannelSegments } from '../corpora/rttm.ts';
import { DEFAULT_EVENT_THRESHOLDS } from '../pipeline/events/index.ts';
import type { Language } from '../pipeline/model/types.ts';
import { combineMeasurements, measureTurnTaking } from '../pipeline/timeline/measure-turn-taking.ts';
import {
  buildTimingStatistics,
  defaultTimingStatisticsPath,
  formatTimingStatistics,
  type TimingStatistics,
} from '../pipeline/timeline/timing-statistics.ts';

/** The command recorded in the files' provenance. */
export const DERIVE_DEFAULT_TIMING_COMMAND = 'npx tsx scripts/derive-default-timing.ts';

/** Where each language's reference timings are, relative to the shared folder, and what they are. */
export const DEFAULT_TIMING_SOURCES: Record<Language, { folder: string; corpus: string }> = {
  en: {
    folder: 'corpora/reference-timing/rttm/en',
    corpus: 'CallFriend North American English (TalkBank CABank), two-party telephone calls',
  },
  ja: {
    folder: 'corpora/reference-timing/rttm/ja',
    corpus: 'CallFriend Japanese (TalkBank CABank), two-party telephone calls',
  },
};

const LICENCE = 'CC BY-NC-SA 3.0';
const ORIGIN =
  'TalkBank CABank CHAT files converted to RTTM by pthavarasa/CallHome-CallFriend-bergmann, commit 9031a9c';

/** The shared folder: `DUPLEXSYNTH_SHARED`, else `shared` beside the project root. */
export function sharedFolder(): string {
  const projectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
  return process.env.DUPLEXSYNTH_SHARED ?? path.resolve(projectRoot, '..', 'shared');
}

/**
 * Derives one language's default statistics from the RTTM files under `sharedRoot`.
 * @param language `en` or `ja`
 * @param sharedRoot the shared folder (absolute or relative to the working directory)
 * @returns validated statistics (seconds), deterministic for the same input files
 * @throws RttmFormatError naming file and line for a malformed RTTM file; Error when the folder has no
 *   `.rttm` file; TimingStatisticsError when the result is invalid
 */
export async function deriveDefaultTiming(language: Language, sharedRoot: string): Promise<TimingStatistics> {
  const source = DEFAULT_TIMING_SOURCES[language];
  const folder = path.join(sharedRoot, source.folder);
  const names = (await readdir(folder)).filter((name) => name.endsWith('.rttm')).sort();
  if (names.length === 0) throw new Error(`${folder}: no .rttm files`);

  const seen = new Map<string, string>();
  const duplicateRecordings: { path: string; sameAs: string }[] = [];
  const droppedSpeakers: { recording: string; speaker: string; talkSeconds: number }[] = [];
  const parts = [];
  let totalDurationCs = 0;
  let emptySegments = 0;
  let mergedSegments = 0;
  for (const name of names) {
    const relativePath = `${source.folder}/${name}`;
    const recording = await readRttm(path.join(folder, name));
    const key = recordingContentKey(recording);
    const earlier = seen.get(key);
    if (earlier !== undefined) {
      duplicateRecordings.push({ path: relativePath, sameAs: earlier });
      continue;
    }
    seen.set(key, relativePath);
    const twoChannel = toTwoChannelSegments(recording);
    totalDurationCs += twoChannel.duration;
    emptySegments += twoChannel.emptySegmentCount;
    mergedSegments += twoChannel.mergedSegmentCount;
    for (const dropped of twoChannel.droppedSpeakers) {
      droppedSpeakers.push({ recording: recording.id, speaker: dropped.speaker, talkSeconds: dropped.talkTime / 100 });
    }
    parts.push(
      measureTurnTaking({
        id: recording.id,
        segments: twoChannel.segments,
        excludedSpeech: twoChannel.droppedSpeakers.flatMap((dropped) => dropped.segments),
      }),
    );
  }
  const measured = combineMeasurements(parts);
  const allOffsets = [...measured.speakerChangeOffsets['channel0->channel1'], ...measured.speakerChangeOffsets['channel1->channel0']];
  const zeroOffsets = allOffsets.filter((offset) => offset === 0).length;
  const thresholds = DEFAULT_EVENT_THRESHOLDS;
  return buildTimingStatistics({
    language,
    samplerUse: 'pooled',
    measurements: measured,
    provenance: {
      corpus: source.corpus,
      licence: LICENCE,
      origin: ORIGIN,
      pathsRelativeTo: 'the shared folder (DUPLEXSYNTH_SHARED, default ../shared beside the project root)',
      sourcePaths: names.map((name) => `${source.folder}/${name}`),
      recordingCount: names.length,
      recordingsUsed: parts.length,
      duplicateRecordings,
      totalDurationSeconds: totalDurationCs / 100,
      channelMapping:
        'per call, channel 0 = the speaker with more talk time, channel 1 = the other; the calls are symmetric ' +
        'conversations, so the direction carries no user/system role and the sampler pools both directions',
      droppedSpeakers,
      discardedNearDroppedSpeakers: measured.discarded,
      thresholds: {
        ipuMaximumPauseSeconds: thresholds.maxPauseInIpu / 100,
        backchannelMaximumSeconds: thresholds.maxBackchannel / 100,
        bargeInMinimumOverlapSeconds: thresholds.bargeInOverlap / 100,
        source: 'docs/events.md rules 1, 2 and 4 (pipeline/events DEFAULT_EVENT_THRESHOLDS)',
      },
      command: DERIVE_DEFAULT_TIMING_COMMAND,
      notes: [
        'Times come from utterance-level CHAT bullets, not voice activity detection: bullets of different ' +
          'speakers often abut or overlap where the speech itself does not, so overlaps are somewhat overstated ' +
          `and offsets of exactly 0.00 s are frequent (${zeroOffsets} of ${allOffsets.length} speaker changes).`,
        `Each speaker's own overlapping or abutting bullets were merged (${mergedSegments} merges); bullets ` +
          `shorter than 0.005 s, which round to zero length, were dropped (${emptySegments}).`,
        'Long single-speaker stretches of merged bullets make some measured overlaps very large; the timeline ' +
          'sampler redraws any offset that would break its placement constraints (pipeline/timeline/place-dialogue.ts).',
      ],
    },
  });
}

/** The file text `deriveDefaultTiming` gives for a language (what the script writes). */
export async function renderDefaultTiming(language: Language, sharedRoot: string): Promise<string> {
  return formatTimingStatistics(await deriveDefaultTiming(language, sharedRoot));
}

async function main(argv: readonly string[]): Promise<number> {
  const check = argv.includes('--check');
  const sharedRoot = sharedFolder();
  let stale = 0;
  for (const language of ['en', 'ja'] as const) {
    const target = defaultTimingStatisticsPath(language);
    const text = await renderDefaultTiming(language, sharedRoot);
    if (check) {
      const current = await readFile(target, 'utf8').catch(() => null);
      if (current !== text) {
        stale += 1;
        process.stderr.write(`${target}: out of date; run ${DERIVE_DEFAULT_TIMING_COMMAND}\n`);
      }
    } else {
      await writeFile(target, text);
      process.stdout.write(`wrote ${path.relative(process.cwd(), target)}\n`);
    }
  }
  return stale === 0 ? 0 : 1;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
      process.exitCode = 1;
    },
  );
}
