import { kernelDensityEstimation } from 'simple-statistics';
import { describe, expect, it } from 'vitest';
import {
  DistributionFitError,
  drawFromDistribution,
  drawLowestStratumAbove,
  drawStratified,
  fitEmpiricalDistribution,
  kolmogorovSmirnovCriticalDistance,
  kolmogorovSmirnovDistance,
  normalReferenceBandwidth,
  probabilityMassFunction,
  withoutSmoothing,
} from './empirical-distribution.ts';
import { dialogueRandomStream } from '../model/random.ts';

const values = [-120, -40, -5, 0, 0, 0, 3, 8, 10, 12, 15, 20, 22, 25, 40, 90, 300];

describe('normalReferenceBandwidth', () => {
  it("is simple-statistics' kernelDensityEstimation 'nrd' bandwidth (same density everywhere)", () => {
    const bandwidth = normalReferenceBandwidth(values);
    const gaussian = (u: number) => Math.exp(-0.5 * u * u) / Math.sqrt(2 * Math.PI);
    const ours = (x: number) =>
      values.reduce((sum, value) => sum + gaussian((x - value) / bandwidth), 0) / bandwidth / values.length;
    const reference = kernelDensityEstimation(values, 'gaussian', 'nrd');
    for (const x of [-100, -3, 0, 7.5, 20, 150]) expect(ours(x)).toBeCloseTo(reference(x), 12);
    expect(bandwidth).toBeGreaterThan(0);
  });

  it('is 0 for fewer than two values and for a constant sample', () => {
    expect(normalReferenceBandwidth([])).toBe(0);
    expect(normalReferenceBandwidth([5])).toBe(0);
    expect(normalReferenceBandwidth([5, 5, 5])).toBe(0);
  });
});

describe('fitEmpiricalDistribution', () => {
  it('caps each kernel width at a quarter of the spacing to the nearest different value', () => {
    const fitted = fitEmpiricalDistribution(values);
    expect(fitted.values).toEqual([...values].sort((a, b) => a - b));
    const widthOf = (value: number) => fitted.kernelWidths[fitted.values.indexOf(value)];
    expect(widthOf(0)).toBe(0.75); // neighbours -5 and 3: spacing 3
    expect(widthOf(8)).toBe(0.5); // neighbours 3 and 10: spacing 2
    expect(widthOf(300)).toBe(Math.min(fitted.bandwidth, 52.5)); // a lone tail value gets the bandwidth
    expect(fitted.kernelWidths.every((width) => width <= fitted.bandwidth)).toBe(true);
  });

  it('rejects values off the grid or outside the support', () => {
    expect(() => fitEmpiricalDistribution([1.5])).toThrow(DistributionFitError);
    expect(() => fitEmpiricalDistribution([0, 90], { lower: 1, upper: 80 })).toThrow(/outside the support/);
    expect(() => fitEmpiricalDistribution([], { lower: 5, upper: 1 })).toThrow(/exceeds/);
  });
});

describe('drawFromDistribution', () => {
  it('stays inside the support and follows the exact probability mass function', () => {
    const fitted = fitEmpiricalDistribution([1, 2, 2, 3, 10, 40, 70, 79, 80], { lower: 1, upper: 80 });
    const random = dialogueRandomStream(1, 'draws');
    const counts = new Map<number, number>();
    const total = 200_000;
    for (let draw = 0; draw < total; draw += 1) {
      const value = drawFromDistribution(fitted, random);
      counts.set(value, (counts.get(value) ?? 0) + 1);
    }
    expect(Math.min(...counts.keys())).toBeGreaterThanOrEqual(1);
    expect(Math.max(...counts.keys())).toBeLessThanOrEqual(80);
    const mass = probabilityMassFunction(fitted);
    expect([...mass.values()].reduce((sum, probability) => sum + probability, 0)).toBeCloseTo(1, 6);
    for (const [value, probability] of mass) {
      // binomial standard error, 5 sigma
      const tolerance = 5 * Math.sqrt((probability * (1 - probability)) / total) + 1e-4;
      expect(Math.abs((counts.get(value) ?? 0) / total - probability)).toBeLessThan(tolerance);
    }
  });

  it('keeps an atom of repeated values (the draws equal the measured values where data are dense)', () => {
    const dense = [...Array.from({ length: 200 }, () => 0), ...Array.from({ length: 201 }, (_, index) => index - 100)];
    const fitted = fitEmpiricalDistribution(dense);
    const random = dialogueRandomStream(2, 'atom');
    const draws = Array.from({ length: 50_000 }, () => drawFromDistribution(fitted, random));
    expect(kolmogorovSmirnovDistance(draws, dense)).toBeLessThan(0.015);
    const zeros = draws.filter((value) => value === 0).length / draws.length;
    expect(Math.abs(zeros - 201 / 401)).toBeLessThan(0.02);
  });

  it('withoutSmoothing draws only measured values', () => {
    const plain = withoutSmoothing(fitEmpiricalDistribution([-500, 20]));
    const random = dialogueRandomStream(3, 'plain');
    const draws = new Set(Array.from({ length: 1000 }, () => drawFromDistribution(plain, random)));
    expect(draws).toEqual(new Set([-500, 20]));
    expect(() => drawFromDistribution(fitEmpiricalDistribution([]), random)).toThrow(RangeError);
  });
});

