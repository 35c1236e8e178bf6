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
 * Turns free text into a safe FTS5 query: every term quoted (no operator injection), terms that
 * the tokenizer would split (ERR-4711, foo.bar) kept together as a phrase, stop words dropped
 * (unless nothing else is left), alternatives ORed.
 */
export function toFtsQuery(text: string): string | null {
  const terms = text
    .split(/\s+/)
    .map((word) => word.match(/[\p{L}\p{N}_]+/gu)?.join(" "))
    .filter((t): t is string => Boolean(t))
    .slice(0, 64);
  const topical = terms.filter((t) => t.includes(" ") || !STOP_WORDS.has(t.toLowerCase()));
  const chosen = topical.length ? topical : terms;
  return chosen.length ? [...new Set(chosen)].map((t) => `"${t}"`).join(" OR ") : null;
}

/**
 * Matches ranked globally before the scope check: enough that, whenever the knowledge bases searched
 * hold a fair share of the index, the k best in scope are among them.
 */
const depthFor = (k: number) => Math.max(200, 20 * k);

export function createKeywordStore(sqlite: Database) {
  type Row = { id: number; rank: number; inScope: number };
  // Ranking every match costs little (FTS5 reads the doclists it already has); checking each match's
  // knowledge base costs a row read per match, which at 100k chunks was most of a query's time.
  // So the best `depth` matches are ranked first and only they are checked; when too few of them
  // are in scope the search checks every match instead. Both give the same hits in the same order:
  // BM25 scores do not depend on the scope, and ties go to the lower chunk id.
  const ranked = (marks: string) =>
    sqlite.query<Row, (string | number)[]>(
      `SELECT t.id AS id, t.rank AS rank,
              EXISTS (SELECT 1 FROM knowledge_chunks c INDEXED BY knowledge_chunks_kb_idx
                       WHERE c.knowledge_base_id IN (${marks}) AND c.id = t.id) AS inScope
         FROM (SELECT rowid AS id, bm25(knowledge_chunks_fts) AS rank FROM knowledge_chunks_fts
                WHERE knowledge_chunks_fts MATCH ? ORDER BY rank, rowid LIMIT ?) t
        ORDER BY t.rank, t.id`,
    );
  const filtered = (marks: string) =>
    sqlite.query<Row, (string | number)[]>(
      `SELECT rowid AS id, bm25(knowledge_chunks_fts) AS rank, 1 AS inScope FROM knowledge_chunks_fts
        WHERE knowledge_chunks_fts MATCH ?
          AND EXISTS (SELECT 1 FROM knowledge_chunks c INDEXED BY knowledge_chunks_kb_idx
                       WHERE c.knowledge_base_id IN (${marks}) AND c.id = knowledge_chunks_fts.rowid)
        ORDER BY rank, rowid LIMIT ?`,
    );

  return {
    search(knowledgeBaseIds: string[], text: string, k: number): KeywordHit[] {
      const query = toFtsQuery(text);
      if (!query || knowledgeBaseIds.length === 0 || k < 1) return [];
      const marks = knowledgeBaseIds.map(() => "?").join(", ");
      const depth = depthFor(k);
      const top = ranked(marks).all(...knowledgeBaseIds, query, depth);
      const inScope = top.filter((r) => r.inScope);
      const rows = inScope.length >= k || top.length < depth ? inScope.slice(0, k) : filtered(marks).all(query, ...knowledgeBaseIds, k);
      return rows.map((r) => ({ chunkId: r.id, score: -r.rank }));
    },
  };
}

export type KeywordStore = ReturnType<typeof createKeywordStore>;
