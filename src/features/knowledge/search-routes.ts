// /api/knowledge-base/embeddings: search (POST), embedding state (GET), re-embed (PUT), drop (DELETE).
import { Elysia, t } from "elysia";
import type { AuthPlugin } from "../../platform/auth/plugin";
import { errors, ok, Int } from "../../platform/http/schemas";
import { EmbeddingState, Scope, SearchBody, SearchResult } from "./model";
import type { EmbeddingsService } from "./embeddings";
import type { KnowledgeSearch } from "./search";

export function searchRoutes({ auth, search, embeddings }: { auth: AuthPlugin; search: KnowledgeSearch; embeddings: EmbeddingsService }) {
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
        const s = await embeddings.state(principal, { fileId: query.file_id, knowledgeBaseId: query.knowledge_base_id });
        return {
          success: true as const,
          data: {
            model: s.model,
            embedder: s.state,
            ...(s.reason ? { reason: s.reason } : {}),
            files: s.files.map(({ file, embedded }) => ({
              file_id: file.id,
              name: file.name,
              status: file.status,
              chunk_count: file.chunkCount,
              embedding_model: file.embeddingModel,
              embedded,
            })),
          },
        };
      },
      { auth: "any", query: Scope, response: { 200: ok(EmbeddingState), ...errors(400, 401, 404, 429) }, detail: { summary: "Embedding state of a knowledge base or a file" } },
    )
    .put(
      "/api/knowledge-base/embeddings",
      // The scope in the query (as GET and DELETE take it) or in a JSON body.
      ({ principal, body, query, set }) => {
        const queued = embeddings.reembed(principal, { fileId: body?.file_id ?? query.file_id, knowledgeBaseId: body?.knowledge_base_id ?? query.knowledge_base_id });
        set.status = 202;
        return { success: true as const, message: `Re-embedding ${queued} file(s) with ${embeddings.model()}`, data: { queued } };
      },
      { auth: "any:strict", query: Scope, body: t.Optional(Scope), response: { 202: ok(t.Object({ queued: Int() })), ...errors(400, 401, 404, 422, 429) }, detail: { summary: "Re-embed a file or a knowledge base" } },
    )
    .delete(
      "/api/knowledge-base/embeddings",
      async ({ principal, query }) => {
        const files = await embeddings.drop(principal, { fileId: query.file_id, knowledgeBaseId: query.knowledge_base_id });
        return { success: true as const, message: "Vectors dropped; keyword search still works", data: { files } };
      },
      { auth: "any", query: Scope, response: { 200: ok(t.Object({ files: Int() })), ...errors(400, 401, 404, 429) }, detail: { summary: "Drop the vectors of a file or a knowledge base" } },
    );
}