describe('Kolmogorov–Smirnov distance', () => {
  /** Brute force: the largest difference of the two distribution functions at every value of either sample. */
  function bruteForce(a: number[], b: number[]): number {
    const cdf = (sample: number[], x: number) => sample.filter((value) => value <= x).length / sample.length;
    return Math.max(...[...a, ...b].map((x) => Math.abs(cdf(a, x) - cdf(b, x))));
  }

  it('equals the brute-force supremum, ties included', () => {
    const random = dialogueRandomStream(4, 'ks');
    for (let trial = 0; trial < 200; trial += 1) {
      const a = Array.from({ length: random.integer(1, 30) }, () => random.integer(-5, 5));
      const b = Array.from({ length: random.integer(1, 30) }, () => random.integer(-3, 8));
      expect(kolmogorovSmirnovDistance(a, b)).toBeCloseTo(bruteForce(a, b), 12);
    }
    expect(kolmogorovSmirnovDistance([1, 2, 3], [1, 2, 3])).toBe(0);
    expect(kolmogorovSmirnovDistance([1], [2])).toBe(1);
    expect(() => kolmogorovSmirnovDistance([], [1])).toThrow(RangeError);
  });

  it('critical distance at 5 % is 1.358 · sqrt((n + m) / nm)', () => {
    expect(kolmogorovSmirnovCriticalDistance(1000, 4000)).toBeCloseTo(1.358 * Math.sqrt(5000 / 4_000_000), 3);
  });
});

describe('drawStratified', () => {
  const distribution = fitEmpiricalDistribution(Array.from({ length: 100 }, (_, index) => index * 10));

  it('draws one value from each of count equal-probability strata', () => {
    const random = dialogueRandomStream(1, 'stratified');
    for (let trial = 0; trial < 200; trial += 1) {
      const draws = drawStratified(withoutSmoothing(distribution), random, 4);
      expect(draws).toHaveLength(4);
      draws.forEach((value, stratum) => {
        expect(value).toBeGreaterThanOrEqual(stratum * 250);
        expect(value).toBeLessThan((stratum + 1) * 250);
      });
    }
  });

  it('follows the distribution when pooled over many batches, closer than independent draws', () => {
    const random = dialogueRandomStream(2, 'stratified');
    const stratified = Array.from({ length: 500 }, () => drawStratified(distribution, random, 6)).flat();
    const independent = Array.from({ length: 3000 }, () => drawFromDistribution(distribution, random));
    const target = [...distribution.values];
    expect(kolmogorovSmirnovDistance(stratified, target)).toBeLessThan(0.02);
    expect(kolmogorovSmirnovDistance(stratified, target)).toBeLessThan(kolmogorovSmirnovDistance(independent, target));
  });

  it('handles more draws than values and rejects a bad count', () => {
    const random = dialogueRandomStream(3, 'stratified');
    expect(drawStratified(withoutSmoothing(fitEmpiricalDistribution([5, 9])), random, 4)).toEqual([5, 5, 9, 9]);
    expect(drawStratified(distribution, random, 0)).toEqual([]);
    expect(() => drawStratified(distribution, random, -1)).toThrow(RangeError);
    expect(() => drawStratified(fitEmpiricalDistribution([]), random, 1)).toThrow(RangeError);
  });
});

describe('drawLowestStratumAbove', () => {
  const distribution = fitEmpiricalDistribution([-300, -200, -100, -50, 0, 10, 20, 30, 40, 50]);

  it('draws at or above the bound, from the lowest stratum of what lies above it', () => {
    const random = dialogueRandomStream(4, 'above');
    for (let trial = 0; trial < 500; trial += 1) {
      const value = drawLowestStratumAbove(distribution, random, -120, 3) as number;
      expect(value).toBeGreaterThanOrEqual(-120);
      // 8 measured values lie at or above -120 (from -100); the lowest of 3 strata holds the 3 smallest
      const plain = drawLowestStratumAbove(withoutSmoothing(distribution), random, -120, 3);
      expect([-100, -50, 0]).toContain(plain);
    }
  });

  it('returns null when no measured value reaches the bound, and rejects a bad stratum count', () => {
    const random = dialogueRandomStream(5, 'above');
    expect(drawLowestStratumAbove(distribution, random, 51, 1)).toBeNull();
    expect(() => drawLowestStratumAbove(distribution, random, 0, 0)).toThrow(RangeError);
  });
});
