// BM25 keyword search over the FTS5 index of chunks; the only place that writes FTS5 queries.
import type { Database } from "bun:sqlite";

export interface KeywordHit {
  chunkId: number;
  /** FTS5's bm25(): lower is better; negated here so that higher is better. */
  score: number;
}

/**
 * Turns free text into a safe FTS5 query: every term quoted (no operator injection), terms that
 * the tokenizer would split (ERR-4711, foo.bar) kept together as a phrase, alternatives ORed.
 */
export function toFtsQuery(text: string): string | null {
  const terms = text
    .split(/\s+/)
    .map((word) => word.match(/[\p{L}\p{N}_]+/gu)?.join(" "))
    .filter((t): t is string => Boolean(t))
    .slice(0, 64);
  return terms.length ? [...new Set(terms)].map((t) => `"${t}"`).join(" OR ") : null;
}

export function createKeywordStore(sqlite: Database) {
  return {
    search(knowledgeBaseIds: string[], text: string, k: number): KeywordHit[] {
      const query = toFtsQuery(text);
      if (!query || knowledgeBaseIds.length === 0) return [];
      const marks = knowledgeBaseIds.map(() => "?").join(", ");
      return sqlite
        .query<{ id: number; rank: number }, (string | number)[]>(
          `SELECT c.id AS id, bm25(knowledge_chunks_fts) AS rank
             FROM knowledge_chunks_fts
             JOIN knowledge_chunks c ON c.id = knowledge_chunks_fts.rowid
            WHERE knowledge_chunks_fts MATCH ? AND c.knowledge_base_id IN (${marks})
            ORDER BY rank LIMIT ?`,
        )
        .all(query, ...knowledgeBaseIds, k)
        .map((r) => ({ chunkId: r.id, score: -r.rank }));
    },
  };
}

export type KeywordStore = ReturnType<typeof createKeywordStore>;
