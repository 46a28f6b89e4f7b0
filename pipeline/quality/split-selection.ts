/**
 * The dev/test selection of one dataset (stages/split-dev-test.ts, steps 1–4 of its module comment):
 * rank by dialogue-level DNSMOS OVRL, fill `test` to the target duration (dialogue by dialogue or by
 * whole speaker groups), take `test_small` from the best of test, and keep the rest speaker-disjoint
 * from test. Pure: no files are read or written here.
 */

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
  if (!(options.testSeconds > 0) || !Number.isFinite(options.testSeconds))
    throw new RangeError(`test duration must be a positive number of seconds, got ${options.testSeconds}`);
  const testSmallCount = options.testSmallCount ?? null;
  if (testSmallCount !== null && (!Number.isInteger(testSmallCount) || testSmallCount < 1))
    throw new RangeError(`test_small size must be a positive integer, got ${testSmallCount}`);
  if (new Set(candidates.map((candidate) => candidate.id)).size !== candidates.length)
    throw new RangeError('dialogue ids repeat');
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
      .map((members) => ({
        members,
        mean: members.reduce((sum, member) => sum + member.ovrl!, 0) / members.length,
        first: Math.min(...members.map((member) => rankOf.get(member.id)!)),
      }))
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
  if (withoutDnsmos.length > 0)
    warnings.push(
      `${withoutDnsmos.length} dialogue(s) without a DNSMOS value (no speech) were kept out of test: ${withoutDnsmos.join(', ')}`,
    );

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
    warnings.push(
      `${excludedForSpeakerOverlap.length} dialogue(s) left out of dev because they share a speaker with test`,
    );
  }
  if (devSharingSpeakersWithTest.length > 0) {
    warnings.push(
      `speaker-disjointness is off: ${devSharingSpeakersWithTest.length} dev dialogue(s) share a speaker with test`,
    );
  }

  let testSmall: string[] | null = null;
  if (testSmallCount !== null) {
    if (testSmallCount > test.length)
      warnings.push(`test_small asks for ${testSmallCount} dialogues but test has ${test.length}: test_small = test`);
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
