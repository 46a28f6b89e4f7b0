/**
 * Stage `split-dev-test`: divides each dataset folder into the benchmark's splits (m3-format.md:
 * "Test sets are about one hour each, chosen as the dialogues with the highest dialogue-level DNSMOS;
 * the rest is the dev set, kept speaker-disjoint from test"):
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
 *    Alternative (`unit: 'speaker-group'`): test is filled with whole groups of dialogues connected
 *    by shared speakers (best mean OVRL first), so nothing is excluded; useful when speakers are
 *    assigned in disjoint groups. With a small roster whose identities are paired freely, shared
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
 * timing) takes the split of the dataset it varies (`applySplitToVariant`).
 */
import { readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { readDatasetFolder, type DatasetFolder } from '../pipeline/quality/dataset-files.ts';
import { readQualityReport, type DatasetQualityReport } from '../pipeline/quality/quality-report.ts';
import { SPLIT_FILE_NAME, writeQualityTables } from '../pipeline/quality/tables.ts';
import { bytesHash } from '../pipeline/storage/content-cache.ts';
import { writeAtomic } from '../pipeline/storage/write-atomic.ts';
import { splitReportSchema, type SplitReport } from '../pipeline/model/split-report.ts';
import { formatRecord } from '../pipeline/storage/json-records.ts';

/** One dialogue as the selection sees it. */
export interface SplitCandidate {
  id: string;
  /** Seconds. */
  durationSeconds: number;
  /** Dialogue-level DNSMOS OVRL; null when the dialogue has none (no speech). */
  ovrl: number | null;
  /** Speaker identities of both roles. */
  speakerIds: readonly string[];
}

/** Options of {@link selectSplits}. */
export interface SplitSelectionOptions {
  /** Target test duration, seconds (positive). */
  testSeconds: number;
  /** Size of `test_small` (positive integer), or null/undefined for none. */
  testSmallCount?: number | null;
  /** Keep dev speaker-disjoint from test (default true). */
  speakerDisjoint?: boolean;
  /**
   * What test is filled with: `dialogue` (default, the published rule: the best dialogues one by
   * one) or `speaker-group` (whole groups of dialogues connected by shared speakers, best group
   * first by the mean OVRL of its dialogues), which keeps dev speaker-disjoint without excluding
   * anything when speakers come in groups (see {@link speakerGroups}).
   */
  unit?: 'dialogue' | 'speaker-group';
}

/** Result of {@link selectSplits}; every id list is in ranking order (best first) unless stated. */
export interface SplitSelection {
  /** Every id, best first (DNSMOS OVRL descending, then id ascending; no-DNSMOS dialogues last). */
  ranking: string[];
  test: string[];
  testSmall: string[] | null;
  dev: string[];
  /** Dialogues left out of dev because they share a speaker with test, with the shared speakers. */
  excludedForSpeakerOverlap: { id: string; sharedSpeakers: string[] }[];
  /** Dev dialogues that share a speaker with test (only when speakerDisjoint is false). */
  devSharingSpeakersWithTest: string[];
  /** Speaker identities of the test dialogues, sorted. */
  testSpeakers: string[];
  /** Dialogues without a DNSMOS value (kept out of test). */
  withoutDnsmos: string[];
  testSeconds: number;
  devSeconds: number;
  /** Whether test reached the target duration. */
  targetReached: boolean;
  /** True when dev is empty and at least one dialogue was excluded for speaker overlap. */
  devEmptyBecauseOfSpeakerOverlap: boolean;
  /** Number of groups of dialogues connected by shared speakers, and the size of the largest. */
  speakerGroups: { count: number; largest: number };
  /** Human-readable warnings (target not reached, dev emptied by speaker overlap, test_small too big). */
  warnings: string[];
}

/**
 * Groups of dialogues connected by shared speakers (connected components of the graph whose edges
 * join two dialogues with a speaker in common), each group's ids in the order of `candidates`,
 * groups in the order of their first dialogue. Dialogues of different groups never share a speaker,
 * so any union of groups is speaker-disjoint from the rest. When every dialogue draws its two
 * speakers freely from one small roster, nearly all dialogues form a single group.
 */
export function speakerGroups(candidates: readonly Pick<SplitCandidate, 'id' | 'speakerIds'>[]): string[][] {
  const parent = candidates.map((_, index) => index);
  const find = (index: number): number => {
    while (parent[index] !== index) {
      parent[index] = parent[parent[index]!]!;
      index = parent[index]!;
    }
    return index;
  };
  const firstWithSpeaker = new Map<string, number>();
  candidates.forEach((candidate, index) => {
    for (const speaker of candidate.speakerIds) {
      const other = firstWithSpeaker.get(speaker);
      if (other === undefined) firstWithSpeaker.set(speaker, index);
      else {
        const [a, b] = [find(index), find(other)];
        if (a !== b) parent[Math.max(a, b)] = Math.min(a, b);
      }
    }
  });
  const groups = new Map<number, string[]>();
  candidates.forEach((candidate, index) => {
    const root = find(index);
    const group = groups.get(root) ?? [];
    group.push(candidate.id);
    groups.set(root, group);
  });
  return [...groups.values()];
}

/** Code-unit string order (not locale-dependent). */
function compareIds(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Ranks dialogues: DNSMOS OVRL descending; equal OVRL by id ascending; null OVRL last (by id).
 * @returns the candidates in ranking order (a new array).
 */
export function rankByDnsmos<T extends Pick<SplitCandidate, 'id' | 'ovrl'>>(candidates: readonly T[]): T[] {
  return [...candidates].sort((a, b) => {
    if (a.ovrl === null || b.ovrl === null) {
      if (a.ovrl !== b.ovrl) return a.ovrl === null ? 1 : -1;
      return compareIds(a.id, b.id);
    }
    return b.ovrl - a.ovrl || compareIds(a.id, b.id);
  });
}

/**
 * The test / test_small / dev selection of one language's dataset (algorithm in the module comment).
 * Pure and deterministic.
 * @throws RangeError when `testSeconds` is not positive, `testSmallCount` is not a positive integer,
 *   or ids repeat.
 */
export function selectSplits(candidates: readonly SplitCandidate[], options: SplitSelectionOptions): SplitSelection {
  if (!(options.testSeconds > 0) || !Number.isFinite(options.testSeconds)) throw new RangeError(`test duration must be a positive number of seconds, got ${options.testSeconds}`);
  const testSmallCount = options.testSmallCount ?? null;
  if (testSmallCount !== null && (!Number.isInteger(testSmallCount) || testSmallCount < 1)) throw new RangeError(`test_small size must be a positive integer, got ${testSmallCount}`);
  if (new Set(candidates.map((candidate) => candidate.id)).size !== candidates.length) throw new RangeError('dialogue ids repeat');
  const speakerDisjoint = options.speakerDisjoint ?? true;
  const warnings: string[] = [];
  const ranked = rankByDnsmos(candidates);

  const groups = speakerGroups(ranked);
  const test: SplitCandidate[] = [];
  let testSeconds = 0;
  if ((options.unit ?? 'dialogue') === 'dialogue') {
    for (const candidate of ranked) {
      if (testSeconds >= options.testSeconds) break;
      if (candidate.ovrl === null) continue;
      test.push(candidate);
      testSeconds += candidate.durationSeconds;
    }
  } else {
    // Whole speaker groups, best mean OVRL first (ties: the group whose best dialogue ranks first);
    // a group holding a dialogue without DNSMOS never goes to test.
    const byId = new Map(ranked.map((candidate) => [candidate.id, candidate]));
    const rankOf = new Map(ranked.map((candidate, index) => [candidate.id, index]));
    const scored = groups
      .map((ids) => ids.map((id) => byId.get(id)!))
      .filter((members) => members.every((member) => member.ovrl !== null))
      .map((members) => ({ members, mean: members.reduce((sum, member) => sum + member.ovrl!, 0) / members.length, first: Math.min(...members.map((member) => rankOf.get(member.id)!)) }))
      .sort((a, b) => b.mean - a.mean || a.first - b.first);
    const chosen = new Set<string>();
    for (const group of scored) {
      if (testSeconds >= options.testSeconds) break;
      for (const member of group.members) chosen.add(member.id);
      testSeconds += group.members.reduce((sum, member) => sum + member.durationSeconds, 0);
    }
    test.push(...ranked.filter((candidate) => chosen.has(candidate.id)));
  }
  const largestGroup = Math.max(0, ...groups.map((group) => group.length));
  if (candidates.length > 1 && largestGroup > candidates.length / 2) {
    warnings.push(
      `shared speakers connect ${largestGroup} of ${candidates.length} dialogues into one group: a speaker-disjoint dev can only come from outside it (assign each dialogue's speakers from one of several disjoint speaker groups)`,
    );
  }
  const targetReached = testSeconds >= options.testSeconds;
  const withoutDnsmos = ranked.filter((candidate) => candidate.ovrl === null).map((candidate) => candidate.id);
  if (!targetReached) {
    warnings.push(
      `the dialogues with a DNSMOS value last ${(testSeconds / 3600).toFixed(4)} h, less than the test target of ${(options.testSeconds / 3600).toFixed(4)} h: all of them went to test`,
    );
  }
  if (withoutDnsmos.length > 0) warnings.push(`${withoutDnsmos.length} dialogue(s) without a DNSMOS value (no speech) were kept out of test: ${withoutDnsmos.join(', ')}`);

  const testIds = new Set(test.map((candidate) => candidate.id));
  const testSpeakers = new Set(test.flatMap((candidate) => candidate.speakerIds));
  const rest = ranked.filter((candidate) => !testIds.has(candidate.id));
  const dev: SplitCandidate[] = [];
  const excludedForSpeakerOverlap: SplitSelection['excludedForSpeakerOverlap'] = [];
  const devSharingSpeakersWithTest: string[] = [];
  for (const candidate of rest) {
    const shared = [...new Set(candidate.speakerIds.filter((speaker) => testSpeakers.has(speaker)))].sort(compareIds);
    if (shared.length === 0) dev.push(candidate);
    else if (speakerDisjoint) excludedForSpeakerOverlap.push({ id: candidate.id, sharedSpeakers: shared });
    else {
      dev.push(candidate);
      devSharingSpeakersWithTest.push(candidate.id);
    }
  }
  const devEmptyBecauseOfSpeakerOverlap = dev.length === 0 && excludedForSpeakerOverlap.length > 0;
  if (devEmptyBecauseOfSpeakerOverlap) {
    warnings.push(
      `dev is empty: all ${excludedForSpeakerOverlap.length} dialogue(s) outside test share a speaker with test (${[...new Set(excludedForSpeakerOverlap.flatMap((item) => item.sharedSpeakers))].sort(compareIds).join(', ')}); ` +
        'give dialogues different speaker identities (a speaker roster), or split with speaker-disjointness off',
    );
  } else if (excludedForSpeakerOverlap.length > 0) {
    warnings.push(`${excludedForSpeakerOverlap.length} dialogue(s) left out of dev because they share a speaker with test`);
  }
  if (devSharingSpeakersWithTest.length > 0) {
    warnings.push(`speaker-disjointness is off: ${devSharingSpeakersWithTest.length} dev dialogue(s) share a speaker with test`);
  }

  let testSmall: string[] | null = null;
  if (testSmallCount !== null) {
    if (testSmallCount > test.length) warnings.push(`test_small asks for ${testSmallCount} dialogues but test has ${test.length}: test_small = test`);
    testSmall = test.slice(0, testSmallCount).map((candidate) => candidate.id);
  }
  return {
    ranking: ranked.map((candidate) => candidate.id),
    test: test.map((candidate) => candidate.id),
    testSmall,
    dev: dev.map((candidate) => candidate.id),
    excludedForSpeakerOverlap,
    devSharingSpeakersWithTest,
    testSpeakers: [...testSpeakers].sort(compareIds),
    withoutDnsmos,
    testSeconds,
    devSeconds: dev.reduce((sum, candidate) => sum + candidate.durationSeconds, 0),
    targetReached,
    devEmptyBecauseOfSpeakerOverlap,
    speakerGroups: { count: groups.length, largest: largestGroup },
    warnings,
  };
}

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
  /** Fill test dialogue by dialogue (default) or by whole speaker groups ({@link SplitSelectionOptions.unit}). */
  unit?: 'dialogue' | 'speaker-group';
  /** Also write the rest (`test_other.jsonl`) as `dev.jsonl`. Default true. */
  devAlias?: boolean;
  /** Progress and warning lines. */
  log?: (line: string) => void;
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
function checkQualityIsCurrent(folder: DatasetFolder, report: DatasetQualityReport | null): asserts report is DatasetQualityReport {
  if (report === null) throw new SplitError(`${folder.directory}: no quality.json; run "duplexsynth score ${folder.directory}" first`);
  const scored = new Map(report.dialogues.map((dialogue) => [dialogue.id, dialogue]));
  for (const dialogue of folder.dialogues) {
    const quality = scored.get(dialogue.id);
    if (!quality) throw new SplitError(`${folder.directory}: quality.json has no entry for ${dialogue.id}; re-run "duplexsynth score"`);
    if (quality.audioSha256 !== dialogue.audioSha256) throw new SplitError(`${folder.directory}: the audio of ${dialogue.id} changed since quality.json was written; re-run "duplexsynth score"`);
  }
  if (scored.size !== folder.dialogues.length) {
    const current = new Set(folder.dialogues.map((dialogue) => dialogue.id));
    const extra = report.dialogues.find((dialogue) => !current.has(dialogue.id));
    throw new SplitError(`${folder.directory}: quality.json scores ${extra?.id ?? 'a dialogue'}, which all.jsonl does not have; re-run "duplexsynth score"`);
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
export async function splitDatasets(directories: readonly string[], options: SplitDatasetsOptions = {}): Promise<DatasetSplitResult[]> {
  const testHours = options.testHours ?? 1;
  const speakerDisjoint = options.speakerDisjoint ?? true;
  const log = options.log ?? (() => {});
  const prepared: { folder: DatasetFolder; selection: SplitSelection; report: DatasetQualityReport; sourceOf: Map<string, string> }[] = [];
  for (const directory of directories) {
    const folder = await readDatasetFolder(directory);
    const report = await readQualityReport(folder.directory);
    checkQualityIsCurrent(folder, report);
    await checkAudioIsUnchanged(folder);
    const qualityById = new Map(report.dialogues.map((dialogue) => [dialogue.id, dialogue]));
    const candidates: SplitCandidate[] = folder.dialogues.map((dialogue) => {
      const quality = qualityById.get(dialogue.id)!;
      return { id: dialogue.id, durationSeconds: dialogue.metadata.durationSeconds, ovrl: quality.dnsmos.dialogue?.ovrl ?? null, speakerIds: quality.speakerIds };
    });
    const selection = selectSplits(candidates, { testSeconds: testHours * 3600, testSmallCount: options.testSmall ?? null, speakerDisjoint, unit: options.unit ?? 'dialogue' });
    prepared.push({ folder, selection, report, sourceOf: new Map(report.dialogues.map((dialogue) => [dialogue.id, dialogue.sourceConversation])) });
  }

  const results: DatasetSplitResult[] = [];
  for (const entry of prepared) {
    const { folder, selection, report } = entry;
    const order = new Map(folder.dialogues.map((dialogue, index) => [dialogue.id, index]));
    const inFileOrder = (ids: readonly string[]) => [...ids].sort((a, b) => order.get(a)! - order.get(b)!);
    const lineOf = new Map(folder.dialogues.map((dialogue) => [dialogue.id, dialogue.line]));
    const durationOf = new Map(folder.dialogues.map((dialogue) => [dialogue.id, dialogue.metadata.durationSeconds]));
    const describe = (ids: readonly string[]) => {
      const sorted = inFileOrder(ids);
      return { ids: sorted, dialogues: sorted.length, hours: round4(sorted.reduce((sum, id) => sum + durationOf.get(id)!, 0) / 3600) };
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
        unit: options.unit ?? 'dialogue',
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
      devEmptyBecauseOfSpeakerOverlap: selection.devEmptyBecauseOfSpeakerOverlap,
      devSharingSpeakersWithTest: inFileOrder(selection.devSharingSpeakersWithTest),
      testSpeakers: selection.testSpeakers,
      speakerGroups: selection.speakerGroups,
      targetReached: selection.targetReached,
      withoutDnsmos: selection.withoutDnsmos,
      ranking: selection.ranking.map((id) => ({ id, ovrl: report.dialogues.find((dialogue) => dialogue.id === id)!.dnsmos.dialogue?.ovrl ?? null })),
      sharedTestWithOtherLanguages: shared,
      warnings: selection.warnings,
    };
    await writeSplitFiles(folder, splitReport, options.devAlias ?? true);
    log(
      `[${folder.language}] ${folder.dataset}: test ${splitReport.splits.test!.dialogues} dialogues (${splitReport.splits.test!.hours.toFixed(2)} h), test_other (dev) ${splitReport.splits.dev!.dialogues} (${splitReport.splits.dev!.hours.toFixed(2)} h), excluded for speaker overlap ${selection.excludedForSpeakerOverlap.length}`,
    );
    for (const warning of selection.warnings) log(`[${folder.language}] ${folder.dataset}: warning: ${warning}`);
    for (const item of shared) log(`[${folder.language}] ${folder.dataset}: ${item.ids.length} test dialogue(s) share their source conversation with the ${item.language} test set (${item.dataset})`);
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
  if (report.splits.test_small) await writeAtomic(path.join(folder.directory, 'test_small.jsonl'), jsonl(report.splits.test_small.ids));
  else await rm(path.join(folder.directory, 'test_small.jsonl'), { force: true });
  await writeAtomic(path.join(folder.directory, SPLIT_FILE_NAME), formatRecord(path.join(folder.directory, SPLIT_FILE_NAME), splitReportSchema, report));
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
export async function applySplitToVariant(baseReport: SplitReport, variantDirectory: string, options: { devAlias?: boolean; log?: (line: string) => void } = {}): Promise<SplitReport> {
  const folder = await readDatasetFolder(variantDirectory);
  const durationOf = new Map(folder.dialogues.map((dialogue) => [dialogue.id, dialogue.metadata.durationSeconds]));
  const describe = (ids: readonly string[]) => {
    const present = ids.filter((id) => durationOf.has(id));
    return { ids: present, dialogues: present.length, hours: round4(present.reduce((sum, id) => sum + durationOf.get(id)!, 0) / 3600) };
  };
  const missing = [...(baseReport.splits.test?.ids ?? []), ...(baseReport.splits.dev?.ids ?? [])].filter((id) => !durationOf.has(id));
  const report: SplitReport = {
    ...baseReport,
    dataset: folder.dataset,
    language: folder.language,
    settings: { ...baseReport.settings, rankedBy: `the split of ${baseReport.dataset} (same dialogue ids; ${baseReport.settings.rankedBy})` },
    splits: {
      test: describe(baseReport.splits.test?.ids ?? []),
      test_small: baseReport.splits.test_small ? describe(baseReport.splits.test_small.ids) : undefined,
      dev: describe(baseReport.splits.dev?.ids ?? []),
    },
    sharedTestWithOtherLanguages: [],
    warnings: [...baseReport.warnings, ...(missing.length > 0 ? [`not in this variant (failed here): ${missing.join(', ')}`] : [])],
  };
  await writeSplitFiles(folder, report, options.devAlias ?? true);
  options.log?.(`[${folder.language}] ${folder.dataset}: split of ${baseReport.dataset}: test ${report.splits.test!.dialogues}, test_other (dev) ${report.splits.dev!.dialogues}`);
  return report;
}
