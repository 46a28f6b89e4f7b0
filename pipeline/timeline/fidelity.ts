/**
 * Fidelity report: the turn-taking timing of generated dialogues side by side with the measured
 * statistics they were sampled from (timing-statistics.ts), as JSON and Markdown.
 *
 * Compared, per direction of speaker change:
 * - floor-transfer offsets: two-sample Kolmogorov–Smirnov distance (empirical-distribution.ts
 *   `kolmogorovSmirnovDistance`) between the generated offsets and the sampler's target (the pooled
 *   measured offsets when the statistics say `pooled`, else the direction's own), with the 5 %
 *   critical distance for the two sample sizes; also the distance to the direction's own measured
 *   offsets; quantiles (5, 25, 50, 75, 95 %, simple-statistics `quantileSorted`, type 7);
 * - overlap fraction (offset < 0) and barge-in fraction (overlap > 0.40 s, docs/events.md step 3);
 * - backchannel rate per minute of the other speaker's TURN speech (generated: total backchannels /
 *   total host speech; measured: the listener's rate, or the pooled rate when pooled);
 * - repeated offset sequences: the number of dialogue pairs sharing a run of ≥ 5 consecutive
 *   identical offsets in one direction (the toy data's reused-seed defect, docs/dataset-format.md
 *   "Known defects of the synthetic reference"), next to the number of identical 5-runs expected by
 *   chance under the fitted distribution (`Σ_v p(v)²` to the 5th power per pair of runs, p from
 *   `probabilityMassFunction`), since a distribution with a large atom (CallFriend English: 18 % of offsets exactly 0.00 s) repeats
 *   short runs by chance alone. (The count assumes independent draws; the sampler's stratified draws
 *   spread a dialogue's values over the quantiles, so they repeat runs less often than that.)
 *
 * Checks (thresholds in `FIDELITY_THRESHOLDS`): KS distance ≤ 0.05 per direction; barge-in fraction
 * and backchannel rate within 10 % (relative) of the measured ones; no value atom (no single offset
 * value holding more than 2 % of all generated offsets); no dialogue pair sharing a 5-run.
 *
 * With a gap-only channel (the benchmark profile's system) the speaker changes into it are compared
 * with the positive part of the measured offsets (its gaps), the others with the whole distribution.
 *
 * The report's shape, thresholds and its JSON and Markdown text: fidelity-report.ts (re-exported).
 */
import { quantileSorted } from 'simple-statistics';
import { DEFAULT_EVENT_THRESHOLDS } from '../events/index.ts';
import type { Centiseconds, Channel } from '../model/types.ts';
import {
  kolmogorovSmirnovCriticalDistance,
  kolmogorovSmirnovDistance,
  probabilityMassFunction,
} from './empirical-distribution.ts';
import {
  FIDELITY_THRESHOLDS,
  relativeDifference,
  round,
  type DirectionFidelity,
  type FidelityOptions,
  type FidelityReport,
  type GeneratedDialogueTiming,
  type Quantiles,
  type SharedRun,
} from './fidelity-report.ts';
import { hostSpeechCs } from './place-backchannels.ts';
import type { PlacedDialogue, UtteranceToPlace } from './place-dialogue.ts';
import {
  CHANNEL_DIRECTIONS,
  channelDirection,
  fitTimingModel,
  samplingDistributions,
  atomGuardOf,
  findAtoms,
  type ChannelDirection,
  type TimingStatistics,
} from './timing-statistics.ts';

export {
  FIDELITY_THRESHOLDS,
  formatFidelityJson,
  formatFidelityMarkdown,
  type DirectionFidelity,
  type FidelityOptions,
  type FidelityReport,
  type GeneratedDialogueTiming,
  type Quantiles,
  type SharedRun,
} from './fidelity-report.ts';

function quantilesOf(valuesCs: readonly number[]): Quantiles {
  if (valuesCs.length === 0) return { p05: null, p25: null, p50: null, p75: null, p95: null };
  const sorted = [...valuesCs].sort((a, b) => a - b);
  const at = (probability: number) => round(quantileSorted(sorted, probability) / 100, 3);
  return { p05: at(0.05), p25: at(0.25), p50: at(0.5), p75: at(0.75), p95: at(0.95) };
}

