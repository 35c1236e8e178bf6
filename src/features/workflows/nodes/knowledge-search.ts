// The knowledge.search node: the workspace's knowledge search, as the workflow's workspace.
import { t } from "elysia";
import type { KnowledgeSearch } from "../../knowledge/search";
import { workspacePrincipal } from "./principal";
import { literal, type NodeType } from "./node-type";

/** Knowledge bases of `ids` (literal ones) that are not the workspace's; a message naming them, or undefined. */
export function foreignBases(ids: unknown, ofWorkspace: string[]): string | undefined {
  const foreign = (Array.isArray(ids) ? ids : []).filter((id) => literal(id) && !ofWorkspace.includes(id.toLowerCase()));
  return foreign.length ? `knowledge_base_ids: ${foreign.join(", ")} ${foreign.length === 1 ? "is not a knowledge base" : "are not knowledge bases"} of this workspace` : undefined;
}

export function knowledgeSearchNode(search: KnowledgeSearch, basesOf: (productId: string) => string[]): NodeType<{ query: string; top_k?: number; mode?: "vector" | "keyword" | "hybrid"; knowledge_base_ids?: string[] }> {
  return {
    type: "knowledge.search",
    description: "Searches the workspace's knowledge bases; output {results: [{file_name, page, text, score, ...}]}.",
    config: t.Object(
      {
        query: t.String({ minLength: 1, maxLength: 4000 }),
        top_k: t.Optional(t.Integer({ minimum: 1, maximum: 50, default: 5 })),
        mode: t.Optional(t.UnionEnum(["vector", "keyword", "hybrid"], { default: "hybrid" })),
        knowledge_base_ids: t.Optional(t.Array(t.String({ format: "uuid" }), { maxItems: 50 })),
      },
      { additionalProperties: false },
    ),
    references: (c, w) => (c.knowledge_base_ids ? foreignBases(c.knowledge_base_ids, basesOf(w.productId)) : undefined),
    async run(c, ctx) {
      const hits = await search.search(workspacePrincipal(ctx), {
        query: c.query,
        productId: ctx.productId,
        knowledgeBaseIds: c.knowledge_base_ids,
        topK: c.top_k ?? 5,
        mode: c.mode ?? "hybrid",
      });
      return {
        output: {
          results: hits.map((h) => ({ chunk_id: h.chunkId, file_id: h.fileId, file_name: h.fileName, knowledge_base_id: h.knowledgeBaseId, page: h.page, headings: h.headings, text: h.text, score: h.score })),
        },
      };
    },
  };
}
