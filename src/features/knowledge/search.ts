// Search over a workspace's knowledge: vector (cosine), keyword (BM25) or hybrid (normalised score
// fusion of both, fusion.ts), always inside the knowledge bases the caller may read.
import { and, eq, inArray, sql } from "drizzle-orm";
import type { Db } from "../../platform/db/database";
import { AppError, invalid } from "../../platform/errors";
import type { Principal } from "../../platform/auth/principal";
import type { KnowledgeEmbedder } from "./embedder";
import { fuseScores, vectorWeight } from "./fusion";
import type { KeywordStore } from "./keyword-store";
import type { VectorStore } from "./vector-store";
import type { KnowledgeService } from "./service";
import { knowledgeChunks, knowledgeFiles } from "./table";

export type SearchMode = "vector" | "keyword" | "hybrid";

export interface SearchInput {
  query: string;
  productId?: string;
  knowledgeBaseIds?: string[];
  topK: number;
  mode: SearchMode;
  minScore?: number;
}

export interface SearchHit {
  chunkId: number;
  fileId: string;
  fileName: string;
  knowledgeBaseId: string;
  text: string;
  page: number | null;
  headings: string[];
  score: number;
}

/** How many candidates each stage contributes to fusion, per result wanted. */
const CANDIDATES_PER_RESULT = 4;
/** A stage is asked again for this many times more hits when files not ready took places among its best. */
const WIDEN = 4;
const MAX_WIDENINGS = 3;

type Ranked = { chunkId: number; score: number };

export function createKnowledgeSearch(deps: { db: Db; knowledge: KnowledgeService; embedder: KnowledgeEmbedder; vectors: VectorStore; keywords: KeywordStore }) {
  const { db, knowledge, embedder, vectors, keywords } = deps;

  /** The knowledge bases a search may read: named ones (each checked) or all of a workspace. */
  const scope = (principal: Principal, input: SearchInput): string[] => {
    if (input.knowledgeBaseIds?.length) return input.knowledgeBaseIds.map((id) => knowledge.requireBase(principal, id).id);
    const productId = input.productId ?? (principal.kind === "token" ? principal.productId : undefined);
    if (!productId) throw invalid("Name a product_id or knowledge_base_ids to search in");
    return knowledge.baseIds(principal, productId);
  };

  /**
   * The query's vector, or 503 when the embedder cannot make one. Both requests go to the worker at
   * once, so a keyword search run right after this call overlaps the embedding.
   */
  const embedQuery = async (query: string) => {
    const [status, embedded] = await Promise.allSettled([embedder.status(), embedder.embed([query])]);
    const state = status.status === "fulfilled" ? status.value : { state: "unavailable" as const, reason: (status.reason as Error).message };
    if (state.state !== "ok" || embedded.status === "rejected") {
      const reason = state.state === "ok" ? (embedded as PromiseRejectedResult).reason?.message : state.reason;
      throw new AppError(503, "ServiceUnavailable", `Vector search is unavailable: ${reason ?? "the embedding model is still loading"}; use mode "keyword"`);
    }
    return embedded.value;
  };

  const vectorStage = async (kbIds: string[], pending: ReturnType<typeof embedQuery>, k: number) => {
    const { dim, vectors: [q] } = await pending;
    return vectors.search(dim, kbIds, q!, k).map((h) => ({ chunkId: h.chunkId, score: 1 - h.distance }));
  };

  // Prepared once, ids bound as one JSON array: the statement is the same for any number of hits.
  const chunkRows = db
    .select({
      id: knowledgeChunks.id,
      fileId: knowledgeChunks.fileId,
      knowledgeBaseId: knowledgeChunks.knowledgeBaseId,
      text: knowledgeChunks.text,
      page: knowledgeChunks.page,
      headings: knowledgeChunks.headings,
      fileName: knowledgeFiles.name,
    })
    .from(knowledgeChunks)
    .innerJoin(knowledgeFiles, eq(knowledgeFiles.id, knowledgeChunks.fileId))
    .where(inArray(knowledgeChunks.id, sql`(SELECT value FROM json_each(${sql.placeholder("ids")}))`))
    .prepare();

  // The hits whose file is ready: a file being stored again (or failed) still has chunks and vectors.
  const readyChunks = db
    .select({ id: knowledgeChunks.id })
    .from(knowledgeChunks)
    .innerJoin(knowledgeFiles, eq(knowledgeFiles.id, knowledgeChunks.fileId))
    .where(and(inArray(knowledgeChunks.id, sql`(SELECT value FROM json_each(${sql.placeholder("ids")}))`), eq(knowledgeFiles.status, "ready")))
    .prepare();

  /**
   * A stage's `k` best hits of ready files. Checked on the hits themselves (a few dozen rows), not
   * by listing every file in scope first, so search costs the same however many files there are;
   * when hits of files not ready took places, the stage is asked for more.
   */
  const readyOnly = async (k: number, stage: (want: number) => Ranked[] | Promise<Ranked[]>): Promise<Ranked[]> => {
    for (let want = k, round = 0; ; want *= WIDEN, round++) {
      const hits = await stage(want);
      if (hits.length === 0) return hits;
      const ready = new Set(readyChunks.all({ ids: JSON.stringify(hits.map((h) => h.chunkId)) }).map((r) => r.id));
      const kept = ready.size === hits.length ? hits : hits.filter((h) => ready.has(h.chunkId));
      // Fewer hits than asked for: the stage has no more to give.
      if (kept.length >= k || hits.length < want || round === MAX_WIDENINGS) return kept.slice(0, k);
    }
  };

  const hydrate = (hits: Ranked[]): SearchHit[] => {
    if (hits.length === 0) return [];
    const rows = chunkRows.all({ ids: JSON.stringify(hits.map((h) => h.chunkId)) });
    const byId = new Map(rows.map((r) => [r.id, r]));
    return hits.flatMap((h) => {
      const r = byId.get(h.chunkId);
      return r ? [{ chunkId: r.id, fileId: r.fileId, fileName: r.fileName, knowledgeBaseId: r.knowledgeBaseId, text: r.text, page: r.page, headings: r.headings, score: h.score }] : [];
    });
  };

  return {
    async search(principal: Principal, input: SearchInput): Promise<SearchHit[]> {
      const kbIds = scope(principal, input);
      if (kbIds.length === 0) return [];
      const k = input.topK;
      let ranked: Ranked[];
      const keywordStage = (want: number) => keywords.search(kbIds, input.query, want);
      if (input.mode === "keyword") {
        const hits = await readyOnly(k, keywordStage);
        // BM25 has no fixed scale: scores are reported relative to the best hit (1.0).
        const best = hits[0]?.score || 1;
        ranked = hits.map((h) => ({ chunkId: h.chunkId, score: h.score / best }));
      } else if (input.mode === "vector") {
        const pending = embedQuery(input.query);
        ranked = await readyOnly(k, (want) => vectorStage(kbIds, pending, want));
      } else {
        const n = k * CANDIDATES_PER_RESULT;
        const pending = embedQuery(input.query);
        pending.catch(() => {}); // awaited below; the keyword search runs while the worker embeds
        const kw = await readyOnly(n, keywordStage);
        const v = await readyOnly(n, (want) => vectorStage(kbIds, pending, want));
        ranked = fuseScores(v, kw, vectorWeight(input.query)).slice(0, k);
      }
      const filtered = input.minScore === undefined ? ranked : ranked.filter((h) => h.score >= input.minScore!);
      return hydrate(filtered);
    },
  };
}

export type KnowledgeSearch = ReturnType<typeof createKnowledgeSearch>;
