// BM25 keyword search over the FTS5 index of chunks; the only place that writes FTS5 queries, and
// the index rows of chunks with CJK text, which SQL cannot compute (keyword-text.ts).
import type { Database } from "bun:sqlite";
import { indexForm, runQuery, splitRuns, type QueryTerm } from "./keyword-text";

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

/** A query's words beyond this many are ignored, and so are its FTS5 expressions. */
const MAX_TERMS = 64;

/**
 * The FTS5 expressions that a keyword search for free text ORs together: terms that the tokenizer
 * would split (ERR-4711, foo.bar) kept together as a phrase, stop words dropped (unless nothing
 * else is left) except in capitals, and CJK runs as keyword-text.ts looks them up.
 */
export function queryTerms(text: string): string[] {
  const terms: QueryTerm[] = [];
  for (const word of text.split(/\s+/).slice(0, MAX_TERMS)) {
    for (const piece of splitRuns(word)) {
      if (piece.cjk) {
        terms.push(...runQuery(piece.text));
        continue;
      }
      const t = piece.text.match(/[\p{L}\p{N}_]+/gu)?.join(" ");
      // A stop word written in capitals is a keyword of the documents' language (NULLS NOT DISTINCT, WITH GRANT OPTION).
      if (t) terms.push({ expr: `"${t}"`, topical: t.includes(" ") || !STOP_WORDS.has(t.toLowerCase()) || /^[A-Z]{2,}$/.test(t) });
    }
  }
  const topical = terms.filter((t) => t.topical);
  return [...new Set((topical.length ? topical : terms).map((t) => t.expr))].slice(0, MAX_TERMS);
}

/** Turns free text into a safe FTS5 query: its terms each quoted (no operator injection), ORed. */
export function toFtsQuery(text: string): string | null {
  const terms = queryTerms(text);
  return terms.length ? terms.join(" OR ") : null;
}

/**
 * The keyword index (contentless: a row is deleted by its rowid alone). The triggers of
 * knowledge_chunks index the text of chunks without CJK text as it is, and list the others in
 * knowledge_keyword_backlog (migration 0018); they are indexed here in their pair form
 * (keyword-text.ts), which SQL cannot compute: those an ingestion writes in the transaction that
 * writes them, those stored before the pair form by `indexBacklog`.
 */
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

  type Listed = { id: number; text: string | null; headings: string | null };
  // Prepared at first use (sqlite.query keeps them): a store may be made before the migrations ran.
  // A listed chunk that is gone (none should be: its delete trigger unlists it) is only unlisted.
  const listed = (where: string) => () =>
    sqlite.query<Listed, (string | number)[]>(
      `SELECT b.chunk_id AS id, c.text AS text, c.headings AS headings
         FROM knowledge_keyword_backlog b LEFT JOIN knowledge_chunks c ON c.id = b.chunk_id ${where}`,
    );
  const listedAmong = listed("WHERE b.chunk_id IN (SELECT value FROM json_each(?))");
  const listedFirst = listed("ORDER BY b.chunk_id LIMIT ?");
  const insert = () => sqlite.query<never, [number, string, string]>("INSERT INTO knowledge_chunks_fts(rowid, text, headings) VALUES (?, ?, ?)");
  const unlist = () => sqlite.query<never, [number]>("DELETE FROM knowledge_keyword_backlog WHERE chunk_id = ?");
  /** Indexes listed chunks in their pair form and takes them off the list; how many. */
  const index = (rows: Listed[]) => {
    for (const r of rows) {
      if (r.text !== null) insert().run(r.id, indexForm(r.text), indexForm(r.headings ?? ""));
      unlist().run(r.id);
    }
    return rows.length;
  };

  return {
    search(knowledgeBaseIds: string[], text: string, k: number): KeywordHit[] {
      const query = toFtsQuery(text);
      if (!query || knowledgeBaseIds.length === 0 || k < 1) return [];
      const marks = knowledgeBaseIds.map(() => "?").join(", ");
      return ranked(marks)
        .all(query, ...knowledgeBaseIds, k)
        .map((r) => ({ chunkId: r.id, score: -r.rank }));
    },
    /** Indexes the CJK chunks among those just written; in the transaction that wrote them. */
    written(chunkIds: number[]): number {
      return chunkIds.length ? index(listedAmong().all(JSON.stringify(chunkIds))) : 0;
    },
    /** Indexes up to `limit` listed chunks, the oldest first, in one transaction; how many (0: none is left). */
    indexBacklog(limit: number): number {
      return sqlite.transaction(() => index(listedFirst().all(limit)))();
    },
  };
}

export type KeywordStore = ReturnType<typeof createKeywordStore>;
