// The vector store on real sqlite-vec: partitions, nearest first, no orphans after deletes, and
// in-memory indexes that agree with sqlite-vec's exact scan and never serve stale vectors.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openStorage } from "../../../src/platform/db/database";
import { migrate } from "../../../src/platform/db/migrate";
import { createVectorStore } from "../../../src/features/knowledge/vector-store";
import { VectorIndex } from "../../../src/features/knowledge/vector-index";

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

  test("deleting a chunk also takes its vector out of a loaded index", () => {
    const db = storage.sqlite;
    db.exec(`INSERT INTO organizations VALUES ('o2','o2',0); INSERT INTO products (id, organization_id, name, created_at, updated_at) VALUES ('p2','o2','p',0,0);
      INSERT INTO knowledge_bases (id, product_id, name, embedding_model, embedding_dim, created_at, updated_at) VALUES ('kb2','p2','k','m',3,0,0);
      INSERT INTO knowledge_files (id, knowledge_base_id, product_id, name, format, mime_type, size, sha256, status, created_at, updated_at) VALUES ('f2','kb2','p2','n','txt','t',1,'s','ready',0,0);
      INSERT INTO knowledge_chunks (id, file_id, knowledge_base_id, product_id, ordinal, text, headings, char_start, char_end, tokens) VALUES (200,'f2','kb2','p2',0,'x','[]',0,1,1), (201,'f2','kb2','p2',1,'y','[]',0,1,1);`);
    const store = createVectorStore(db);
    store.put(3, [
      { chunkId: 200, knowledgeBaseId: "kb2", vector: unit(1, 0, 0) },
      { chunkId: 201, knowledgeBaseId: "kb2", vector: unit(0, 1, 0) },
    ]);
    expect(store.search(3, ["kb2"], unit(1, 0, 0), 5).map((h) => h.chunkId)).toEqual([200, 201]);
    expect(store.memory().indexes).toBeGreaterThan(0);
    db.exec("DELETE FROM knowledge_chunks WHERE id = 200");
    expect(store.search(3, ["kb2"], unit(1, 0, 0), 5).map((h) => h.chunkId)).toEqual([201]);
  });

  test("a rolled-back write, and a write by another connection, are never served from memory", async () => {
    const store = createVectorStore(storage.sqlite);
    store.put(3, [{ chunkId: 300, knowledgeBaseId: "kb-r", vector: unit(1, 0, 0) }]);
    expect(store.search(3, ["kb-r"], unit(0, 0, 1), 5).map((h) => h.chunkId)).toEqual([300]);
    expect(() =>
      storage.sqlite.transaction(() => {
        store.put(3, [{ chunkId: 301, knowledgeBaseId: "kb-r", vector: unit(0, 0, 1) }]);
        throw new Error("roll back");
      })(),
    ).toThrow("roll back");
    expect(store.search(3, ["kb-r"], unit(0, 0, 1), 5).map((h) => h.chunkId)).toEqual([300]);

    const other = await openStorage(dir);
    createVectorStore(other.sqlite).put(3, [{ chunkId: 302, knowledgeBaseId: "kb-r", vector: unit(0, 0.1, 1) }]);
    other.close();
    expect(store.search(3, ["kb-r"], unit(0, 0, 1), 5).map((h) => h.chunkId)).toEqual([302, 300]);
  });

  test("over the memory budget, search falls back to sqlite-vec's scan with the same answer", () => {
    const vectors = Array.from({ length: 50 }, (_, i) => ({ chunkId: 1000 + i, knowledgeBaseId: "kb-m", vector: unit(Math.cos(i / 7), Math.sin(i / 7), i / 50) }));
    const inMemory = createVectorStore(storage.sqlite);
    const scanOnly = createVectorStore(storage.sqlite, { memoryBudget: 0 });
    inMemory.put(3, vectors);
    const q = unit(0.3, 0.9, 0.2);
    expect(scanOnly.search(3, ["kb-m"], q, 7)).toEqual(scanOnly.scan(3, "kb-m", q, 7));
    expect(scanOnly.memory().indexes).toBe(0);
    const a = inMemory.search(3, ["kb-m"], q, 7);
    const b = scanOnly.search(3, ["kb-m"], q, 7);
    expect(a.map((h) => h.chunkId)).toEqual(b.map((h) => h.chunkId));
    a.forEach((h, i) => expect(h.distance).toBeCloseTo(b[i]!.distance, 5));
  });
});

describe("in-memory vector index", () => {
  // Clustered vectors like a real corpus's: each near one of 40 topics.
  let seed = 12345;
  const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  const dim = 64;
  const topics = Array.from({ length: 40 }, () => Float32Array.from({ length: dim }, () => random() - 0.5));
  const near = (t: Float32Array) => Float32Array.from(t, (x) => x + (random() - 0.5) * 0.6);
  const rows = Array.from({ length: 5000 }, (_, i) => ({ chunkId: i + 1, vector: near(topics[i % topics.length]!) }));
  const exact = (q: Float32Array, k: number) =>
    rows
      .map((r) => {
        let dot = 0;
        let nr = 0;
        let nq = 0;
        for (let j = 0; j < dim; j++) {
          dot += r.vector[j]! * q[j]!;
          nr += r.vector[j]! ** 2;
          nq += q[j]! ** 2;
        }
        return { chunkId: r.chunkId, distance: 1 - dot / Math.sqrt(nr * nq) };
      })
      .sort((a, b) => a.distance - b.distance)
      .slice(0, k);

  test("with every vector as a candidate it is exact", () => {
    const index = VectorIndex.build(dim, rows, rows.length);
    const q = near(topics[3]!);
    const got = index.search(q, 10, rows.length);
    const want = exact(q, 10);
    expect(got.map((h) => h.chunkId)).toEqual(want.map((h) => h.chunkId));
    got.forEach((h, i) => expect(h.distance).toBeCloseTo(want[i]!.distance, 5));
  });

  test("the bit pre-filter keeps nearly all of the exact top 10, with exact scores", () => {
    const index = VectorIndex.build(dim, rows);
    let agree = 0;
    for (let t = 0; t < 20; t++) {
      const q = near(topics[t]!);
      const got = index.search(q, 10, 500);
      const want = exact(q, 10);
      agree += got.filter((h) => want.some((w) => w.chunkId === h.chunkId)).length;
      for (const h of got) {
        const w = want.find((x) => x.chunkId === h.chunkId);
        if (w) expect(h.distance).toBeCloseTo(w.distance, 5);
      }
    }
    expect(agree / 200).toBeGreaterThanOrEqual(0.95);
  });

  test("put replaces a chunk's vector; growing keeps every vector", () => {
    const index = VectorIndex.build(dim, rows.slice(0, 10));
    for (const r of rows.slice(10, 100)) index.put(r.chunkId, r.vector);
    index.put(1, rows[50]!.vector);
    expect(index.size).toBe(100);
    const hits = index.search(rows[50]!.vector, 2, 1000);
    expect(hits.map((h) => h.chunkId).sort((a, b) => a - b)).toEqual([1, 51]);
    expect(hits[0]!.distance).toBeCloseTo(0, 5);
  });
});
