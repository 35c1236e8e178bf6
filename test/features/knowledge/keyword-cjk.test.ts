// Keyword search finds Chinese, Japanese and Korean words inside text written without spaces, as
// the keyword store indexes chunks with CJK text (pairs of characters), while Latin text is
// indexed and ranked as before; and through an upload, as ingestion writes the chunks.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openStorage } from "../../../src/platform/db/database";
import { migrate } from "../../../src/platform/db/migrate";
import { createKeywordStore, queryTerms, toFtsQuery } from "../../../src/features/knowledge/keyword-store";
import { queryShape } from "../../../src/features/knowledge/fusion";
import { createHarness, defaultWorkspaceId, uploadText } from "../../support/harness";

const dir = mkdtempSync(join(tmpdir(), "hearth-kw-cjk-"));
const storage = await openStorage(dir);
migrate(storage.db);
afterAll(async () => {
  await storage.close();
  rmSync(dir, { recursive: true, force: true });
});
const db = storage.sqlite;
db.exec(`INSERT INTO organizations VALUES ('o','o',0); INSERT INTO products (id, organization_id, name, created_at, updated_at) VALUES ('p','o','p',0,0);
  INSERT INTO knowledge_bases (id, product_id, name, embedding_model, embedding_dim, created_at, updated_at) VALUES ('kb','p','kb','m',3,0,0);
  INSERT INTO knowledge_files (id, knowledge_base_id, product_id, name, format, mime_type, size, sha256, status, created_at, updated_at) VALUES ('f','kb','p','n','txt','t',1,'x','ready',0,0);`);
const store = createKeywordStore(db);
const insert = db.query<{ id: number }, [string, string]>(
  "INSERT INTO knowledge_chunks (file_id, knowledge_base_id, product_id, ordinal, text, headings, char_start, char_end, tokens) VALUES ('f','kb','p',0,?,?,0,1,1) RETURNING id",
);
/** Stores chunks as ingestion does: the rows, then their pair form in the same transaction. */
const put = <T extends (string | [text: string, headings: string[]])[]>(...chunks: T) =>
  db.transaction(() => {
    const ids = chunks.map((c) => (typeof c === "string" ? insert.get(c, "[]")! : insert.get(c[0], JSON.stringify(c[1]))!).id);
    store.written(ids);
    return ids as { [K in keyof T]: number };
  })();
const found = (query: string, k = 10) => store.search(["kb"], query, k).map((h) => h.chunkId);

const [zhDb, zhLibrary, zhMixed] = put("这是一个数据库系统，用于存储用户数据。", "图书馆每天早上九点开门，周末也开放。", "我们使用Python进行数据分析和机器学习。");
const [jaText, jaKana, jaHalf, jaHeading] = put(
  "日本語のテキストを検索します。結果は一覧に表示されます。",
  "カタカナのデータベースとひらがなの説明があります。",
  "ﾃﾞｰﾀﾍﾞｰｽの設定を変更する。",
  ["手順は以下のとおりです。", ["バックアップの復元"]],
);
const [koText, koDb] = put("한국어 텍스트를 검색합니다. 결과가 목록에 표시됩니다.", "데이터베이스를 설정하는 방법을 설명합니다.");
const [catMid, catEnd, dog] = put("我的猫很可爱。", "我有一只猫", "狗很可爱。");
const [latinCafe, latinCode, latinPython] = put("The café on Main Street opens at nine.", "Error ERR-4711 means the disk is full.", "Python data analysis with pandas.");

