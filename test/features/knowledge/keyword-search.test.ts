// KeywordStore.search on a real FTS5 index: the same hits, in the same order, as ranking every match
// inside the scope, whether the scope holds most of the index, a small part of it, or ties.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openStorage } from "../../../src/platform/db/database";
import { migrate } from "../../../src/platform/db/migrate";
import { createKeywordStore, toFtsQuery } from "../../../src/features/knowledge/keyword-store";

const dir = mkdtempSync(join(tmpdir(), "hearth-kw-"));
const storage = await openStorage(dir);
migrate(storage.db);
afterAll(() => {
  storage.close();
  rmSync(dir, { recursive: true, force: true });
});

const db = storage.sqlite;
const WORDS = ["backup", "restore", "snapshot", "firewall", "subnet", "invoice", "refund", "laptop", "alert", "release"];
const FILLER = ["the", "team", "checks", "every", "night", "so", "that", "nothing", "breaks", "again"];
/** Kb "big" holds 90% of the chunks, "small" 1%, "rest" the others; texts repeat, so BM25 ties occur. */
const KBS = (i: number) => (i % 100 === 0 ? "small" : i % 10 === 0 ? "rest" : "big");

db.exec(`INSERT INTO organizations VALUES ('o','o',0); INSERT INTO products (id, organization_id, name, created_at, updated_at) VALUES ('p','o','p',0,0);`);
for (const kb of ["big", "small", "rest"]) {
  db.run(`INSERT INTO knowledge_bases (id, product_id, name, embedding_model, embedding_dim, created_at, updated_at) VALUES (?,'p',?,'m',3,0,0)`, [kb, kb]);
  db.run(`INSERT INTO knowledge_files (id, knowledge_base_id, product_id, name, format, mime_type, size, sha256, status, created_at, updated_at) VALUES (?,?,'p','n','txt','t',1,?,'ready',0,0)`, [`f-${kb}`, kb, kb]);
}
const insert = db.query(`INSERT INTO knowledge_chunks (id, file_id, knowledge_base_id, product_id, ordinal, text, headings, char_start, char_end, tokens) VALUES (?,?,?,'p',?,?,'[]',0,1,1)`);
db.transaction(() => {
  let seed = 11;
  const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  for (let i = 1; i <= 3000; i++) {
    const n = 4 + Math.floor(next() * 12);
    const text = Array.from({ length: n }, () => (next() < 0.25 ? WORDS[Math.floor(next() * WORDS.length)] : FILLER[Math.floor(next() * FILLER.length)])).join(" ");
    insert.run(i, `f-${KBS(i)}`, KBS(i), i, i % 7 === 0 ? "backup restore" : text); // every 7th chunk the same text: ties
  }
})();

/** Every match inside the scope ranked by BM25, ties to the lower id: what the store must return. */
const reference = (kbs: string[], text: string, k: number) =>
  db
    .query<{ id: number }, (string | number)[]>(
      `SELECT c.id AS id FROM knowledge_chunks_fts JOIN knowledge_chunks c ON c.id = knowledge_chunks_fts.rowid
        WHERE knowledge_chunks_fts MATCH ? AND c.knowledge_base_id IN (${kbs.map(() => "?").join(", ")})
        ORDER BY bm25(knowledge_chunks_fts), c.id LIMIT ?`,
    )
    .all(toFtsQuery(text)!, ...kbs, k)
    .map((r) => r.id);

const QUERIES = ["backup", "How do I restore a snapshot?", "firewall subnet alert", "refund the invoice", "laptop release night", "checks"];

describe("keyword store", () => {
  const store = createKeywordStore(db);

  test("the same hits in the same order as ranking every match in scope", () => {
    for (const scope of [["big"], ["small"], ["rest"], ["big", "small"], ["small", "rest"], ["big", "small", "rest"]]) {
      for (const q of QUERIES) {
        for (const k of [1, 5, 40, 100]) {
          expect({ scope, q, k, ids: store.search(scope, q, k).map((h) => h.chunkId) }).toEqual({ scope, q, k, ids: reference(scope, q, k) });
        }
      }
    }
  });

  test("scores are BM25, higher is better, best first", () => {
    const hits = store.search(["big"], "backup restore", 20);
    expect(hits.length).toBe(20);
    for (let i = 1; i < hits.length; i++) expect(hits[i]!.score).toBeLessThanOrEqual(hits[i - 1]!.score);
    expect(hits[0]!.score).toBeGreaterThan(0);
  });

  test("nothing outside the scope, nothing for an empty scope or query", () => {
    const owner = db.query<{ kb: string }, [number]>("SELECT knowledge_base_id AS kb FROM knowledge_chunks WHERE id = ?");
    for (const h of store.search(["small"], "backup alert", 100)) expect(owner.get(h.chunkId)!.kb).toBe("small");
    expect(store.search(["nowhere"], "backup", 10)).toEqual([]);
    expect(store.search([], "backup", 10)).toEqual([]);
    expect(store.search(["big"], "?!", 10)).toEqual([]);
    expect(store.search(["big"], "backup", 0)).toEqual([]);
  });
});
