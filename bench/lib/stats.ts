// Small statistics helpers for benchmark samples: percentiles, median, min, rounding, a seeded PRNG.

/** Nearest-rank percentile (p in 0..100) of unsorted samples; NaN when there are none. */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}

export const median = (samples: readonly number[]): number => percentile(samples, 50);

export const min = (samples: readonly number[]): number => (samples.length === 0 ? Number.NaN : Math.min(...samples));

export interface LatencySummary {
  count: number;
  p50: number;
  p95: number;
  p99: number;
  mean: number;
  max: number;
}

/** p50/p95/p99/mean/max of samples, in the samples' own unit. */
export function summarize(samples: readonly number[]): LatencySummary {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (p: number) => (sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length))) - 1]!);
  const mean = sorted.length === 0 ? Number.NaN : sorted.reduce((s, x) => s + x, 0) / sorted.length;
  return { count: sorted.length, p50: at(50), p95: at(95), p99: at(99), mean, max: sorted.at(-1) ?? Number.NaN };
}

/** Rounds to `digits` decimals, keeping NaN as null so JSON stays valid. */
export function round(x: number, digits = 1): number | null {
  if (!Number.isFinite(x)) return null;
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

/** mulberry32: a small seeded PRNG, so every run draws exactly the same inputs and resamples. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
