// Hybrid fusion: each stage's scores min-max normalised over its own candidates, then weighted by
// the query's shape. On real documentation (bench/retrieval.ts) this beat reciprocal rank fusion:
// ranks throw away how clearly a stage prefers its first hit, which decides between the pages of one manual.
import { queryTerms } from "./keyword-store";

export interface ScoredChunk {
  chunkId: number;
  score: number;
}

/** Weight of the vector stage when no query says otherwise (the keyword stage gets the rest). */
export const VECTOR_WEIGHT = 0.5;

/**
 * Weight of the vector stage by the query's shape. A lookup of a name or a few words is what BM25
 * does best (the embedding of "samenet" or "jit_above_cost" says little); a question in the user's
 * own words is what the embedding does best; a question naming an identifier needs both. Tuned on
 * the odd-numbered questions of the retrieval benchmark and checked on the even-numbered ones.
 */
export const VECTOR_WEIGHTS: Readonly<Record<QueryShape, number>> = { lookup: 0.1, named: 0.5, sentence: 0.7 };

export type QueryShape = "lookup" | "named" | "sentence";

/** A question mark at the end, or a question word first. */
const QUESTION = /\?\s*$|^\s*(how|what|why|when|where|which|who|whom|whose|is|are|was|were|can|could|does|do|did|should|would|will|if)\b/i;
/** A word written like a name in the documents: snake_case, --flag, a.b, camelCase, call(, an ALL-CAPS keyword. */
const NAME = /\w_\w|^--?\w|\w\.\w|[a-z][A-Z]|\w\(|^[A-Z]{2,}\W*$/;
/** Most topical terms a query may have and still be a lookup rather than a sentence. */
const LOOKUP_TERMS = 4;

export function queryShape(query: string): QueryShape {
  if (!QUESTION.test(query) && queryTerms(query).length <= LOOKUP_TERMS) return "lookup";
  return query.split(/\s+/).some((w) => NAME.test(w)) ? "named" : "sentence";
}

export const vectorWeight = (query: string) => VECTOR_WEIGHTS[queryShape(query)];

/** Scores mapped to 0..1 over the list; a list with one hit or equal scores gives each hit 1. */
function normalised(list: ScoredChunk[]): Map<number, number> {
  let lo = Infinity;
  let hi = -Infinity;
  for (const h of list) {
    lo = Math.min(lo, h.score);
    hi = Math.max(hi, h.score);
  }
  return new Map(list.map((h) => [h.chunkId, hi > lo ? (h.score - lo) / (hi - lo) : 1]));
}

/**
 * α·norm(vector) + (1−α)·norm(keyword), best first; a chunk missing from a list gets 0 there (as if
 * just below its last candidate). A chunk first in both lists scores 1.
 */
export function fuseScores(vector: ScoredChunk[], keyword: ScoredChunk[], alpha = VECTOR_WEIGHT): ScoredChunk[] {
  const v = normalised(vector);
  const k = normalised(keyword);
  const ids = [...new Set([...vector.map((h) => h.chunkId), ...keyword.map((h) => h.chunkId)])];
  // Stable sort over vector-first order: ties keep the vector stage's preference.
  return ids.map((chunkId) => ({ chunkId, score: alpha * (v.get(chunkId) ?? 0) + (1 - alpha) * (k.get(chunkId) ?? 0) })).sort((a, b) => b.score - a.score);
}
