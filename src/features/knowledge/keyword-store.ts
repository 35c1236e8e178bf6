// BM25 keyword search over the FTS5 index of chunks; the only place that writes FTS5 queries.
import type { Database } from "bun:sqlite";

export interface KeywordHit {
  chunkId: number;
  /** FTS5's bm25(): lower is better; negated here so that higher is better. */
  score: number;
}

/**
 * Words that carry no topic in an English question. Matching them lets BM25 return every
 * passage that says "how" or "the", and that noise pulled paraphrased questions down in hybrid
 * search (bench/fusion.ts measured it); identifiers and names are never in this list.
 */
const STOP_WORDS = new Set(
  ("a an and are as at be by can could do does did for from had has have how i if in is it its me my of on or our "
    + "should so than that the their them then there these they this to us was we were what when where which who "
    + "whom why will with would you your about into over under up down out any all some no not only also just "
    + "get got need needs want wants tell show find").split(" "),
);

/**
 * The terms of free text that a keyword search looks for: terms that the tokenizer would split
 * (ERR-4711, foo.bar) kept together as a phrase, stop words dropped (unless nothing else is left).
 */
export function queryTerms(text: string): string[] {
  const terms = text
    .split(/\s+/)
    .map((word) => word.match(/[\p{L}\p{N}_]+/gu)?.join(" "))
    .filter((t): t is string => Boolean(t))
    .slice(0, 64);
  const topical = terms.filter((t) => t.includes(" ") || !STOP_WORDS.has(t.toLowerCase()));
  return [...new Set(topical.length ? topical : terms)];
}

/** Turns free text into a safe FTS5 query: its terms each quoted (no operator injection), ORed. */
export function toFtsQuery(text: string): string | null {
  const terms = queryTerms(text);
  return terms.length ? terms.map((t) => `"${t}"`).join(" OR ") : null;
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