const fractionOf = (values: readonly number[], predicate: (value: number) => boolean) =>
  values.length === 0 ? 0 : round(values.filter(predicate).length / values.length, 4);

/**
 * Builds the timing of one generated dialogue from its placement (what the build passes to
 * `buildFidelityReport`): speaker-change offsets by direction in placement order, the listener's
 * backchannel count, and the host channel's TURN speech in seconds (`hostSpeechCs` of each
 * utterance on the other channel).
 * @param listenerChannel channel of the backchannels (default 1, the user)
 */
export function generatedDialogueTiming(
  id: string,
  utterances: readonly UtteranceToPlace[],
  placed: Pick<PlacedDialogue, 'transitions' | 'backchannels'>,
  listenerChannel: Channel = 1,
): GeneratedDialogueTiming {
  const offsetsCs: Record<ChannelDirection, Centiseconds[]> = { 'channel0->channel1': [], 'channel1->channel0': [] };
  for (const transition of placed.transitions) {
    if (transition.kind !== 'speaker-change') continue;
    const from = (utterances[transition.index - 1] as UtteranceToPlace).channel;
    const to = (utterances[transition.index] as UtteranceToPlace).channel;
    offsetsCs[channelDirection(from, to)].push(transition.offset);
  }
  const hostCs = utterances.reduce(
    (sum, utterance) => sum + (utterance.channel === listenerChannel ? 0 : hostSpeechCs(utterance)),
    0,
  );
  return {
    id,
    offsetsCs,
    backchannels: placed.backchannels.filter((backchannel) => backchannel.channel === listenerChannel).length,
    otherSpeakerSpeechSeconds: hostCs / 100,
  };
}

/** Windows of `length` consecutive values, as text keys. */
function runKeys(values: readonly number[], length: number): Set<string> {
  const keys = new Set<string>();
  for (let index = 0; index + length <= values.length; index += 1)
    keys.add(values.slice(index, index + length).join(','));
  return keys;
}

/**
 * Compares generated dialogues with the statistics they were sampled from (module comment).
 * @param statistics the timing statistics used by the sampler
 * @param dialogues per generated dialogue: offsets by direction (integer centiseconds, placement
 *   order), backchannel count, other-speaker speech seconds
 * @param options listener channel (default 1), run length (default 5), whether backchannels were
 *   generated (default true)
 * @returns the report (JSON-ready; times in seconds)
 * @throws RangeError when a dialogue id repeats or an offset is not an integer
 */
