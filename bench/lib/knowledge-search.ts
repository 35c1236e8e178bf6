// Knowledge suite, search part: grows a running Hearth's knowledge base with synthetic chunks, then times search over HTTP and the vector and keyword stages alone.
import type { Storage } from "../../src/platform/db/database";
import { createVectorStore } from "../../src/features/knowledge/vector-store";
import { createKeywordStore, toFtsQuery } from "../../src/features/knowledge/keyword-store";
import { knowledgeFiles } from "../../src/features/knowledge/table";
import { syntheticChunk } from "./corpus";
import { rng } from "./stats";
import { buildPost, timeRequests, type Session } from "./hearth-api";
import { summarize, type LatencySummary } from "./stats";
import { bruteForceTopK, type VectorSet } from "./vector-lab";

export const TOP_K = 10;
export const MODES = ["vector", "keyword", "hybrid"] as const;
export type Mode = (typeof MODES)[number];

export interface SearchBudget {
  e2e: { warmup: number; count: number; maxMs: number };
  stage: { count: number; maxMs: number };
  floor: { count: number; maxMs: number };
  /** Also time the keyword stage alone (KeywordStore.search). */
  keywordStage: boolean;
}

export interface KeywordStageResult {
  latency: LatencySummary;
  /** Chunks each question's FTS5 query matches (BM25 scores them all): median and largest. */
  matched: { median: number; max: number };
}

export interface SizeResult {
  chunks: number;
  e2e: Record<Mode, LatencySummary>;
  stage: LatencySummary;
  floor: LatencySummary;
  /** How often the vector stage and the JS floor agreed on the top-k (they should: both are exact). */
  stageFloorAgreement: number;
  keyword?: KeywordStageResult;
}

/** A file row that owns the synthetic chunks (no bytes: search never reads them). */
export function syntheticFile(storage: Storage, kb: { id: string; productId: string }): string {
  const id = crypto.randomUUID();
  const now = new Date();
  storage.db
    .insert(knowledgeFiles)
    .values({ id, knowledgeBaseId: kb.id, productId: kb.productId, name: "synthetic-chunks.txt", format: "txt", mimeType: "text/plain", size: 0, sha256: id, contentId: id, status: "ready", progress: 1, chunkCount: 0, embeddingModel: "synthetic", embeddedAt: now, createdAt: now, updatedAt: now })
    .run();
  return id;
}

/**
 * Inserts rows [from, to) of the set as chunks of `fileId` (text from the corpus generator, so the
 * FTS5 triggers index a realistic vocabulary) and their vectors through Hearth's own VectorStore.put.
 */
export function populate(storage: Storage, kb: { id: string; productId: string }, fileId: string, set: VectorSet, from: number, to: number): number {
  const t0 = performance.now();
  const vectors = createVectorStore(storage.sqlite);
  const sqlite = storage.sqlite;
  sqlite.exec("PRAGMA synchronous = OFF"); // this connection only: population speed, not a Hearth path
  const ins = sqlite.query(
    `INSERT INTO knowledge_chunks(id, file_id, knowledge_base_id, product_id, ordinal, text, page, headings, char_start, char_end, tokens)
     VALUES (?, ?, ?, ?, ?, ?, NULL, '[]', 0, ?, ?)`,
  );
  const r = rng(1000 + from);
  for (let b = from; b < to; b += 5000) {
    const end = Math.min(to, b + 5000);
    sqlite.transaction(() => {
      for (let i = b; i < end; i++) {
        const text = syntheticChunk(r, i);
        ins.run(set.ids[i]!, fileId, kb.id, kb.productId, i, text, text.length, Math.ceil(text.length / 4.5));
      }
      vectors.put(set.dim, Array.from({ length: end - b }, (_, j) => ({ chunkId: set.ids[b + j]!, knowledgeBaseId: kb.id, vector: set.flat.subarray((b + j) * set.dim, (b + j + 1) * set.dim) })));
    })();
  }
  sqlite.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  return performance.now() - t0;
}

const timeLoop = (count: number, maxMs: number, f: (i: number) => void): number[] => {
  const samples: number[] = [];
  const deadline = performance.now() + maxMs;
  for (let i = 0; i < count && (i < 5 || performance.now() < deadline); i++) {
    const t = Bun.nanoseconds();
    f(i);
    samples.push((Bun.nanoseconds() - t) / 1e6);
  }
  return samples;
};

/** The keyword stage alone, as Hearth runs it, and how many chunks each question's query matches. */
function keywordStage(storage: Storage, kbId: string, questions: string[], budget: SearchBudget["stage"]): KeywordStageResult {
  const keywords = createKeywordStore(storage.sqlite);
  keywords.search([kbId], questions[0]!, TOP_K);
  const samples = timeLoop(budget.count, budget.maxMs, (i) => keywords.search([kbId], questions[i % questions.length]!, TOP_K));
  const count = storage.sqlite.query<{ n: number }, [string]>("SELECT count(*) AS n FROM knowledge_chunks_fts WHERE knowledge_chunks_fts MATCH ?");
  const matched = questions.map((q) => count.get(toFtsQuery(q)!)!.n).sort((x, y) => x - y);
  return { latency: summarize(samples), matched: { median: matched[Math.floor(matched.length / 2)]!, max: matched.at(-1)! } };
}

/** Times POST /api/knowledge-base/embeddings per mode, VectorStore.search and the JS floor, with `set.n` chunks in the knowledge base. */
export async function measureSearch(
  session: Session,
  server: { host: string; port: number },
  storage: Storage,
  kbId: string,
  set: VectorSet,
  questions: string[],
  queryVectors: Float32Array[],
  budget: SearchBudget,
): Promise<SizeResult> {
  const e2e = {} as Record<Mode, LatencySummary>;
  for (const mode of MODES) {
    const reqs = questions.map((query) => buildPost(server.host, server.port, "/api/knowledge-base/embeddings", { Authorization: `Bearer ${session.jwt}` }, { query, product_id: session.productId, mode, top_k: TOP_K }));
    const check = (body: Buffer) => {
      const data = (JSON.parse(body.toString("utf8")) as { data: unknown[] }).data;
      if (!Array.isArray(data) || data.length === 0) throw new Error(`${mode} search returned no hits`);
    };
    e2e[mode] = summarize(await timeRequests(server.host, server.port, reqs, budget.e2e, check));
  }
  const vectors = createVectorStore(storage.sqlite);
  vectors.search(set.dim, [kbId], queryVectors[0]!, TOP_K); // warm-up: statement and pages
  const stage = timeLoop(budget.stage.count, budget.stage.maxMs, (i) => vectors.search(set.dim, [kbId], queryVectors[i % queryVectors.length]!, TOP_K));
  const floor = timeLoop(budget.floor.count, budget.floor.maxMs, (i) => bruteForceTopK(set, queryVectors[i % queryVectors.length]!, TOP_K));
  let agree = 0;
  for (const q of queryVectors) {
    const a = vectors.search(set.dim, [kbId], q, TOP_K).map((h) => h.chunkId);
    const b = bruteForceTopK(set, q, TOP_K);
    agree += a.filter((id) => b.includes(id)).length / TOP_K;
  }
  const keyword = budget.keywordStage ? keywordStage(storage, kbId, questions, budget.stage) : undefined;
  return { chunks: set.n, e2e, stage: summarize(stage), floor: summarize(floor), stageFloorAgreement: agree / queryVectors.length, keyword };
}

