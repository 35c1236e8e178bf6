// Hybrid fusion: min-max normalised scores of both stages, weighted (bench/retrieval.ts chose the weight).
import { describe, expect, test } from "bun:test";
import { fuseScores, queryShape, VECTOR_WEIGHT, VECTOR_WEIGHTS, vectorWeight } from "../../../src/features/knowledge/fusion";

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

describe("query shape", () => {
  test("a name or a few words is a lookup, a question naming an identifier is named, other questions are sentences", () => {
    for (const q of ["samenet", "jit_above_cost", "pg_basebackup --write-recovery-conf", "EXCLUDE USING gist", "lag lead"]) expect(queryShape(q)).toBe("lookup");
    // Five topical terms (NOT, in capitals, is one): more than a lookup.
    for (const q of ["NULLS NOT DISTINCT unique index", "what does pg_write_server_files allow", "how do I set shared_buffers?", "use REFERENCING NEW TABLE to see every row changed by the statement in one trigger"]) expect(queryShape(q)).toBe("named");
    for (const q of ["how full does a b-tree pack its pages by default?", "store the result of an expensive query as a materialized view and refresh it later", "median?"]) expect(queryShape(q)).toBe("sentence");
  });

  test("lookups lean on keywords, sentences on vectors", () => {
    expect(vectorWeight("samenet")).toBe(VECTOR_WEIGHTS.lookup);
    expect(VECTOR_WEIGHTS.lookup).toBeLessThan(VECTOR_WEIGHTS.named);
    expect(VECTOR_WEIGHTS.named).toBeLessThan(VECTOR_WEIGHTS.sentence);
    // A keyword-only hit of a lookup outranks a vector-only one; in a sentence the other way round.
    const vector = [{ chunkId: 1, score: 0.9 }, { chunkId: 3, score: 0.1 }];
    const keyword = [{ chunkId: 2, score: 12 }, { chunkId: 3, score: 1 }];
    expect(fuseScores(vector, keyword, vectorWeight("jit_above_cost"))[0]!.chunkId).toBe(2);
    expect(fuseScores(vector, keyword, vectorWeight("when does the planner give up on exhaustive search?"))[0]!.chunkId).toBe(1);
  });
});

