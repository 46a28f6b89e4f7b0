/**
 * What one stage of one language has done so far, counted from its progress events: items done,
 * cached and failed, and the units of work (utterances, channel-seconds) done and planned.
 */
import type { ProgressEvent, ProgressUnit } from './progress-events.ts';

/** What one stage of one language has done so far. */
export interface StageProgress {
  unit: ProgressUnit;
  /** Items (dialogues). */
  total: number;
  done: number;
  cached: number;
  failed: number;
  /** Units done: each finished item counts its planned amount whole; unfinished ones what they advanced (at most their plan). */
  unitsDone: number;
  /**
   * Units of the whole stage: the planned amounts, plus for items not planned yet the mean planned
   * amount (then `unitsEstimated`); null while no item is planned.
   */
  unitsTotal: number | null;
  unitsEstimated: boolean;
}

/** Counts per stage, fed with events (what every display keeps). */
export class StageTally {
  private readonly items = new Set<string>();
  private readonly finished = new Set<string>();
  private readonly planned = new Map<string, number>();
  private readonly advanced = new Map<string, number>();
  counts = { total: 0, done: 0, cached: 0, failed: 0 };

  constructor(readonly unit: ProgressUnit) {}

  add(event: ProgressEvent): void {
    if (event.type === 'stage-start') this.counts.total = event.total;
    if (event.type === 'item-planned') this.planned.set(event.id, Math.max(0, event.amount));
    if (event.type === 'item-advanced')
      this.advanced.set(event.id, (this.advanced.get(event.id) ?? 0) + Math.max(0, event.amount));
    if (event.type === 'item') {
      this.counts[event.status] += 1;
      this.items.add(event.id);
      this.finished.add(event.id);
    }
  }

  get itemsCounted(): number {
    return this.counts.done + this.counts.cached + this.counts.failed;
  }

  snapshot(): StageProgress {
    const base = { unit: this.unit, ...this.counts };
    if (this.unit === 'dialogues')
      return { ...base, unitsDone: this.itemsCounted, unitsTotal: this.counts.total, unitsEstimated: false };
    let unitsDone = 0;
    let plannedSum = 0;
    for (const [id, amount] of this.planned) {
      plannedSum += amount;
      unitsDone += this.finished.has(id) ? amount : Math.min(amount, this.advanced.get(id) ?? 0);
    }
    if (this.planned.size === 0) return { ...base, unitsDone: 0, unitsTotal: null, unitsEstimated: false };
    const unplanned = Math.max(0, this.counts.total - this.planned.size);
    const unitsTotal = plannedSum + (unplanned * plannedSum) / this.planned.size;
    return { ...base, unitsDone, unitsTotal, unitsEstimated: unplanned > 0 };
  }
}

/** A unit amount as shown: whole utterances and dialogues, channel-seconds to the second. */
export function amount(value: number, unit: ProgressUnit): string {
  return unit === 'channel-seconds' ? value.toFixed(0) : String(Math.round(value));
}

/** `12/57 utterances` (`~57` while the total is estimated), `3/10 dialogues`. */
export function formatStageUnits(progress: StageProgress): string {
  if (progress.unit === 'dialogues' || progress.unitsTotal === null)
    return `${progress.done + progress.cached + progress.failed}/${progress.total} dialogues`;
  return `${amount(progress.unitsDone, progress.unit)}/${progress.unitsEstimated ? '~' : ''}${amount(progress.unitsTotal, progress.unit)} ${progress.unit}`;
}