describe("CJK words inside text", () => {
  test("Chinese: a word inside a sentence, and a phrase", () => {
    // 数据库 is cut 数据|库, so the chunk that only says 数据 (data) comes too, after the one that has it as written.
    expect(found("数据库")).toEqual([zhDb, zhMixed]);
    expect(found("系统")).toEqual([zhDb]);
    expect(found("数据库系统")[0]).toBe(zhDb);
    expect(found("图书馆")).toEqual([zhLibrary]);
    expect(found("机器学习")).toEqual([zhMixed]);
    expect(found("电影院")).toEqual([]);
  });

  test("Japanese: kanji, katakana and hiragana words; half-width katakana; headings", () => {
    expect(found("日本語")).toEqual([jaText]);
    expect(found("テキスト")).toEqual([jaText]);
    expect(found("検索")).toEqual([jaText]);
    expect(found("ひらがな")).toEqual([jaKana]);
    expect(found("データベース").sort()).toEqual([jaKana, jaHalf].sort());
    expect(found("設定")).toEqual([jaHalf]);
    expect(found("バックアップ")).toEqual([jaHeading]);
    // A whole Japanese sentence as the query: the chunk that has it as written comes first.
    expect(found("日本語のテキストを検索")[0]).toBe(jaText);
  });

  test("Korean: a word whose particle differs, and a stem", () => {
    expect(found("텍스트")).toEqual([koText]);
    expect(found("검색")).toEqual([koText]);
    expect(found("데이터베이스가")).toEqual([koDb]);
  });

  test("one character: inside a run and at its end", () => {
    expect(found("猫").sort()).toEqual([catMid, catEnd].sort());
    expect(found("狗")).toEqual([dog]);
  });

  test("CJK mixed with Latin, in the text and in the query", () => {
    expect(found("Python").sort()).toEqual([zhMixed, latinPython].sort());
    expect(found("Python 数据分析")[0]).toBe(zhMixed);
    expect(found("用Python分析")[0]).toBe(zhMixed);
  });

  test("a Korean word is one term of the query (fusion weighs a query by its count of terms)", () => {
    expect(queryTerms("데이터베이스를 설정")).toEqual(['"데이" OR "이터" OR "터베" OR "베이" OR "이스" OR "스를"', '"설정"']);
    expect(queryShape("데이터베이스를 설정하는 방법")).toBe("lookup");
  });

  test("a particle alone is looked up only when the query has nothing else", () => {
    expect(toFtsQuery("の 設定")).toBe('"設定"');
    expect(found("の").length).toBeGreaterThan(0);
  });
});

describe("Latin text as before", () => {
  test("diacritics folded, identifiers kept whole, stop words dropped", () => {
    expect(found("cafe")).toEqual([latinCafe]);
    expect(found("ERR-4711")).toEqual([latinCode]);
    expect(toFtsQuery("How do I reset the VPN token?")).toBe('"reset" OR "VPN" OR "token"');
    expect(toFtsQuery("ZX-9042 and api.v2")).toBe('"ZX 9042" OR "api v2"');
  });

  test("a chunk without CJK text keeps the index row its trigger wrote", () => {
    const before = db.query("SELECT count(*) AS n FROM knowledge_chunks_fts WHERE knowledge_chunks_fts MATCH 'python'").get();
    expect(store.written([latinPython])).toBe(0);
    expect(db.query("SELECT count(*) AS n FROM knowledge_chunks_fts WHERE knowledge_chunks_fts MATCH 'python'").get()).toEqual(before);
  });

  test("a deleted chunk leaves the index, CJK or not", () => {
    const [a, b] = put("临时数据库记录", "temporary zebra record");
    expect(found("临时")).toEqual([a]);
    expect(found("zebra")).toEqual([b]);
    db.run("DELETE FROM knowledge_chunks WHERE id IN (?, ?)", [a, b]);
    expect(found("临时")).toEqual([]);
    expect(found("zebra")).toEqual([]);
    const counts = db.query("SELECT (SELECT count(*) FROM knowledge_chunks_fts) AS fts, (SELECT count(*) FROM knowledge_chunks) AS chunks").get() as { fts: number; chunks: number };
    expect(counts.fts).toBe(counts.chunks);
  });
});

describe("through an upload", () => {
  test("an ingested file's Chinese, Japanese and Korean words are found by keyword search", async () => {
    const h = await createHarness();
    try {
      const jwt = await h.login();
      const ws = await defaultWorkspaceId(h, jwt);
      h.services.start();
      const text = "# 运维手册\n\n这是一个数据库系统的备份说明。\n\n日本語のテキストを検索します。\n\n한국어 텍스트를 검색합니다.";
      const id = await uploadText(h, jwt, ws, "manual.md", text);
      await h.services.jobs.idle();
      for (const query of ["数据库", "日本語", "텍스트", "运维"]) {
        const r = await h.call("POST", "/api/knowledge-base/embeddings", { token: jwt, body: { query, mode: "keyword", product_id: ws, top_k: 5 } });
        expect({ query, status: r.status, files: r.body.data.map((hit: { file_id: string }) => hit.file_id) }).toEqual({ query, status: 200, files: [id] });
      }
    } finally {
      await h.close();
    }
  }, 60_000);
});
