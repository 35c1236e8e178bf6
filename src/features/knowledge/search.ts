// Search over a workspace's knowledge: vector (cosine), keyword (BM25) or hybrid (normalised score
// fusion of both, fusion.ts), always inside the knowledge bases the caller may read.
import { and, eq, inArray, sql } from "drizzle-orm";
import type { Db } from "../../platform/db/database";
import { invalid, unavailable } from "../../platform/errors";
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
/**
 * Hits of files not ready are dropped when the rows are read (hydrate), which costs nothing more;
 * when they took places, the search runs again for this many times more, at most MAX_WIDENINGS times.
 */
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
      throw unavailable(`Vector search is unavailable: ${reason ?? "the embedding model is still loading"}; use mode "keyword"`);
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
    // Only ready files: one being stored again (or failed) still has chunks and vectors.
    .where(and(inArray(knowledgeChunks.id, sql`(SELECT value FROM json_each(${sql.placeholder("ids")}))`), eq(knowledgeFiles.status, "ready")))
    .prepare();

  const hydrate = (hits: Ranked[]): SearchHit[] => {
    if (hits.length === 0) return [];
    const rows = chunkRows.all({ ids: JSON.stringify(hits.map((h) => h.chunkId)) });
    const byId = new Map(rows.map((r) => [r.id, r]));
    return hits.flatMap((h) => {
      const r = byId.get(h.chunkId);
      return r ? [{ chunkId: r.id, fileId: r.fileId, fileName: r.fileName, knowledgeBaseId: r.knowledgeBaseId, text: r.text, page: r.page, headings: r.headings, score: h.score }] : [];
    });
  };

  /** The `want` best chunks by the mode's own score (BM25, cosine, fused), before any is read. */
  const rank = async (kbIds: string[], input: SearchInput, want: number, pending?: ReturnType<typeof embedQuery>): Promise<Ranked[]> => {
    if (input.mode === "keyword") return keywords.search(kbIds, input.query, want);
    if (input.mode === "vector") return vectorStage(kbIds, pending!, want);
    const n = want * CANDIDATES_PER_RESULT;
    const kw = keywords.search(kbIds, input.query, n); // runs while the worker embeds the query
    const v = await vectorStage(kbIds, pending!, n);
    return fuseScores(v, kw, vectorWeight(input.query)).slice(0, want);
  };

  const search = async (principal: Principal, input: SearchInput): Promise<SearchHit[]> => {
    const kbIds = scope(principal, input);
    if (kbIds.length === 0) return [];
    const k = input.topK;
    const pending = input.mode === "keyword" ? undefined : embedQuery(input.query);
    pending?.catch(() => {}); // awaited in rank, after the keyword stage ran
    let hits: SearchHit[] = [];
    for (let want = k, round = 0; ; want *= WIDEN, round++) {
      const ranked = await rank(kbIds, input, want, pending);
      hits = hydrate(ranked);
      // Enough hits of ready files, or the mode has no more to give.
      if (hits.length >= k || ranked.length < want || round === MAX_WIDENINGS) break;
    }
    hits = hits.slice(0, k);
    // BM25 has no fixed scale: keyword scores are reported relative to the best hit (1.0).
    const best = input.mode === "keyword" ? hits[0]?.score || 1 : 1;
    if (best !== 1) hits = hits.map((h) => ({ ...h, score: h.score / best }));
    return input.minScore === undefined ? hits : hits.filter((h) => h.score >= input.minScore!);
  };

  return {
    search,
    /**
     * Hybrid when the embedder can embed the query now, else keyword: what the assistant, agents and
     * MCP ask, so a question finds its passages while the model loads or when it is missing.
     */
    async searchBest(principal: Principal, input: Omit<SearchInput, "mode">): Promise<SearchHit[]> {
      const state = await embedder.status().catch(() => ({ state: "unavailable" as const }));
      return search(principal, { ...input, mode: state.state === "ok" ? "hybrid" : "keyword" });
    },
  };
}

export type KnowledgeSearch = ReturnType<typeof createKnowledgeSearch>;
