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
 * (ERR-4711, foo.bar) kept together as a phrase, stop words dropped (unless nothing else is left)
 * except in capitals.
 */
export function queryTerms(text: string): string[] {
  const terms = text
    .split(/\s+/)
    .map((word) => word.match(/[\p{L}\p{N}_]+/gu)?.join(" "))
    .filter((t): t is string => Boolean(t))
    .slice(0, 64);
  // A stop word written in capitals is a keyword of the documents' language (NULLS NOT DISTINCT, WITH GRANT OPTION).
  const topical = terms.filter((t) => t.includes(" ") || !STOP_WORDS.has(t.toLowerCase()) || /^[A-Z]{2,}$/.test(t));
  return [...new Set(topical.length ? topical : terms)];
}

/** Turns free text into a safe FTS5 query: its terms each quoted (no operator injection), ORed. */
export function toFtsQuery(text: string): string | null {
  const terms = queryTerms(text);
  return terms.length ? terms.map((t) => `"${t}"`).join(" OR ") : null;
}

export function createKeywordStore(sqlite: Database) {
  // Every match is ranked (BM25 reads only the index), then checked against the scope in rank
  // order until k are in it: the subquery runs as a co-routine, so the check stops at the k-th hit.
  // Checking every match first (a join on the chunk rows) read a row per match, which at 100k
  // chunks was most of a query's time. BM25 does not depend on the scope, so the hits are the
  // same; ties go to the lower chunk id. (LIMIT -1 keeps SQLite from flattening the subquery.)
  const ranked = (marks: string) =>
    sqlite.query<{ id: number; rank: number }, (string | number)[]>(
      `SELECT t.id AS id, t.rank AS rank
         FROM (SELECT rowid AS id, bm25(knowledge_chunks_fts) AS rank FROM knowledge_chunks_fts
                WHERE knowledge_chunks_fts MATCH ? ORDER BY rank, rowid LIMIT -1) t
        WHERE EXISTS (SELECT 1 FROM knowledge_chunks c INDEXED BY knowledge_chunks_kb_idx
                       WHERE c.knowledge_base_id IN (${marks}) AND c.id = t.id)
        ORDER BY t.rank, t.id LIMIT ?`,
    );

  return {
    search(knowledgeBaseIds: string[], text: string, k: number): KeywordHit[] {
      const query = toFtsQuery(text);
      if (!query || knowledgeBaseIds.length === 0 || k < 1) return [];
      const marks = knowledgeBaseIds.map(() => "?").join(", ");
      return ranked(marks)
        .all(query, ...knowledgeBaseIds, k)
        .map((r) => ({ chunkId: r.id, score: -r.rank }));
    },
  };
}

export type KeywordStore = ReturnType<typeof createKeywordStore>;
