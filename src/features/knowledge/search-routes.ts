// /api/knowledge-base/embeddings: search (POST), embedding state (GET), re-embed (PUT), drop (DELETE).
import { Elysia, t } from "elysia";
import type { AuthPlugin } from "../../platform/auth/plugin";
import { errors, ok, Int } from "../../platform/http/schemas";
import { EmbeddingState, Scope, SearchBody, SearchResult } from "./model";
import type { KnowledgeEmbedder } from "./embedder";
import type { KnowledgeSearch } from "./search";
import type { KnowledgeService } from "./service";
import type { VectorStore } from "./vector-store";

export function searchRoutes({ auth, ...deps }: { auth: AuthPlugin; search: KnowledgeSearch; knowledge: KnowledgeService; embedder: KnowledgeEmbedder; vectors: VectorStore }) {
  const { search, knowledge, embedder, vectors } = deps;
  return new Elysia()
    .use(auth)
    .guard({ detail: { tags: ["Knowledge base"] } })
    .post(
      "/api/knowledge-base/embeddings",
      async ({ principal, body }) => {
        const hits = await search.search(principal, {
          query: body.query,
          productId: body.product_id,
          knowledgeBaseIds: body.knowledge_base_ids,
          topK: body.top_k ?? 5,
          mode: body.mode ?? "vector",
          minScore: body.min_score,
        });
        return {
          success: true as const,
          data: hits.map((h) => ({
            chunk_id: h.chunkId,
            file_id: h.fileId,
            file_name: h.fileName,
            knowledge_base_id: h.knowledgeBaseId,
            text: h.text,
            ...(h.page === null ? {} : { page: h.page }),
            headings: h.headings,
            score: h.score,
          })),
        };
      },
      {
        auth: "any",
        body: SearchBody,
        parse: "json",
        response: { 200: ok(t.Array(SearchResult)), ...errors(400, 401, 404, 422, 429, 503) },
        detail: { summary: "Search the knowledge (vector, keyword or hybrid); no LLM involved" },
      },
    )
    .get(
      "/api/knowledge-base/embeddings",
      async ({ principal, query }) => {
        const files = knowledge.filesInScope(principal, { fileId: query.file_id, knowledgeBaseId: query.knowledge_base_id });
        const state = await embedder.status();
        return {
          success: true as const,
          data: {
            model: embedder.model,
            embedder: state.state,
            ...(state.reason ? { reason: state.reason } : {}),
            files: files.map((f) => ({
              file_id: f.id,
              name: f.name,
              status: f.status,
              chunk_count: f.chunkCount,
              embedding_model: f.embeddingModel,
              embedded: f.embeddingModel === embedder.model,
            })),
          },
        };
      },
      { auth: "any", query: Scope, response: { 200: ok(EmbeddingState), ...errors(400, 401, 404, 429) }, detail: { summary: "Embedding state of a knowledge base or a file" } },
    )
    .put(
      "/api/knowledge-base/embeddings",
      ({ principal, body, set }) => {
        const queued = knowledge.reembed(knowledge.filesInScope(principal, { fileId: body.file_id, knowledgeBaseId: body.knowledge_base_id }));
        set.status = 202;
        return { success: true as const, message: `Re-embedding ${queued} file(s) with ${embedder.model}`, data: { queued } };
      },
      { auth: "any:strict", body: Scope, parse: "json", response: { 202: ok(t.Object({ queued: Int() })), ...errors(400, 401, 404, 422, 429) }, detail: { summary: "Re-embed a file or a knowledge base" } },
    )
    .delete(
      "/api/knowledge-base/embeddings",
      ({ principal, query }) => {
        const files = knowledge.filesInScope(principal, { fileId: query.file_id, knowledgeBaseId: query.knowledge_base_id });
        knowledge.dropEmbeddings(files, (ids) => vectors.remove(ids));
        return { success: true as const, message: "Vectors dropped; keyword search still works", data: { files: files.length } };
      },
      { auth: "any", query: Scope, response: { 200: ok(t.Object({ files: Int() })), ...errors(400, 401, 404, 429) }, detail: { summary: "Drop the vectors of a file or a knowledge base" } },
    );
}
