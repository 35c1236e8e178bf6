// A knowledge base's vectors as a caller manages them: their state per file, a re-embedding, dropping
// them (keyword search keeps working). The routes of /api/knowledge-base/embeddings call these.
import type { Principal } from "../../platform/auth/principal";
import type { KnowledgeEmbedder } from "./embedder";
import type { KnowledgeService } from "./service";
import type { VectorStore } from "./vector-store";

/** One file, or every file of a knowledge base. */
export type EmbeddingScope = { fileId?: string; knowledgeBaseId?: string };

export function createEmbeddingsService({ knowledge, embedder, vectors }: { knowledge: KnowledgeService; embedder: KnowledgeEmbedder; vectors: VectorStore }) {
  return {
    /** The embedder's state and, per file in scope, whether its vectors come from the current model. */
    async state(principal: Principal, scope: EmbeddingScope) {
      const files = knowledge.filesInScope(principal, scope);
      const status = await embedder.status();
      return {
        model: embedder.model,
        state: status.state,
        reason: status.reason,
        files: files.map((file) => ({ file, embedded: file.embeddingModel === embedder.model })),
      };
    },

    /**
     * Queues the ready files in scope for new vectors from the current model, and the failed ones
     * for a new ingestion (a retry); how many.
     */
    reembed: (principal: Principal, scope: EmbeddingScope): number => knowledge.reembed(knowledge.filesInScope(principal, scope)),

    /** Drops the vectors of the files in scope; how many files. */
    async drop(principal: Principal, scope: EmbeddingScope): Promise<number> {
      const files = knowledge.filesInScope(principal, scope);
      await knowledge.dropEmbeddings(files, (ids) => vectors.remove(ids));
      return files.length;
    },

    model: () => embedder.model,
  };
}

export type EmbeddingsService = ReturnType<typeof createEmbeddingsService>;
