// Offline rank fusion methods (RRF, min-max and z-score linear) and retrieval metrics (recall@k, MRR@k, nDCG@k) for the fusion suite.
import { rng } from "./lib/stats";

/** One stage's result list at passage level, best first; `score` is the stage's own score (higher is better). */
export interface Ranked {
  id: string;
  score: number;
}

export interface FusionMethod {
  name: string;
  /** Fuses a vector list and a keyword list into one ranking of ids, best first. */
  fuse(vector: Ranked[], keyword: Ranked[]): string[];
}

/** Ids of both lists, vector first, each once: the candidate set and the tie-break order (stable sort). */
const union = (a: Ranked[], b: Ranked[]): string[] => [...new Set([...a.map((h) => h.id), ...b.map((h) => h.id)])];

const rankBy = (ids: string[], score: (id: string) => number): string[] =>
  ids.map((id) => ({ id, s: score(id) })).sort((x, y) => y.s - x.s).map((x) => x.id);

/** Reciprocal rank fusion as in src/features/knowledge/search.ts: Σ 1/(k + rank), vector first on ties. */
export function rrf(k: number): FusionMethod {
  return {
    name: `RRF k=${k}`,
    fuse(v, kw) {
      const fused = new Map<string, number>();
      v.forEach((h, i) => fused.set(h.id, (fused.get(h.id) ?? 0) + 1 / (k + i + 1)));
      kw.forEach((h, i) => fused.set(h.id, (fused.get(h.id) ?? 0) + 1 / (k + i + 1)));
      return rankBy([...fused.keys()], (id) => fused.get(id)!);
    },
  };
}

/**
 * Per-list score normaliser. A passage missing from a list gets that list's floor (its lowest normalised
 * score: 0 for min-max), as if it sat just at the cut-off. A degenerate list (one hit, or all scores
 * equal) gives its hits 1 and missing passages 0.
 */
type Normaliser = (list: Ranked[]) => (id: string) => number;

export const minMax: Normaliser = (list) => {
  const scores = list.map((h) => h.score);
  const lo = Math.min(...scores);
  const hi = Math.max(...scores);
  const map = new Map(list.map((h) => [h.id, hi > lo ? (h.score - lo) / (hi - lo) : 1]));
  return (id) => map.get(id) ?? 0;
};

export const zScore: Normaliser = (list) => {
  const n = list.length;
  const mean = list.reduce((s, h) => s + h.score, 0) / Math.max(1, n);
  const sd = Math.sqrt(list.reduce((s, h) => s + (h.score - mean) ** 2, 0) / Math.max(1, n));
  if (n < 2 || !(sd > 0)) {
    const present = new Set(list.map((h) => h.id));
    return (id) => (present.has(id) ? 1 : 0);
  }
  const map = new Map(list.map((h) => [h.id, (h.score - mean) / sd]));
  const floor = Math.min(...map.values());
  return (id) => map.get(id) ?? floor;
};

/** α·norm(vector) + (1−α)·norm(keyword): α is the weight of the vector stage. */
export function linear(label: string, normalise: Normaliser, alpha: number): FusionMethod {
  return {
    name: `${label} α=${alpha}`,
    fuse(v, kw) {
      const nv = normalise(v);
      const nk = normalise(kw);
      return rankBy(union(v, kw), (id) => alpha * nv(id) + (1 - alpha) * nk(id));
    },
  };
}

export const vectorOnly: FusionMethod = { name: "vector only", fuse: (v) => v.map((h) => h.id) };
export const keywordOnly: FusionMethod = { name: "keyword only", fuse: (_, kw) => kw.map((h) => h.id) };

/** Every method the suite compares, references first. */
export const METHODS: FusionMethod[] = [
  vectorOnly,
  keywordOnly,
  ...[10, 30, 60].map(rrf),
  ...[0.3, 0.5, 0.7].map((a) => linear("min-max", minMax, a)),
  ...[0.3, 0.5, 0.7].map((a) => linear("z-score", zScore, a)),
];

export interface Scores {
  recall5: number;
  mrr10: number;
  ndcg10: number;
}

export const METRICS: { key: keyof Scores; label: string }[] = [
  { key: "ndcg10", label: "nDCG@10" },
  { key: "mrr10", label: "MRR@10" },
  { key: "recall5", label: "recall@5" },
];

/** Binary-relevance metrics of one ranking. */
export function score(ranking: string[], relevant: readonly string[]): Scores {
  const rel = new Set(relevant);
  const hits5 = ranking.slice(0, 5).filter((id) => rel.has(id)).length;
  const first = ranking.slice(0, 10).findIndex((id) => rel.has(id));
  let dcg = 0;
  ranking.slice(0, 10).forEach((id, i) => {
    if (rel.has(id)) dcg += 1 / Math.log2(i + 2);
  });
  let ideal = 0;
  for (let i = 0; i < Math.min(rel.size, 10); i++) ideal += 1 / Math.log2(i + 2);
  return { recall5: hits5 / rel.size, mrr10: first < 0 ? 0 : 1 / (first + 1), ndcg10: ideal ? dcg / ideal : 0 };
}

export const mean = (xs: readonly number[]): number => (xs.length ? xs.reduce((s, x) => s + x, 0) / xs.length : Number.NaN);

/** Paired bootstrap of mean(a − b) over queries: the mean difference and its 95% interval. */
export function pairedBootstrap(a: readonly number[], b: readonly number[], reps = 10_000, seed = 42) {
  const d = a.map((x, i) => x - b[i]!);
  const rand = rng(seed);
  const means: number[] = [];
  for (let r = 0; r < reps; r++) {
    let s = 0;
    for (let i = 0; i < d.length; i++) s += d[Math.floor(rand() * d.length)]!;
    means.push(s / d.length);
  }
  means.sort((x, y) => x - y);
  return {
    diff: mean(d),
    lo: means[Math.floor(reps * 0.025)]!,
    hi: means[Math.floor(reps * 0.975)]!,
    wins: d.filter((x) => x > 1e-9).length,
    losses: d.filter((x) => x < -1e-9).length,
  };
}
