// Deleting a file, a knowledge base or a workspace with many chunks lets other requests in while
// its chunks go (drain.ts), and leaves nothing of them behind: chunks, keyword rows, vectors.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { drainedInSlices } from "../../support/drain";
import { startedHarness, defaultWorkspaceId, uploadFile, type Harness } from "../../support/harness";

let h: Harness;
let jwt: string;
beforeAll(async () => void ({ h, jwt } = await startedHarness()));
afterAll(() => h.close());

const CHUNKS = 3_000; // ~120 ms of deleting: a dozen slices

/** A file with CHUNKS chunks (written straight into the table; their keyword rows by trigger). */
async function bigFile(productId: string, name: string, knowledgeBaseId?: string) {
  const up = await uploadFile(h, jwt, productId, name, `The ${name} file.`, knowledgeBaseId ? { knowledge_base_id: knowledgeBaseId } : {});
  expect(up.status).toBe(202);
  const id = up.body.data.id as string;
  await h.services.jobs.idle(); // ingested: its own chunk written, nothing left to replace the ballast
  const sqlite = h.services.storage.sqlite;
  const file = sqlite.query<{ kb: string }, [string]>("SELECT knowledge_base_id AS kb FROM knowledge_files WHERE id = ?").get(id)!;
  const insert = sqlite.query(
    "INSERT INTO knowledge_chunks(file_id, knowledge_base_id, product_id, ordinal, text, page, headings, char_start, char_end, tokens) VALUES (?, ?, ?, ?, ?, NULL, '[]', 0, 20, 5)",
  );
  sqlite.transaction(() => {
    for (let i = 0; i < CHUNKS; i++) insert.run(id, file.kb, productId, 1000 + i, `ballast chunk number ${i} of ${name}`);
  })();
  return { id, kb: file.kb };
}

const count = (sql: string, ...args: string[]) => (h.services.storage.sqlite.query(sql).get(...args) as { n: number }).n;
const chunksOf = (column: string, id: string) => count(`SELECT count(*) AS n FROM knowledge_chunks WHERE ${column} = ?`, id);
const keywordRowsMatching = (word: string) => count("SELECT count(*) AS n FROM knowledge_chunks_fts WHERE knowledge_chunks_fts MATCH ?", word);

test("a file's chunks are drained with requests answered in between; nothing of them is left", async () => {
  const ws = await defaultWorkspaceId(h, jwt);
  const keep = await bigFile(ws, "keep.txt");
  const gone = await bigFile(ws, "gone.txt");
  expect(keywordRowsMatching("ballast")).toBe(2 * CHUNKS);
  expect(await drainedInSlices(h, h.call("DELETE", `/api/knowledge-base/storage/file/${gone.id}`, { token: jwt }), () => chunksOf("file_id", gone.id))).toBe(true);
  expect(chunksOf("file_id", gone.id)).toBe(0);
  expect(count("SELECT count(*) AS n FROM knowledge_files WHERE id = ?", gone.id)).toBe(0);
  expect(chunksOf("file_id", keep.id)).toBe(CHUNKS + 1);
  expect(keywordRowsMatching("ballast")).toBe(CHUNKS);
}, 60_000);

test("so are a knowledge base's and a workspace's", async () => {
  const ws = (await h.call("POST", "/api/products", { token: jwt, body: { name: "Short-lived" } })).body.data.id as string;
  const kb = (await h.call("POST", "/api/knowledge-base", { token: jwt, body: { product_id: ws, name: "Extra" } })).body.data.id as string;
  await bigFile(ws, "in-extra.txt", kb);
  await bigFile(ws, "in-default.txt");
  const before = keywordRowsMatching("ballast");
  expect(await drainedInSlices(h, h.call("DELETE", `/api/knowledge-base/${kb}`, { token: jwt }), () => chunksOf("knowledge_base_id", kb))).toBe(true);
  expect(chunksOf("knowledge_base_id", kb)).toBe(0);
  expect(keywordRowsMatching("ballast")).toBe(before - CHUNKS);
  expect(await drainedInSlices(h, h.call("DELETE", `/api/products/${ws}`, { token: jwt }), () => chunksOf("product_id", ws))).toBe(true);
  expect(chunksOf("product_id", ws)).toBe(0);
  expect(count("SELECT count(*) AS n FROM knowledge_files WHERE product_id = ?", ws)).toBe(0);
  expect(keywordRowsMatching("ballast")).toBe(before - 2 * CHUNKS);
  expect((await h.call("GET", `/api/products/${ws}`, { token: jwt })).status).toBe(404);
}, 60_000);

test("a file stored again loses its old chunks a slice at a time, and keeps the new ones", async () => {
  const ws = await defaultWorkspaceId(h, jwt);
  const file = await bigFile(ws, "replaced.txt");
  const fd = new FormData();
  fd.append("file", new File(["Completely new text about zebras."], "replaced.txt"));
  const put = h.call("PUT", `/api/knowledge-base/storage/file/${file.id}`, { token: jwt, raw: fd });
  // Only the chunks it had (ids up to its last one then) are drained: count those.
  const last = count("SELECT max(id) AS n FROM knowledge_chunks WHERE file_id = ?", file.id);
  expect(await drainedInSlices(h, put, () => count(`SELECT count(*) AS n FROM knowledge_chunks WHERE file_id = ? AND id <= ${last}`, file.id), 202)).toBe(true);
  await h.services.jobs.idle();
  const after = (await h.call("GET", `/api/knowledge-base/storage/file/${file.id}`, { token: jwt })).body.data;
  expect(after).toMatchObject({ status: "ready", chunk_count: 1 });
  expect(chunksOf("file_id", file.id)).toBe(1);
  expect(keywordRowsMatching("zebras")).toBe(1);
}, 60_000);

test("dropped vectors go a slice at a time; the file says it has none", async () => {
  const ws = await defaultWorkspaceId(h, jwt);
  const file = await bigFile(ws, "vectors.txt");
  const ids = h.services.storage.sqlite.query<{ id: number }, [string]>("SELECT id FROM knowledge_chunks WHERE file_id = ?").all(file.id).map((r) => r.id);
  const unit = new Float32Array(384).fill(1 / Math.sqrt(384));
  h.services.vectors.put(384, ids.map((chunkId) => ({ chunkId, knowledgeBaseId: file.kb, vector: unit })));
  const vectorsOf = () => count(`SELECT count(*) AS n FROM knowledge_vectors_384 WHERE chunk_id IN (${ids.join(",")})`);
  expect(vectorsOf()).toBe(ids.length);
  expect(await drainedInSlices(h, h.call("DELETE", `/api/knowledge-base/embeddings?file_id=${file.id}`, { token: jwt }), vectorsOf)).toBe(true);
  const after = (await h.call("GET", `/api/knowledge-base/storage/file/${file.id}`, { token: jwt })).body.data;
  expect(after.embedding_model).toBeNull();
  expect(chunksOf("file_id", file.id)).toBe(ids.length); // the text stays, for keyword search
}, 60_000);
