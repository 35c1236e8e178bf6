// Migrations 0017 and 0018 on a database written before them: Latin text is found and ranked as
// before at once, the older chunks' CJK text once the keyword store has indexed the backlog; a
// kill -9 during the migration or during that indexing leaves a database that opens, searches and
// finishes the work. Also from 0017, whose keyword store indexed CJK chunks twice.
import { afterAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { drizzle } from "drizzle-orm/bun-sqlite";
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bundledMigrations, migrate } from "../../../src/platform/db/migrate";
import { migrationJournal } from "../../../src/platform/db/migrations/index";
import { createKeywordStore } from "../../../src/features/knowledge/keyword-store";
import { indexForm } from "../../../src/features/knowledge/keyword-text";

const dir = mkdtempSync(join(tmpdir(), "hearth-kw-migration-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const BEFORE = migrationJournal.entries.findIndex((e) => e.tag === "0017_knowledge_keywords_cjk");
const CHILD = join(import.meta.dir, "keyword-migration-child.ts");

const open = (path: string) => {
  const sqlite = new Database(path);
  sqlite.exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON; PRAGMA busy_timeout = 5000");
  return sqlite;
};
const migrated = (sqlite: Database) => (sqlite.query("SELECT count(*) AS n FROM __drizzle_migrations").get() as { n: number }).n;

/** A database with every migration before `upTo` (0017) and `chunks` stored by its triggers (the old keyword index). */
function oldDatabase(name: string, chunks: string[], upTo = BEFORE): string {
  const path = join(dir, name);
  const sqlite = open(path);
  const db = drizzle(sqlite) as unknown as { dialect: { migrate(m: unknown[], s: unknown, c: object): void }; session: unknown };
  db.dialect.migrate(bundledMigrations().slice(0, upTo), db.session, {});
  sqlite.exec(`INSERT INTO organizations VALUES ('o','o',0); INSERT INTO products (id, organization_id, name, created_at, updated_at) VALUES ('p','o','p',0,0);
    INSERT INTO knowledge_bases (id, product_id, name, embedding_model, embedding_dim, created_at, updated_at) VALUES ('kb','p','kb','m',3,0,0);
    INSERT INTO knowledge_files (id, knowledge_base_id, product_id, name, format, mime_type, size, sha256, status, created_at, updated_at) VALUES ('f','kb','p','n','txt','t',1,'x','ready',0,0);`);
  const insert = sqlite.query("INSERT INTO knowledge_chunks (file_id, knowledge_base_id, product_id, ordinal, text, headings, char_start, char_end, tokens) VALUES ('f','kb','p',?,?,'[]',0,1,1)");
  sqlite.transaction(() => chunks.forEach((text, i) => insert.run(i, text)))();
  sqlite.close();
  return path;
}

let seed = 5;
const pick = <T>(list: T[]) => list[Math.floor(((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31) * list.length)]!;
const LATIN = "backup restore snapshot firewall subnet invoice refund laptop alert release the team checks every night café résumé".split(" ");
const ZH = ["数据库", "系统", "备份", "用户", "配置", "网络", "服务器", "文件", "安全", "日志"];
const latinChunk = (n: number) => Array.from({ length: n }, () => pick(LATIN)).join(" ");
const zhChunk = () => `这是备份和${Array.from({ length: 12 }, () => pick(ZH)).join("和")}的说明。`;

const until = (stdout: ReadableStream<Uint8Array>, line: string, count = 1) => {
  const reader = stdout.getReader();
  let text = "";
  return (async () => {
    while (text.split("\n").filter((l) => l === line).length < count) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`the child ended before printing ${line} ×${count}: ${text}`);
      text += new TextDecoder().decode(value);
    }
    reader.releaseLock();
    return text;
  })();
};

const indexBacklog = (sqlite: Database) => {
  const store = createKeywordStore(sqlite);
  let indexed = 0;
  for (let n = store.indexBacklog(7); n > 0; n = store.indexBacklog(7)) indexed += n;
  return indexed;
};
const listed = (sqlite: Database) => (sqlite.query("SELECT count(*) AS n FROM knowledge_keyword_backlog").get() as { n: number }).n;

/** Every chunk is in the index or in the backlog, once; the index is sound. */
const indexHealthy = (sqlite: Database) => {
  expect(sqlite.query("PRAGMA integrity_check").get()).toEqual({ integrity_check: "ok" });
  sqlite.run("INSERT INTO knowledge_chunks_fts(knowledge_chunks_fts) VALUES ('integrity-check')");
  const n = sqlite.query("SELECT (SELECT count(*) FROM knowledge_chunks_fts) AS fts, (SELECT count(*) FROM knowledge_chunks) AS chunks").get() as { fts: number; chunks: number };
  const both = sqlite.query("SELECT count(*) AS n FROM knowledge_keyword_backlog WHERE chunk_id IN (SELECT rowid FROM knowledge_chunks_fts)").get() as { n: number };
  expect({ indexed: n.fts + listed(sqlite), both: both.n }).toEqual({ indexed: n.chunks, both: 0 });
};

describe("migrations 0017 and 0018 on an existing database", () => {
  const LATIN_QUERIES = ["backup", "firewall subnet alert", "refund the invoice", "cafe", "resume night"];

  test("Latin text: the same hits with the same BM25 scores right after the migration", () => {
    const sqlite = open(oldDatabase("latin.db", Array.from({ length: 300 }, (_, i) => latinChunk(4 + (i % 13)))));
    const store = createKeywordStore(sqlite);
    const before = LATIN_QUERIES.map((q) => store.search(["kb"], q, 50));
    migrate(drizzle(sqlite) as never);
    expect(LATIN_QUERIES.map((q) => store.search(["kb"], q, 50))).toEqual(before);
    expect(listed(sqlite)).toBe(0);
    indexHealthy(sqlite);
    sqlite.close();
  });

  test("older CJK chunks are found once the backlog is indexed; the others all along", () => {
    const chunks = [
      ...Array.from({ length: 300 }, (_, i) => latinChunk(4 + (i % 13))),
      "这是一个数据库系统，用于存储用户数据。",
      "日本語のテキストを検索します。",
      "한국어 텍스트를 검색합니다.",
      "We run Python进行数据分析 every night.",
    ];
    const sqlite = open(oldDatabase("mixed.db", chunks));
    const store = createKeywordStore(sqlite);
    // Every match (BM25 shifts a little as the CJK chunks leave the index and come back in pairs).
    const top = () => LATIN_QUERIES.map((q) => store.search(["kb"], q, 1000).map((h) => h.chunkId).sort((a, b) => a - b));
    const before = top();
    expect(store.search(["kb"], "数据库", 10)).toEqual([]); // the defect: a CJK run was one token

    migrate(drizzle(sqlite) as never);
    // Until its turn in the backlog a CJK chunk is not found at all, its Latin words (night) neither.
    expect(top()).toEqual(before.map((ids) => ids.filter((id) => id !== 304)));
    expect(sqlite.query("SELECT chunk_id FROM knowledge_keyword_backlog").values().flat()).toEqual([301, 302, 303, 304]);
    indexHealthy(sqlite);

    expect(indexBacklog(sqlite)).toBe(4);
    expect(listed(sqlite)).toBe(0);
    const ids = (q: string) => store.search(["kb"], q, 10).map((h) => h.chunkId);
    expect(ids("数据库")[0]).toBe(301);
    expect(ids("日本語")).toEqual([302]);
    expect(ids("텍스트")).toEqual([303]);
    expect(ids("数据分析")[0]).toBe(304);
    expect(ids("Python")).toEqual([304]);
    expect(top()).toEqual(before);
    indexHealthy(sqlite);
    sqlite.close();
  });

  test("0019: text 0018's triggers did not count as CJK (half-width katakana, compatibility and extension-B ideographs) is indexed in pairs and found", () => {
    // Before: indexed as it is, looked up as pairs: never found (upgrade probe r3).
    const chunks = ["Catalog: ﾃﾞｰﾀﾍﾞｰｽ ｻｰﾊﾞｰ ｶﾀﾛｸﾞ", "這是備份的說明：豈 and 𠀋 stand here", "plain English text", "这是一个数据库系统。"];
    const sqlite = open(oldDatabase("halfwidth.db", chunks, 19));
    const store = createKeywordStore(sqlite);
    indexBacklog(sqlite); // 0018's own backlog (the Chinese chunk)
    const ids = (q: string) => store.search(["kb"], q, 10).map((h) => h.chunkId);
    expect(ids("データベース")).toEqual([]);
    migrate(drizzle(sqlite) as never);
    expect(sqlite.query("SELECT chunk_id FROM knowledge_keyword_backlog").values().flat()).toEqual([1]);
    indexHealthy(sqlite);
    expect(indexBacklog(sqlite)).toBe(1);
    expect(ids("データベース")).toEqual([1]);
    expect(ids("ｻｰﾊﾞｰ")).toEqual([1]);
    expect(ids("Catalog")).toEqual([1]);
    expect(ids("数据库")).toEqual([4]);
    expect(ids("English")).toEqual([3]);
    indexHealthy(sqlite);
    // New chunks of such text go the same way at once.
    sqlite.run("INSERT INTO knowledge_chunks (file_id, knowledge_base_id, product_id, ordinal, text, headings, char_start, char_end, tokens) VALUES ('f','kb','p',9,'ｶﾀﾛｸﾞ only','[]',0,1,1)");
    expect(listed(sqlite)).toBe(1);
    indexBacklog(sqlite);
    expect(ids("カタログ").sort()).toEqual([1, 5]);
    sqlite.close();
  });

  test("a new database has nothing to index", () => {
    const sqlite = open(join(dir, "new.db"));
    migrate(drizzle(sqlite) as never);
    expect(createKeywordStore(sqlite).indexBacklog(10)).toBe(0);
    sqlite.close();
  });

  test("from 0017, with some CJK chunks already in pair form: each chunk indexed once, in pair form", () => {
    const chunks = ["这是一个数据库系统。", "日本語のテキストを検索します。", "plain backup text", "한국어 텍스트를 검색합니다."];
    const sqlite = open(oldDatabase("from-0017.db", chunks, BEFORE + 1));
    // What 0017's keyword store did to the first one: its row replaced by the pair form.
    sqlite.run("DELETE FROM knowledge_chunks_fts WHERE rowid = 1");
    sqlite.run("INSERT INTO knowledge_chunks_fts(rowid, text, headings) VALUES (1, ?, '[]')", [indexForm(chunks[0]!)]);
    sqlite.run("UPDATE knowledge_keyword_reindex SET done_through = 1");
    migrate(drizzle(sqlite) as never);
    expect(sqlite.query("SELECT name FROM sqlite_master WHERE name = 'knowledge_keyword_reindex'").get()).toBeNull();
    indexHealthy(sqlite);
    expect(indexBacklog(sqlite)).toBe(3);
    const store = createKeywordStore(sqlite);
    expect(["数据库", "日本語", "backup", "텍스트"].map((q) => store.search(["kb"], q, 10).map((h) => h.chunkId))).toEqual([[1], [2], [3], [4]]);
    indexHealthy(sqlite);
    sqlite.close();
  });

  test("kill -9 during the migration: the database is as before it, and migrates at the next start", async () => {
    const chunks = [...Array.from({ length: 30_000 }, () => latinChunk(150)), ...Array.from({ length: 50 }, zhChunk)];
    const path = oldDatabase("killed-migration.db", chunks);
    // How long the migration takes here, on a copy, so that the kill lands in its middle.
    copyFileSync(path, `${path}.copy`);
    const copy = open(`${path}.copy`);
    const t0 = performance.now();
    migrate(drizzle(copy) as never);
    const took = performance.now() - t0;
    copy.close();

    const child = Bun.spawn([process.execPath, CHILD, "migrate", path], { stdout: "pipe", stderr: "pipe" });
    await until(child.stdout, "migrating");
    await Bun.sleep(took / 3);
    child.kill("SIGKILL");
    await child.exited;

    const sqlite = open(path);
    expect(migrated(sqlite)).toBe(BEFORE); // cut off: the migration's one transaction rolled back
    const store = createKeywordStore(sqlite);
    expect(store.search(["kb"], "snapshot", 5).length).toBe(5);
    migrate(drizzle(sqlite) as never);
    expect(migrated(sqlite)).toBe(migrationJournal.entries.length);
    expect(indexBacklog(sqlite)).toBe(50);
    expect(store.search(["kb"], "备份", 100).length).toBe(50);
    indexHealthy(sqlite);
    sqlite.close();
  }, 120_000);

  test("kill -9 while the backlog is indexed: it resumes where it stopped, nothing lost or twice", async () => {
    const chunks = Array.from({ length: 3000 }, (_, i) => (i % 3 === 0 ? latinChunk(20) : zhChunk()));
    const path = oldDatabase("killed-backlog.db", chunks);
    const setup = open(path);
    migrate(drizzle(setup) as never);
    setup.close();

    const child = Bun.spawn([process.execPath, CHILD, "backlog", path], { stdout: "pipe", stderr: "pipe" });
    await until(child.stdout, "slice", 5);
    child.kill("SIGKILL");
    await child.exited;

    const sqlite = open(path);
    expect(listed(sqlite)).toBeGreaterThan(0);
    expect(listed(sqlite)).toBeLessThan(2000 - 5 * 20 + 1);
    indexHealthy(sqlite);
    indexBacklog(sqlite);
    const store = createKeywordStore(sqlite);
    expect(store.search(["kb"], "备份", 5000).length).toBe(2000);
    expect(store.search(["kb"], "snapshot", 5000).length).toBeGreaterThan(0);
    indexHealthy(sqlite);
    sqlite.close();
  }, 120_000);
});
