// Knowledge's tool for agents and MCP: search_knowledge, cited passages with file, page and score.
import { t } from "elysia";
import { renderPassages, type ToolDef } from "../../platform/tools/registry";
import type { KnowledgeSearch } from "./search";

/** A passage is cut here: enough to answer from, small enough for several in one prompt. */
const EXCERPT_CHARS = 1200;

export function knowledgeTools(search: KnowledgeSearch): ToolDef<{ query: string; top_k?: number }>[] {
  return [
    {
      name: "search_knowledge",
      description:
        "Search the workspace's documents (handbooks, manuals, notes) for passages about a question. Describe what you need in natural language. " +
        "Returns numbered passages with file name, page and relevance score; cite them as [n]. Use top_k 3 for a focused answer, 10 to explore.",
      input: t.Object(
        {
          query: t.String({ minLength: 1, maxLength: 2000, description: "What to look for, in natural language" }),
          top_k: t.Optional(t.Integer({ minimum: 1, maximum: 20, default: 5, description: "How many passages (3 focused, 10 broad)" })),
        },
        { additionalProperties: false },
      ),
      async run(args, ctx) {
        const hits = await search.searchBest(ctx.principal, { query: args.query, productId: ctx.productId, knowledgeBaseIds: ctx.knowledgeBaseIds?.length ? ctx.knowledgeBaseIds : undefined, topK: args.top_k ?? 5 });
        const sources = hits.map((h, i) => ({ index: i + 1, file_id: h.fileId, file_name: h.fileName, chunk_id: h.chunkId, page: h.page, score: Math.round(h.score * 1000) / 1000, excerpt: h.text.slice(0, EXCERPT_CHARS) }));
        return { text: renderPassages(sources), data: { results: sources }, sources };
      },
    },
  ];
}
