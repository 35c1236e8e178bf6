// Migration 0017 on a database written before it: Latin text is found and ranked as before at once,
// the older chunks' CJK text after the keyword store indexes them again; a kill -9 during the
// migration or during that indexing leaves a database that opens, searches and finishes the work.
import { afterAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { drizzle } from "drizzle-orm/bun-sqlite";
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bundledMigrations, migrate } from "../../../src/platform/db/migrate";
import { migrationJournal } from "../../../src/platform/db/migrations/index";
import { createKeywordStore } from "../../../src/features/knowledge/keyword-store";

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

/** A database with every migration before 0017 and `chunks` stored by its triggers (the old keyword index). */
function oldDatabase(name: string, chunks: string[]): string {
  const path = join(dir, name);
  const sqlite = open(path);
  const db = drizzle(sqlite) as unknown as { dialect: { migrate(m: unknown[], s: unknown, c: object): void }; session: unknown };
  db.dialect.migrate(bundledMigrations().slice(0, BEFORE), db.session, {});
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

const reindexAll = (sqlite: Database) => {
  const store = createKeywordStore(sqlite);
  let cjk = 0;
  for (let n = store.reindexOlder(7); n !== null; n = store.reindexOlder(7)) cjk += n;
  return cjk;
};

const indexHealthy = (sqlite: Database) => {
  expect(sqlite.query("PRAGMA integrity_check").get()).toEqual({ integrity_check: "ok" });
  sqlite.run("INSERT INTO knowledge_chunks_fts(knowledge_chunks_fts) VALUES ('integrity-check')");
  const n = sqlite.query("SELECT (SELECT count(*) FROM knowledge_chunks_fts) AS fts, (SELECT count(*) FROM knowledge_chunks) AS chunks").get() as { fts: number; chunks: number };
  expect(n.fts).toBe(n.chunks);
};

describe("migration 0017 on an existing database", () => {
  test("Latin text found and ranked as before at once; older CJK chunks found once indexed again", () => {
    const chunks = [
      ...Array.from({ length: 300 }, (_, i) => latinChunk(4 + (i % 13))),
      "这是一个数据库系统，用于存储用户数据。",
      "日本語のテキストを検索します。",
      "한국어 텍스트를 검색합니다.",
      "We run Python进行数据分析 every night.",
    ];
    const sqlite = open(oldDatabase("existing.db", chunks));
    const store = createKeywordStore(sqlite);
    const queries = ["backup", "firewall subnet alert", "refund the invoice", "cafe", "resume night"];
    const before = queries.map((q) => store.search(["kb"], q, 50));
    expect(store.search(["kb"], "数据库", 10)).toEqual([]); // the defect: a CJK run was one token

    migrate(drizzle(sqlite) as never);
    // The same hits with the same BM25 scores: the same tokens in an index of the same chunks.
    expect(queries.map((q) => store.search(["kb"], q, 50))).toEqual(before);
    expect(sqlite.query("SELECT done_through, up_to FROM knowledge_keyword_reindex").all()).toEqual([{ done_through: 0, up_to: chunks.length }]);

    expect(reindexAll(sqlite)).toBe(4);
    expect(sqlite.query("SELECT count(*) AS n FROM knowledge_keyword_reindex").get()).toEqual({ n: 0 });
    const ids = (q: string) => store.search(["kb"], q, 10).map((h) => h.chunkId);
    expect(ids("数据库")[0]).toBe(301);
    expect(ids("日本語")).toEqual([302]);
    expect(ids("텍스트")).toEqual([303]);
    expect(ids("数据分析")[0]).toBe(304);
    expect(ids("Python")).toEqual([304]);
    expect(store.search(["kb"], "backup", 50).length).toBe(50);
    indexHealthy(sqlite);
    sqlite.close();
  });

  test("a new database has nothing to index again", () => {
    const sqlite = open(join(dir, "new.db"));
    migrate(drizzle(sqlite) as never);
    expect(sqlite.query("SELECT count(*) AS n FROM knowledge_keyword_reindex").get()).toEqual({ n: 0 });
    expect(createKeywordStore(sqlite).reindexOlder(10)).toBeNull();
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
    expect(migrated(sqlite)).toBe(BEFORE + 1);
    expect(reindexAll(sqlite)).toBe(50);
    expect(store.search(["kb"], "备份", 100).length).toBe(50);
    indexHealthy(sqlite);
    sqlite.close();
  }, 120_000);

  test("kill -9 while older chunks are indexed again: it resumes where it stopped, nothing lost or twice", async () => {
    const chunks = Array.from({ length: 3000 }, (_, i) => (i % 3 === 0 ? latinChunk(20) : zhChunk()));
    const path = oldDatabase("killed-reindex.db", chunks);
    const setup = open(path);
    migrate(drizzle(setup) as never);
    setup.close();

    const child = Bun.spawn([process.execPath, CHILD, "reindex", path], { stdout: "pipe", stderr: "pipe" });
    await until(child.stdout, "slice", 5);
    child.kill("SIGKILL");
    await child.exited;

    const sqlite = open(path);
    const left = sqlite.query("SELECT done_through, up_to FROM knowledge_keyword_reindex").get() as { done_through: number; up_to: number };
    expect(left.done_through).toBeGreaterThan(0);
    expect(left.done_through).toBeLessThan(left.up_to);
    indexHealthy(sqlite); // every chunk has its one row: the pair form or, not reached yet, the text as it is
    reindexAll(sqlite);
    const store = createKeywordStore(sqlite);
    expect(store.search(["kb"], "备份", 5000).length).toBe(2000);
    expect(store.search(["kb"], "snapshot", 5000).length).toBeGreaterThan(0);
    indexHealthy(sqlite);
    sqlite.close();
  }, 120_000);
});