export function buildFidelityReport(
  statistics: TimingStatistics,
  dialogues: readonly GeneratedDialogueTiming[],
  options: Partial<FidelityOptions> = {},
): FidelityReport {
  const listener = options.backchannelListener ?? 1;
  const runLength = options.sharedRunLength ?? FIDELITY_THRESHOLDS.sharedRunLength;
  const ids = new Set<string>();
  for (const dialogue of dialogues) {
    if (ids.has(dialogue.id)) throw new RangeError(`dialogue id ${dialogue.id} appears twice`);
    ids.add(dialogue.id);
    for (const direction of CHANNEL_DIRECTIONS) {
      if (!dialogue.offsetsCs[direction].every(Number.isSafeInteger)) {
        throw new RangeError(`dialogue ${dialogue.id}: offsets must be integer centiseconds`);
      }
    }
  }
  const samplerUse = statistics.speakerChange.samplerUse;
  const targets = samplingDistributions(statistics);
  const model = fitTimingModel(statistics);
  const bargeInLimit = DEFAULT_EVENT_THRESHOLDS.bargeInOverlap;

  const gapOnly = options.gapOnlyChannel ?? null;
  const directions = CHANNEL_DIRECTIONS.map((direction): DirectionFidelity => {
    const generated = dialogues.flatMap((dialogue) => [...dialogue.offsetsCs[direction]]);
    const intoGapOnly = gapOnly !== null && direction === (gapOnly === 0 ? 'channel1->channel0' : 'channel0->channel1');
    const target = intoGapOnly ? (model.speakerChangeGaps[direction]?.values ?? []) : targets.speakerChange[direction];
    const own = statistics.speakerChange.byDirection[direction].offsets.map((seconds) => Math.round(seconds * 100));
    const both = generated.length > 0 && target.length > 0;
    const measuredBargeIn = fractionOf(target, (offset) => -offset > bargeInLimit);
    const generatedBargeIn = fractionOf(generated, (offset) => -offset > bargeInLimit);
    return {
      direction,
      target: samplerUse,
      part: intoGapOnly ? 'gaps' : 'whole',
      measuredCount: target.length,
      generatedCount: generated.length,
      kolmogorovSmirnovDistance: both ? round(kolmogorovSmirnovDistance(generated, target), 4) : null,
      criticalDistance05: both ? round(kolmogorovSmirnovCriticalDistance(generated.length, target.length), 4) : null,
      distanceToOwnDirection:
        generated.length > 0 && own.length > 0 ? round(kolmogorovSmirnovDistance(generated, own), 4) : null,
      measuredQuantiles: quantilesOf(target),
      generatedQuantiles: quantilesOf(generated),
      measuredOverlapFraction: fractionOf(target, (offset) => offset < 0),
      generatedOverlapFraction: fractionOf(generated, (offset) => offset < 0),
      measuredBargeInFraction: measuredBargeIn,
      generatedBargeInFraction: generatedBargeIn,
      bargeInRelativeDifference: relativeDifference(generatedBargeIn, measuredBargeIn),
    };
  });

  // Overall barge-in fraction: generated over all speaker changes; measured weighted the same way
  // (each direction's measured fraction weighted by its generated count), so a layout with more
  // user->system than system->user changes is compared with the matching mixture.
  const generatedTotal = directions.reduce((sum, entry) => sum + entry.generatedCount, 0);
  const generatedBargeIns = dialogues.reduce(
    (sum, dialogue) =>
      sum +
      CHANNEL_DIRECTIONS.reduce(
        (inner, direction) => inner + dialogue.offsetsCs[direction].filter((offset) => -offset > bargeInLimit).length,
        0,
      ),
    0,
  );
  const measuredMixture =
    generatedTotal === 0
      ? statistics.speakerChange.pooledSummary.bargeInFraction
      : round(
          directions.reduce((sum, entry) => sum + entry.measuredBargeInFraction * entry.generatedCount, 0) /
            generatedTotal,
          4,
        );
  const generatedFraction = generatedTotal === 0 ? 0 : round(generatedBargeIns / generatedTotal, 4);

  const backchannelCount = dialogues.reduce((sum, dialogue) => sum + dialogue.backchannels, 0);
  const hostSeconds = round(
    dialogues.reduce((sum, dialogue) => sum + dialogue.otherSpeakerSpeechSeconds, 0),
    2,
  );
  const measuredRate = targets.backchannelRatePerMinute[listener];
  const generatedRate = hostSeconds === 0 ? null : round((backchannelCount * 60) / hostSeconds, 4);

  // Repeated runs: dialogue pairs sharing a run, and the number expected by chance.
  const pairs = new Set<string>();
  const examples: SharedRun[] = [];
  let expectedByChance = 0;
  for (const direction of CHANNEL_DIRECTIONS) {
    const owners = new Map<string, string[]>();
    const runsPerDialogue: number[] = [];
    for (const dialogue of dialogues) {
      const keys = runKeys(dialogue.offsetsCs[direction], runLength);
      runsPerDialogue.push(Math.max(0, dialogue.offsetsCs[direction].length - runLength + 1));
      for (const key of keys) {
        const list = owners.get(key) ?? [];
        for (const other of list) {
          const pair = [other, dialogue.id].sort().join('\u0000');
          if (!pairs.has(pair)) {
            pairs.add(pair);
            if (examples.length < 10) {
              examples.push({
                first: other,
                second: dialogue.id,
                direction,
                offsetsSeconds: key.split(',').map((value) => Number(value) / 100),
              });
            }
          }
        }
        list.push(dialogue.id);
        owners.set(key, list);
      }
    }
    const mass = probabilityMassFunction(model.speakerChange[direction]);
    let collision = 0;
    for (const probability of mass.values()) collision += probability * probability;
    const totalRuns = runsPerDialogue.reduce((sum, count) => sum + count, 0);
    const sameDialoguePairs = runsPerDialogue.reduce((sum, count) => sum + count * count, 0);
    expectedByChance += ((totalRuns * totalRuns - sameDialoguePairs) / 2) * collision ** runLength;
  }

  const thresholds = FIDELITY_THRESHOLDS;
  const checks: FidelityReport['checks'] = [];
  for (const entry of directions) {
    checks.push({
      name: `ks-${entry.direction}`,
      passed:
        entry.kolmogorovSmirnovDistance !== null &&
        entry.kolmogorovSmirnovDistance <= thresholds.maximumKolmogorovSmirnovDistance,
      detail: `KS distance ${entry.kolmogorovSmirnovDistance ?? 'n/a'} (limit ${thresholds.maximumKolmogorovSmirnovDistance}; 5 % critical ${entry.criticalDistance05 ?? 'n/a'})`,
    });
  }
  const bargeInDifference = relativeDifference(generatedFraction, measuredMixture);
  checks.push({
    name: 'barge-in-rate',
    passed: bargeInDifference !== null && bargeInDifference <= thresholds.maximumRelativeRateDifference,
    detail: `generated ${generatedFraction} vs measured ${measuredMixture} (relative difference ${bargeInDifference ?? 'n/a'}, limit ${thresholds.maximumRelativeRateDifference})`,
  });
  const backchannelDifference = generatedRate === null ? null : relativeDifference(generatedRate, measuredRate);
  const backchannelDetail = `generated ${generatedRate ?? 'n/a'} vs measured ${measuredRate} per minute (relative difference ${backchannelDifference ?? 'n/a'}, limit ${thresholds.maximumRelativeRateDifference})`;
  checks.push(
    options.backchannelsGenerated === false
      ? { name: 'backchannel-rate', passed: true, detail: `backchannels not generated; ${backchannelDetail}` }
      : {
          name: 'backchannel-rate',
          passed: backchannelDifference !== null && backchannelDifference <= thresholds.maximumRelativeRateDifference,
          detail: backchannelDetail,
        },
  );
  const guard = atomGuardOf(statistics);
  const generatedAtoms = findAtoms(
    [
      ...CHANNEL_DIRECTIONS.map((direction) => ({
        list: `generated.${direction}`,
        valuesCs: dialogues.flatMap((dialogue) => [...dialogue.offsetsCs[direction]]),
      })),
      {
        list: 'generated.both',
        valuesCs: dialogues.flatMap((dialogue) =>
          CHANNEL_DIRECTIONS.flatMap((direction) => [...dialogue.offsetsCs[direction]]),
        ),
      },
    ],
    guard.limitFraction,
  );
  // The check is on all of the build's speaker-change offsets together (the issue's "a build's
  // generated offsets"); a direction's list is smaller, so chance alone pushes a value past 2 % there
  // more often; per-direction atoms are reported, not checked.
  const buildAtoms = generatedAtoms.filter((atom) => atom.list === 'generated.both');
  checks.push({
    name: 'no-offset-atoms',
    passed: buildAtoms.length === 0,
    detail:
      buildAtoms.length === 0
        ? `no value holds more than ${guard.limitFraction * 100} % of the ${dialogues.reduce((sum, dialogue) => sum + CHANNEL_DIRECTIONS.reduce((inner, direction) => inner + dialogue.offsetsCs[direction].length, 0), 0)} generated offsets`
        : buildAtoms
            .map(
              (atom) => `${atom.valueSeconds} s holds ${(atom.fraction * 100).toFixed(1)} % of the generated offsets`,
            )
            .join('; '),
  });
  checks.push({
    name: 'no-shared-runs',
    passed: pairs.size === 0,
    detail: `${pairs.size} dialogue pairs share ${runLength} consecutive offsets (expected by chance: ${round(expectedByChance, 4)})`,
  });

  return {
    statistics: {
      language: statistics.language,
      corpus: statistics.provenance.corpus,
      command: statistics.provenance.command,
      samplerUse,
    },
    dialogues: dialogues.length,
    directions,
    bargeIn: { measuredFraction: measuredMixture, generatedFraction, relativeDifference: bargeInDifference },
    backchannels: {
      listenerChannel: listener,
      measuredPerMinute: measuredRate,
      generatedPerMinute: generatedRate,
      generatedCount: backchannelCount,
      otherSpeakerSpeechSeconds: hostSeconds,
      relativeDifference: backchannelDifference,
    },
    atoms: { limitFraction: guard.limitFraction, measured: guard.atoms, generated: generatedAtoms },
    sharedRuns: { runLength, dialoguePairs: pairs.size, expectedByChance: round(expectedByChance, 4), examples },
    checks,
  };
}
