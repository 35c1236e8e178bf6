// The vector store on real sqlite-vec: partitions, nearest first, and no orphans after deletes.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openStorage } from "../../../src/platform/db/database";
import { migrate } from "../../../src/platform/db/migrate";
import { createVectorStore } from "../../../src/features/knowledge/vector-store";

const dir = mkdtempSync(join(tmpdir(), "hearth-vec-"));
const storage = await openStorage(dir);
migrate(storage.db);
afterAll(() => {
  storage.close();
  rmSync(dir, { recursive: true, force: true });
});

const unit = (...v: number[]) => {
  const n = Math.hypot(...v);
  return new Float32Array(v.map((x) => x / n));
};

describe("vector store", () => {
  test("searches nearest first inside the named knowledge bases only", () => {
    const store = createVectorStore(storage.sqlite);
    store.put(3, [
      { chunkId: 1, knowledgeBaseId: "kb-a", vector: unit(1, 0, 0) },
      { chunkId: 2, knowledgeBaseId: "kb-a", vector: unit(0, 1, 0) },
      { chunkId: 3, knowledgeBaseId: "kb-b", vector: unit(1, 0.1, 0) },
    ]);
    expect(store.search(3, ["kb-a"], unit(1, 0.05, 0), 5).map((h) => h.chunkId)).toEqual([1, 2]);
    expect(store.search(3, ["kb-a", "kb-b"], unit(1, 0.1, 0), 2).map((h) => h.chunkId)).toEqual([3, 1]);
    expect(store.search(3, ["kb-c"], unit(1, 0, 0), 5)).toEqual([]);
    expect(store.dims()).toEqual([3]);
    expect(() => store.put(3, [{ chunkId: 9, knowledgeBaseId: "kb-a", vector: unit(1, 0) }])).toThrow(/2 dimensions/);
  });

  test("deleting chunks deletes their vectors through the trigger", () => {
    const db = storage.sqlite;
    db.exec(`INSERT INTO organizations VALUES ('o','o',0); INSERT INTO products (id, organization_id, name, created_at, updated_at) VALUES ('p','o','p',0,0);
      INSERT INTO knowledge_bases (id, product_id, name, embedding_model, embedding_dim, created_at, updated_at) VALUES ('kb','p','k','m',3,0,0);
      INSERT INTO knowledge_files (id, knowledge_base_id, product_id, name, format, mime_type, size, sha256, status, created_at, updated_at) VALUES ('f','kb','p','n','txt','t',1,'s','ready',0,0);
      INSERT INTO knowledge_chunks (id, file_id, knowledge_base_id, product_id, ordinal, text, headings, char_start, char_end, tokens) VALUES (100,'f','kb','p',0,'x','[]',0,1,1);`);
    const store = createVectorStore(db);
    store.put(3, [{ chunkId: 100, knowledgeBaseId: "kb", vector: unit(0, 0, 1) }]);
    expect(store.count(3, "kb")).toBe(1);
    db.exec("DELETE FROM products WHERE id = 'p'");
    expect(store.count(3, "kb")).toBe(0);
  });
});
