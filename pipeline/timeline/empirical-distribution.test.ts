import { kernelDensityEstimation, mean } from 'simple-statistics';
import { describe, expect, it } from 'vitest';
import {
  DistributionFitError,
  drawFromDistribution,
  drawPoisson,
  fitEmpiricalDistribution,
  kolmogorovSmirnovCriticalDistance,
  kolmogorovSmirnovDistance,
  normalReferenceBandwidth,
  probabilityMassFunction,
  withoutSmoothing,
} from './empirical-distribution.ts';
import { dialogueRandomStream } from './random.ts';

const values = [-120, -40, -5, 0, 0, 0, 3, 8, 10, 12, 15, 20, 22, 25, 40, 90, 300];

describe('normalReferenceBandwidth', () => {
  it("is simple-statistics' kernelDensityEstimation 'nrd' bandwidth (same density everywhere)", () => {
    const bandwidth = normalReferenceBandwidth(values);
    const gaussian = (u: number) => Math.exp(-0.5 * u * u) / Math.sqrt(2 * Math.PI);
    const ours = (x: number) => values.reduce((sum, value) => sum + gaussian((x - value) / bandwidth), 0) / bandwidth / values.length;
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

describe('drawPoisson', () => {
  it('has the requested mean and rejects bad means', () => {
    const random = dialogueRandomStream(5, 'poisson');
    const draws = Array.from({ length: 50_000 }, () => drawPoisson(0.7, random));
    expect(Math.abs(mean(draws) - 0.7)).toBeLessThan(0.02);
    expect(drawPoisson(0, random)).toBe(0);
    expect(() => drawPoisson(-1, random)).toThrow(RangeError);
  });
});
