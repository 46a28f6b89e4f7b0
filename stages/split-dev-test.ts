/**
 * Stage `split-dev-test`: divides each dataset folder into the benchmark's splits (docs/dataset-format.md,
 * "{split}.jsonl", and docs/quality-and-splits.md, "Split selection": test sets of about one hour each,
 * the dialogues with the highest dialogue-level DNSMOS; the rest is the dev set, kept speaker-disjoint
 * from test):
 *
 * 1. rank the dialogues by dialogue-level DNSMOS OVRL from `quality.json`, highest first; equal
 *    scores by id (code-unit order, ascending); dialogues without a DNSMOS value (no speech) are
 *    never put in test;
 * 2. `test` = the shortest prefix of the ranking whose total duration reaches the target (default one
 *    hour; the last dialogue may pass the target by less than its own length, as the published
 *    1.01-1.04 h test sets do); a dataset shorter than the target goes to test whole;
 * 3. `test_small` (optional) = the N best of test;
 * 4. `dev` = the rest, minus every dialogue sharing a speaker identity (metadata
 *    `speakers.*.speakerId`, both roles) with any test dialogue; those are listed as excluded. When
 *    that empties dev — e.g. every dialogue uses the same two offline voices — split.json says so in
 *    `warnings` and `devEmptyBecauseOfSpeakerOverlap`. `speakerDisjoint: false` keeps them in dev
 *    instead (recorded in split.json);
 *    `unit: 'speaker-group'` (the default, as in the config and the `split` command): test is filled
 *    with whole groups of dialogues connected by shared speakers (best mean OVRL first), so nothing is
 *    excluded when speakers are assigned in disjoint groups (the offline rosters are).
 *    Every dialogue in neither split is listed in split.json `excluded` with its reason. With a small roster whose identities are paired freely, shared
 *    speakers connect almost every dialogue and no split can keep dev speaker-disjoint and non-empty;
 *    split.json then warns about it;
 * 5. per language independently; afterwards, for every pair of datasets of different languages, the
 *    dialogues whose source conversation is in both test sets are reported (the paper had 23).
 *
 * Writes, per dataset folder: `test.jsonl`, the rest as `test_other.jsonl` (a split name the
 * benchmark's scripts/pipe.sh accepts: test, test_small, test_other) and, with `devAlias` (default),
 * the same lines as `dev.jsonl`; when asked, `test_small.jsonl` (lines copied byte for byte from
 * all.jsonl, in all.jsonl order; an old `test_small.jsonl` or `dev.jsonl` is removed when not asked
 * for), `split.json` (whose `dev` entry is the rest), and refreshes `tables.md` / `tables.json`.
 * Deterministic. A variant of a dataset (the `_bargein` datasets: the same dialogues with other
 * timing) takes the split of the dataset it varies (`applySplitToVariant`). Steps 1–4 are the
 * selection in pipeline/quality/split-selection.ts; this module reads and writes the folders.
 */
import { readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { readDatasetFolder, type DatasetFolder } from '../pipeline/quality/dataset-files.ts';
import { readQualityReport, type DatasetQualityReport } from '../pipeline/quality/quality-report.ts';
import { SPLIT_FILE_NAME, writeQualityTables } from '../pipeline/quality/tables.ts';
import { bytesHash } from '../pipeline/storage/content-cache.ts';
import { writeAtomic } from '../pipeline/storage/write-atomic.ts';
import {
  DEFAULT_SPLIT_UNIT,
  splitReportSchema,
  type SplitReport,
  type SplitUnit,
} from '../pipeline/model/split-report.ts';
import { formatRecord } from '../pipeline/storage/json-records.ts';
import type { Stage } from '../pipeline/run/stage.ts';
import { selectSplits, type SplitCandidate, type SplitSelection } from '../pipeline/quality/split-selection.ts';

/** The split stage cannot run on a dataset (no or stale quality.json), message says what to do. */
export class SplitError extends Error {
  override readonly name = 'SplitError';
}

/** Options of {@link splitDatasets}. */
export interface SplitDatasetsOptions {
  /** Target test duration in hours. Default 1. */
  testHours?: number;
  /** Size of test_small; none when absent. */
  testSmall?: number | null;
  /** Keep dev speaker-disjoint from test. Default true. */
  speakerDisjoint?: boolean;
  /** Fill test by whole speaker groups (default, as the config) or dialogue by dialogue ({@link SplitSelectionOptions.unit}). */
  unit?: SplitUnit;
  /** Also write the rest (`test_other.jsonl`) as `dev.jsonl`. Default true. */
  devAlias?: boolean;
  /** Progress and warning lines. */
  log?: (line: string) => void;
  /**
   * Check that every WAV still has the sha256 the manifest lists (it was scored as listed). Default
   * true; a build that has just written and scored the datasets passes false (it wrote the files it
   * listed; reading every WAV again would cost the build as much as writing it; `verify` is the full check).
   */
  checkAudio?: boolean;
}

/** Name of the file holding the dialogues not in test (the benchmark's split name). */
export const REST_SPLIT_FILE = 'test_other.jsonl';
/** Its alias for users' own development use. */
export const DEV_ALIAS_FILE = 'dev.jsonl';

/** Dialogues of this dataset whose source conversation is also in another language's test set. */
/** Dialogues of a dataset also in another language's test set. */
export type SharedTestDialogues = SplitReport['sharedTestWithOtherLanguages'][number];

/** Result of {@link splitDatasets} for one dataset. */
export interface DatasetSplitResult {
  directory: string;
  report: SplitReport;
}

/**
 * Checks that each dialogue's WAV still has the SHA-256 the build recorded in manifest.json (and
 * quality.json was checked against): audio changed by hand after scoring would otherwise be split by
 * its old DNSMOS. A WAV that is absent is left to the readers that need it.
 * @throws SplitError naming the file when its content changed.
 */
async function checkAudioIsUnchanged(folder: DatasetFolder): Promise<void> {
  for (const dialogue of folder.dialogues) {
    if (dialogue.audioSha256 === null) continue;
    const bytes = await readFile(dialogue.audioFile).catch(() => null);
    if (bytes !== null && bytesHash(bytes) !== dialogue.audioSha256) {
      throw new SplitError(
        `${dialogue.audioFile}: the audio of ${dialogue.id} differs from the SHA-256 in manifest.json (changed after the build); ` +
          'rebuild the dataset, or re-run "duplexsynth score" if the change is intended',
      );
    }
  }
}

/**
 * Checks that quality.json covers exactly the dialogues of all.jsonl with the same audio.
 * @throws SplitError naming the first difference.
 */
function checkQualityIsCurrent(
  folder: DatasetFolder,
  report: DatasetQualityReport | null,
): asserts report is DatasetQualityReport {
  if (report === null)
    throw new SplitError(`${folder.directory}: no quality.json; run "duplexsynth score ${folder.directory}" first`);
  const scored = new Map(report.dialogues.map((dialogue) => [dialogue.id, dialogue]));
  for (const dialogue of folder.dialogues) {
    const quality = scored.get(dialogue.id);
    if (!quality)
      throw new SplitError(
        `${folder.directory}: quality.json has no entry for ${dialogue.id}; re-run "duplexsynth score"`,
      );
    if (quality.audioSha256 !== dialogue.audioSha256)
      throw new SplitError(
        `${folder.directory}: the audio of ${dialogue.id} changed since quality.json was written; re-run "duplexsynth score"`,
      );
  }
  if (scored.size !== folder.dialogues.length) {
    const current = new Set(folder.dialogues.map((dialogue) => dialogue.id));
    const extra = report.dialogues.find((dialogue) => !current.has(dialogue.id));
    throw new SplitError(
      `${folder.directory}: quality.json scores ${extra?.id ?? 'a dialogue'}, which all.jsonl does not have; re-run "duplexsynth score"`,
    );
  }
}

function round4(value: number): number {
  return Math.round(value * 10_000) / 10_000;
}

/**
 * Splits each dataset folder (each one language) and writes its split files (see the module
 * comment), then reports the source conversations shared between different languages' test sets.
 * @param directories dataset folders `data/{lang}/task/{dataset}`, each already scored.
 * @returns per dataset its folder and split report, in the given order.
 * @throws SplitError when a folder has no or a stale quality.json; DatasetReadError for an unreadable
 *   folder; RangeError for bad options.
 */
export async function splitDatasets(
  directories: readonly string[],
  options: SplitDatasetsOptions = {},
): Promise<DatasetSplitResult[]> {
  const testHours = options.testHours ?? 1;
  const speakerDisjoint = options.speakerDisjoint ?? true;
  const log = options.log ?? (() => {});
  const prepared: {
    folder: DatasetFolder;
    selection: SplitSelection;
    report: DatasetQualityReport;
    sourceOf: Map<string, string>;
  }[] = [];
  for (const directory of directories) {
    const folder = await readDatasetFolder(directory);
    const report = await readQualityReport(folder.directory);
    checkQualityIsCurrent(folder, report);
    if (options.checkAudio ?? true) await checkAudioIsUnchanged(folder);
    const qualityById = new Map(report.dialogues.map((dialogue) => [dialogue.id, dialogue]));
    const candidates: SplitCandidate[] = folder.dialogues.map((dialogue) => {
      const quality = qualityById.get(dialogue.id)!;
      return {
        id: dialogue.id,
        durationSeconds: dialogue.metadata.durationSeconds,
        ovrl: quality.dnsmos.dialogue?.ovrl ?? null,
        speakerIds: quality.speakerIds,
      };
    });
    const selection = selectSplits(candidates, {
      testSeconds: testHours * 3600,
      testSmallCount: options.testSmall ?? null,
      speakerDisjoint,
      unit: options.unit ?? DEFAULT_SPLIT_UNIT,
    });
    prepared.push({
      folder,
      selection,
      report,
      sourceOf: new Map(report.dialogues.map((dialogue) => [dialogue.id, dialogue.sourceConversation])),
    });
  }

  const results: DatasetSplitResult[] = [];
  for (const entry of prepared) {
    const { folder, selection, report } = entry;
    const order = new Map(folder.dialogues.map((dialogue, index) => [dialogue.id, index]));
    const inFileOrder = (ids: readonly string[]) => [...ids].sort((a, b) => order.get(a)! - order.get(b)!);
    const durationOf = new Map(folder.dialogues.map((dialogue) => [dialogue.id, dialogue.metadata.durationSeconds]));
    const describe = (ids: readonly string[]) => {
      const sorted = inFileOrder(ids);
      return {
        ids: sorted,
        dialogues: sorted.length,
        hours: round4(sorted.reduce((sum, id) => sum + durationOf.get(id)!, 0) / 3600),
      };
    };
    const shared: SharedTestDialogues[] = [];
    for (const other of prepared) {
      if (other === entry || other.folder.language === folder.language) continue;
      const otherTestSources = new Set(other.selection.test.map((id) => other.sourceOf.get(id)!));
      const ids = inFileOrder(selection.test.filter((id) => otherTestSources.has(entry.sourceOf.get(id)!)));
      shared.push({ language: other.folder.language, dataset: other.folder.dataset, ids });
    }
    const splitReport: SplitReport = {
      format: 'duplexsynth-split',
      version: 1,
      language: folder.language,
      dataset: folder.dataset,
      settings: {
        rankedBy: 'dialogue-level DNSMOS OVRL (quality.json) descending, then id ascending',
        unit: options.unit ?? DEFAULT_SPLIT_UNIT,
        testHours,
        testSmall: options.testSmall ?? null,
        speakerDisjoint,
        speakerKey: 'metadata speakers.user.speakerId and speakers.system.speakerId',
      },
      splits: {
        test: describe(selection.test),
        test_small: selection.testSmall ? describe(selection.testSmall) : undefined,
        dev: describe(selection.dev),
      },
      excludedForSpeakerOverlap: selection.excludedForSpeakerOverlap,
      excluded: excludedDialogues(
        folder.dialogues.map((dialogue) => dialogue.id),
        [...selection.test, ...selection.dev],
        new Map(
          selection.excludedForSpeakerOverlap.map((item) => [
            item.id,
            `shares speaker(s) ${item.sharedSpeakers.join(', ')} with test`,
          ]),
        ),
      ),
      devEmptyBecauseOfSpeakerOverlap: selection.devEmptyBecauseOfSpeakerOverlap,
      devSharingSpeakersWithTest: inFileOrder(selection.devSharingSpeakersWithTest),
      testSpeakers: selection.testSpeakers,
      speakerGroups: selection.speakerGroups,
      targetReached: selection.targetReached,
      withoutDnsmos: selection.withoutDnsmos,
      ranking: selection.ranking.map((id) => ({
        id,
        ovrl: report.dialogues.find((dialogue) => dialogue.id === id)!.dnsmos.dialogue?.ovrl ?? null,
      })),
      sharedTestWithOtherLanguages: shared,
      warnings: selection.warnings,
    };
    await writeSplitFiles(folder, splitReport, options.devAlias ?? true);
    log(
      `[${folder.language}] ${folder.dataset}: test ${splitReport.splits.test!.dialogues} dialogues (${splitReport.splits.test!.hours.toFixed(2)} h), test_other (dev) ${splitReport.splits.dev!.dialogues} (${splitReport.splits.dev!.hours.toFixed(2)} h), excluded for speaker overlap ${selection.excludedForSpeakerOverlap.length}`,
    );
    for (const item of splitReport.excluded)
      log(`[${folder.language}] ${folder.dataset}: ${item.id} in neither test nor test_other: ${item.reason}`);
    for (const warning of selection.warnings) log(`[${folder.language}] ${folder.dataset}: warning: ${warning}`);
    for (const item of shared)
      log(
        `[${folder.language}] ${folder.dataset}: ${item.ids.length} test dialogue(s) share their source conversation with the ${item.language} test set (${item.dataset})`,
      );
    results.push({ directory: folder.directory, report: splitReport });
  }
  return results;
}

/**
 * Writes the split files of a folder from a report (lines byte for byte from all.jsonl, in its
 * order), `split.json`, and the tables.
 */
async function writeSplitFiles(folder: DatasetFolder, report: SplitReport, devAlias: boolean): Promise<void> {
  const order = new Map(folder.dialogues.map((dialogue, index) => [dialogue.id, index]));
  const lineOf = new Map(folder.dialogues.map((dialogue) => [dialogue.id, dialogue.line]));
  const jsonl = (ids: readonly string[]) =>
    [...ids]
      .filter((id) => lineOf.has(id))
      .sort((a, b) => order.get(a)! - order.get(b)!)
      .map((id) => lineOf.get(id)!)
      .join('');
  await writeAtomic(path.join(folder.directory, 'test.jsonl'), jsonl(report.splits.test?.ids ?? []));
  await writeAtomic(path.join(folder.directory, REST_SPLIT_FILE), jsonl(report.splits.dev?.ids ?? []));
  if (devAlias) await writeAtomic(path.join(folder.directory, DEV_ALIAS_FILE), jsonl(report.splits.dev?.ids ?? []));
  else await rm(path.join(folder.directory, DEV_ALIAS_FILE), { force: true });
  if (report.splits.test_small)
    await writeAtomic(path.join(folder.directory, 'test_small.jsonl'), jsonl(report.splits.test_small.ids));
  else await rm(path.join(folder.directory, 'test_small.jsonl'), { force: true });
  await writeAtomic(
    path.join(folder.directory, SPLIT_FILE_NAME),
    formatRecord(path.join(folder.directory, SPLIT_FILE_NAME), splitReportSchema, report),
  );
  await writeQualityTables(folder.directory);
}

/**
 * Gives a variant dataset (the same dialogues with other timing, e.g. `topiocqa_bargein` of
 * `topiocqa`) the split of the dataset it varies: the same dialogue ids in test, test_small and
 * test_other, so a dialogue is never in test in one and in dev in the other. Ids the variant lacks
 * (a dialogue that failed there) are left out and named in `warnings`.
 * @param baseReport the split report of the base dataset (`splitDatasets`)
 * @returns the variant's split report (also written as its split.json)
 * @throws DatasetReadError for an unreadable variant folder
 */
export async function applySplitToVariant(
  baseReport: SplitReport,
  variantDirectory: string,
  options: { devAlias?: boolean; log?: (line: string) => void } = {},
): Promise<SplitReport> {
  const folder = await readDatasetFolder(variantDirectory);
  const durationOf = new Map(folder.dialogues.map((dialogue) => [dialogue.id, dialogue.metadata.durationSeconds]));
  const describe = (ids: readonly string[]) => {
    const present = ids.filter((id) => durationOf.has(id));
    return {
      ids: present,
      dialogues: present.length,
      hours: round4(present.reduce((sum, id) => sum + durationOf.get(id)!, 0) / 3600),
    };
  };
  const missing = [...(baseReport.splits.test?.ids ?? []), ...(baseReport.splits.dev?.ids ?? [])].filter(
    (id) => !durationOf.has(id),
  );
  const report: SplitReport = {
    ...baseReport,
    dataset: folder.dataset,
    language: folder.language,
    settings: {
      ...baseReport.settings,
      rankedBy: `the split of ${baseReport.dataset} (same dialogue ids; ${baseReport.settings.rankedBy})`,
    },
    splits: {
      test: describe(baseReport.splits.test?.ids ?? []),
      test_small: baseReport.splits.test_small ? describe(baseReport.splits.test_small.ids) : undefined,
      dev: describe(baseReport.splits.dev?.ids ?? []),
    },
    excluded: excludedDialogues(
      folder.dialogues.map((dialogue) => dialogue.id),
      [...(baseReport.splits.test?.ids ?? []), ...(baseReport.splits.dev?.ids ?? [])],
      new Map(baseReport.excluded.map((item) => [item.id, `${item.reason} (in ${baseReport.dataset})`])),
      `not in ${baseReport.dataset} (failed there), so in none of its splits`,
    ),
    sharedTestWithOtherLanguages: [],
    warnings: [
      ...baseReport.warnings,
      ...(missing.length > 0 ? [`not in this variant (failed here): ${missing.join(', ')}`] : []),
    ],
  };
  await writeSplitFiles(folder, report, options.devAlias ?? true);
  for (const item of report.excluded)
    options.log?.(`[${folder.language}] ${folder.dataset}: ${item.id} in neither test nor test_other: ${item.reason}`);
  options.log?.(
    `[${folder.language}] ${folder.dataset}: split of ${baseReport.dataset}: test ${report.splits.test!.dialogues}, test_other (dev) ${report.splits.dev!.dialogues}`,
  );
  return report;
}

/**
 * The dialogues of a dataset in neither test nor test_other (dev), each with its reason, in the
 * dataset's order: nothing leaves the splits silently.
 * @param ids every dialogue id of the dataset (all.jsonl order); `inSplits` the ids of test and dev
 * @param reasons the known reason per excluded id; `otherwise` the reason of any other
 */
export function excludedDialogues(
  ids: readonly string[],
  inSplits: readonly string[],
  reasons: ReadonlyMap<string, string>,
  otherwise = 'in no split (unexpected: please report it)',
): { id: string; reason: string }[] {
  const kept = new Set(inSplits);
  return ids.filter((id) => !kept.has(id)).map((id) => ({ id, reason: reasons.get(id) ?? otherwise }));
}

/**
 * Stage `split-dev-test`: {@link splitDatasets} of every scored base dataset of a build together (so
 * test conversations shared between languages are reported). Not cached: it reads each folder's
 * quality.json and writes the split files.
 * @throws as {@link splitDatasets}
 */
export const splitDevTestStage: Stage<{ directories: readonly string[] }, SplitDatasetsOptions, DatasetSplitResult[]> =
  {
    name: 'split-dev-test',
    inputs: ['directories'],
    parameters: ['testHours', 'testSmall', 'speakerDisjoint', 'unit', 'devAlias', 'log', 'checkAudio'],
    cacheStages: [],
    cacheKeys: async () => [],
    run: (input, parameters) => splitDatasets(input.directories, parameters),
  };
