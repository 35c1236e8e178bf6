// Hybrid fusion: min-max normalised scores of both stages, weighted (bench/retrieval.ts chose the weight).
import { describe, expect, test } from "bun:test";
import { fuseScores, VECTOR_WEIGHT } from "../../../src/features/knowledge/fusion";

describe("fuseScores", () => {
  test("a chunk first in both lists scores 1, one missing from a list gets 0 for it", () => {
    const fused = fuseScores(
      [{ chunkId: 1, score: 0.9 }, { chunkId: 2, score: 0.5 }, { chunkId: 3, score: 0.1 }],
      [{ chunkId: 1, score: 12 }, { chunkId: 4, score: 2 }],
    );
    expect(fused[0]).toEqual({ chunkId: 1, score: 1 });
    expect(fused.find((h) => h.chunkId === 2)!.score).toBeCloseTo(VECTOR_WEIGHT * 0.5);
    expect(fused.find((h) => h.chunkId === 3)!.score).toBeCloseTo(0);
    expect(fused.find((h) => h.chunkId === 4)!.score).toBeCloseTo(0);
  });

  test("the margin counts, not only the rank: a clear keyword winner beats a chunk both stages rank second", () => {
    // RRF would put chunk 2 (2nd and 2nd) above chunk 1 (1st in keyword, far down the vector list).
    const vector = [{ chunkId: 3, score: 0.8 }, { chunkId: 2, score: 0.79 }, ...[10, 11, 12].map((id, i) => ({ chunkId: id, score: 0.78 - i * 0.001 })), { chunkId: 1, score: 0.77 }, { chunkId: 9, score: 0.2 }];
    const keyword = [{ chunkId: 1, score: 30 }, { chunkId: 2, score: 4 }, { chunkId: 5, score: 3 }];
    expect(fuseScores(vector, keyword)[0]!.chunkId).toBe(1);
  });

  test("a list with one hit, or with equal scores, counts its hits fully", () => {
    const fused = fuseScores([], [{ chunkId: 7, score: 3 }]);
    expect(fused).toEqual([{ chunkId: 7, score: 1 - VECTOR_WEIGHT }]);
    expect(fuseScores([{ chunkId: 1, score: 0.5 }, { chunkId: 2, score: 0.5 }], []).map((h) => h.score)).toEqual([VECTOR_WEIGHT, VECTOR_WEIGHT]);
  });
});
