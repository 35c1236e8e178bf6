// BM25 keyword search over the FTS5 index of chunks; the only place that writes FTS5 queries, and
// the index rows of chunks with CJK text, which SQL cannot compute (keyword-text.ts).
import type { Database } from "bun:sqlite";
import { hasCjk, indexForm, runQuery, splitRuns, type QueryTerm } from "./keyword-text";

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
 * Chunks looked at per CJK chunk indexed again in a slice of `reindexOlder`: one costs ~0.4 ms, a
 * chunk without CJK text ~5 µs to look at, so a slice of Latin text is not a commit per few rows.
 */
const LOOK_AHEAD = 10;

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
 * knowledge_chunks index every chunk's text as it is; the chunks with CJK text are indexed again
 * here in their pair form (keyword-text.ts), which SQL cannot compute: those an ingestion writes in
 * the transaction that writes them, those stored before the pair form by `reindexOlder` (the range
 * that migration 0017 left in knowledge_keyword_reindex). Until then such a chunk is found as before.
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

  type Row = { id: number; text: string; headings: string };
  // Prepared at first use (sqlite.query keeps them): a store may be made before the migrations ran.
  const chunksById = () => sqlite.query<Row, [string]>("SELECT id, text, headings FROM knowledge_chunks WHERE id IN (SELECT value FROM json_each(?))");
  const older = () => sqlite.query<{ from: number; to: number }, []>('SELECT done_through AS "from", up_to AS "to" FROM knowledge_keyword_reindex');
  const olderSlice = () => sqlite.query<Row, [number, number, number]>("SELECT id, text, headings FROM knowledge_chunks WHERE id > ? AND id <= ? ORDER BY id LIMIT ?");
  const advance = () => sqlite.query<never, [number]>("UPDATE knowledge_keyword_reindex SET done_through = ?");
  const finish = () => sqlite.query("DELETE FROM knowledge_keyword_reindex");
  const remove = () => sqlite.query<never, [number]>("DELETE FROM knowledge_chunks_fts WHERE rowid = ?");
  const insert = () => sqlite.query<never, [number, string, string]>("INSERT INTO knowledge_chunks_fts(rowid, text, headings) VALUES (?, ?, ?)");

  const cjkOf = (rows: Row[]) => rows.filter((r) => hasCjk(r.text) || hasCjk(r.headings));
  /** Indexes `rows` (CJK chunks) in their pair form. All deletes first: a delete among inserts flushes them. */
  const pairForm = (rows: Row[]) => {
    for (const r of rows) remove().run(r.id);
    for (const r of rows) insert().run(r.id, indexForm(r.text), indexForm(r.headings));
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
    /** Indexes the CJK chunks among those just written in their pair form; in the transaction that wrote them. */
    written(chunkIds: number[]): number {
      return chunkIds.length ? pairForm(cjkOf(chunksById().all(JSON.stringify(chunkIds)))) : 0;
    },
    /**
     * Indexes the next `limit` CJK chunks stored before the pair form, looking at no more than
     * LOOK_AHEAD times as many chunks, in one transaction that also records how far it got (a crash
     * redoes no more than the slice it cut off). Null once none is left; else how many it indexed.
     */
    reindexOlder(limit: number): number | null {
      return sqlite.transaction(() => {
        const range = older().get();
        if (!range) return null;
        const rows = olderSlice().all(range.from, range.to, limit * LOOK_AHEAD);
        if (rows.length === 0) {
          finish().run();
          return null;
        }
        const cjk = cjkOf(rows).slice(0, limit);
        advance().run(cjk.length === limit ? cjk.at(-1)!.id : rows.at(-1)!.id);
        return pairForm(cjk);
      })();
    },
  };
}

export type KeywordStore = ReturnType<typeof createKeywordStore>;
