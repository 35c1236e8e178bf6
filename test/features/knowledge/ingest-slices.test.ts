// Chunks are stored in slices with the event loop free between them, and commits in between skip
// the fsync: a file is never `ready` before its last slice, and a kill -9 in the middle of an
// ingestion loses nothing: the job runs again at the next start and ends with every chunk once.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { startHearth } from "../../support/hearth-process";
import { openStorage } from "../../../src/platform/db/database";
import { createHarness, defaultWorkspaceId, uploadText } from "../../support/harness";
import { TEST_MODELS_DIR } from "../../support/models";

const dirs: string[] = [];
const procs: Subprocess[] = [];
afterAll(() => {
  for (const p of procs) p.kill("SIGKILL");
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
const tempDir = (prefix: string) => {
  const d = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(d);
  return d;
};

/** Paragraphs of ~100 words, each its own chunk or nearly. */
const manyParagraphs = (n: number) =>
  Array.from({ length: n }, (_, i) => `Paragraph ${i}. ` + Array.from({ length: 100 }, (_, j) => `word${(i * 31 + j) % 997}`).join(" ")).join("\n\n");

describe("chunks stored in slices", () => {
  test("the file is not ready, nor counted, until its last slice is in", async () => {
    // No model: chunks are stored and the file is ready without embedding, so the slices are all there is.
    const h = await createHarness({ HEARTH_MODELS_DIR: tempDir("hearth-nomodels-"), HEARTH_OFFLINE: "1" });
    const jwt = await h.login();
    const ws = await defaultWorkspaceId(h, jwt);
    h.services.start();
    const id = await uploadText(h, jwt, ws, "big.txt", manyParagraphs(900));

    // Look at every turn of the event loop, as a request would.
    const sql = h.services.storage.sqlite;
    const seen: { status: string; stored: number; count: number }[] = [];
    // Bounded by time, not by turns: a loaded machine gives the ingestion fewer of them per turn.
    for (const deadline = Date.now() + 45_000; Date.now() < deadline; ) {
      const f = sql.query("SELECT status, chunk_count AS count FROM knowledge_files WHERE id = ?").get(id) as { status: string; count: number };
      const stored = (sql.query("SELECT count(*) AS n FROM knowledge_chunks WHERE file_id = ?").get(id) as { n: number }).n;
      seen.push({ status: f.status, stored, count: f.count });
      if (f.status === "ready" || f.status === "failed") break;
      await new Promise((r) => setImmediate(r));
    }
    const last = seen.at(-1)!;
    expect(last.status).toBe("ready");
    expect(last.stored).toBe(last.count);
    expect(last.count).toBeGreaterThan(400); // more than two slices of 200
    // Requests got turns while the chunks went in: partial states were seen, none of them ready.
    const partial = seen.filter((s) => s.stored > 0 && s.stored < last.count);
    expect(partial.length).toBeGreaterThanOrEqual(2);
    expect(partial.every((s) => s.status === "processing" && s.count === 0)).toBe(true);
    await h.close();
  }, 60_000);
});

describe("kill -9 in the middle of an ingestion", () => {
  const env = (dataDir: string) => ({ ...process.env, HEARTH_DATA_DIR: dataDir, HEARTH_MODELS_DIR: TEST_MODELS_DIR, HEARTH_OFFLINE: "1", HEARTH_ADMIN_PASSWORD: "slices-test-password", HEARTH_RATE_LIMIT: "100000", HEARTH_RATE_LIMIT_STRICT: "100000" });

  async function start(dataDir: string) {
    const { proc, url } = await startHearth(env(dataDir));
    procs.push(proc);
    const login = await fetch(`${url}/api/auth/login`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ email: "admin@localhost", password: "slices-test-password" }) });
    return { proc, url, jwt: ((await login.json()) as { data: { token: string } }).data.token };
  }
  const fileOf = async (s: { url: string; jwt: string }, id: string) =>
    ((await (await fetch(`${s.url}/api/knowledge-base/storage/file/${id}`, { headers: { authorization: `Bearer ${s.jwt}` } })).json()) as { data: { status: string; progress: number; chunk_count: number } }).data;

  test("the file is ready after the restart, with every chunk once and a vector for each", async () => {
    const dir = tempDir("hearth-kill-");
    const a = await start(dir);
    const products = (await (await fetch(`${a.url}/api/products`, { headers: { authorization: `Bearer ${a.jwt}` } })).json()) as { data: { id: string }[] };
    const fd = new FormData();
    fd.append("file", new File([manyParagraphs(40)], "archive.txt"));
    fd.append("product_id", products.data[0]!.id);
    const up = await fetch(`${a.url}/api/knowledge-base/storage/upload`, { method: "POST", headers: { authorization: `Bearer ${a.jwt}` }, body: fd });
    expect(up.status).toBe(202);
    const id = ((await up.json()) as { data: { id: string } }).data.id;
    // Killed while embedding: chunks stored and some vectors written, all without an fsync.
    let before = await fileOf(a, id);
    for (const deadline = Date.now() + 60_000; Date.now() < deadline && !(before.status === "processing" && before.progress > 0.3); ) {
      await Bun.sleep(20);
      before = await fileOf(a, id);
    }
    expect(before.status).toBe("processing");
    a.proc.kill("SIGKILL");
    await a.proc.exited;

    const b = await start(dir);
    let after = await fileOf(b, id);
    for (const deadline = Date.now() + 90_000; Date.now() < deadline && after.status !== "ready"; ) {
      await Bun.sleep(100);
      after = await fileOf(b, id);
    }
    expect(after.status).toBe("ready");
    b.proc.kill("SIGKILL");
    await b.proc.exited;

    const storage = await openStorage(dir);
    const row = storage.sqlite
      .query("SELECT count(*) AS n, count(DISTINCT ordinal) AS o, (SELECT count(*) FROM knowledge_vectors_384 WHERE chunk_id IN (SELECT id FROM knowledge_chunks WHERE file_id = ?1)) AS v FROM knowledge_chunks WHERE file_id = ?1")
      .get(id) as { n: number; o: number; v: number };
    storage.close();
    expect(row).toEqual({ n: after.chunk_count, o: after.chunk_count, v: after.chunk_count });
  }, 180_000);
});

/** A harness with "long.txt" (~120 chunks) uploaded and its embedding under way: some vectors written, most not. */
async function whileEmbedding() {
  const h = await createHarness();
  const jwt = await h.login();
  h.services.start();
  const id = await uploadText(h, jwt, await defaultWorkspaceId(h, jwt), "long.txt", manyParagraphs(60));
  const sql = h.services.storage.sqlite;
  const state = () => sql.query("SELECT status, progress, chunk_count AS count FROM knowledge_files WHERE id = ?").get(id) as { status: string; progress: number; count: number } | null;
  for (let i = 0; i < 3000 && !(state()!.progress > 0.2 && state()!.progress < 0.5); i++) await Bun.sleep(10);
  expect(state()!.status).toBe("processing");
  const orphanVectors = () => (sql.query("SELECT count(*) AS n FROM knowledge_vectors_384 WHERE chunk_id NOT IN (SELECT id FROM knowledge_chunks)").get() as { n: number }).n;
  const jobsOfFile = () => sql.query("SELECT status, attempts, last_error AS error FROM jobs WHERE payload LIKE ? ORDER BY created_at").all(`%${id}%`);
  return { h, jwt, id, sql, state, orphanVectors, jobsOfFile };
}

describe("deleted or replaced during ingestion", () => {
  test("a file deleted while it is embedded: the job stops at its next batch and no vector outlives the file's chunks", async () => {
    const { h, jwt, id, state, orphanVectors, jobsOfFile } = await whileEmbedding();
    try {
      expect((await h.call("DELETE", `/api/knowledge-base/storage/file/${id}`, { token: jwt })).status).toBe(200);
      await h.services.jobs.idle();
      expect(orphanVectors()).toBe(0);
      expect(state()).toBeNull();
      expect(jobsOfFile()).toEqual([{ status: "done", attempts: 1, error: null }]);
    } finally {
      await h.close();
    }
  }, 60_000);

  test("a file whose content is replaced while it is embedded: the old job stops, no vector outlives its chunks, and the file is ready only with the new content", async () => {
    const { h, jwt, id, sql, state, orphanVectors, jobsOfFile } = await whileEmbedding();
    try {
      const fd = new FormData();
      fd.append("file", new File(["The lighthouse keeper logs the weather at dawn."], "long.txt"));
      expect((await h.call("PUT", `/api/knowledge-base/storage/file/${id}`, { token: jwt, raw: fd })).status).toBe(202);
      // Looked at every turn of the event loop, as a client polling would: the first time it is ready, it holds the new content.
      const deadline = Date.now() + 30_000;
      while (Date.now() < deadline && state()!.status !== "ready" && state()!.status !== "failed") await new Promise((r) => setImmediate(r));
      expect(state()).toMatchObject({ status: "ready", count: 1 });
      const texts = sql.query("SELECT text FROM knowledge_chunks WHERE file_id = ?").all(id) as { text: string }[];
      expect(texts.map((t) => t.text)).toEqual(["The lighthouse keeper logs the weather at dawn."]);
      await h.services.jobs.idle();
      expect(orphanVectors()).toBe(0);
      expect((sql.query("SELECT count(*) AS n FROM knowledge_vectors_384").get() as { n: number }).n).toBe(1);
      expect(jobsOfFile()).toEqual([
        { status: "done", attempts: 1, error: null },
        { status: "done", attempts: 1, error: null },
      ]);
    } finally {
      await h.close();
    }
  }, 60_000);

  test("vectors that older versions left behind (their chunk deleted) are swept once, at the first start of this version", async () => {
    const h = await createHarness();
    try {
      const jwt = await h.login();
      h.services.start();
      const id = await uploadText(h, jwt, await defaultWorkspaceId(h, jwt), "office.txt", "The badge office is on the second floor and opens at nine.");
      const sql = h.services.storage.sqlite;
      for (let i = 0; i < 1000 && (sql.query("SELECT status FROM knowledge_files WHERE id = ?").get(id) as { status: string }).status !== "ready"; i++) await Bun.sleep(10);
      const { chunk, kb } = sql.query("SELECT id AS chunk, knowledge_base_id AS kb FROM knowledge_chunks WHERE file_id = ?").get(id) as { chunk: number; kb: string };
      const vectors = h.services.vectors;
      const stray = (chunkId: number) => ({ chunkId, knowledgeBaseId: kb, vector: new Float32Array(384).fill(1 / Math.sqrt(384)) });
      // As a database written by an older version: two stray vectors, and no record of the sweep.
      vectors.put(384, [stray(chunk + 1000), stray(chunk + 1001)]);
      sql.run("DELETE FROM knowledge_vector_sweeps");
      expect(vectors.count(384)).toBe(3);
      expect(vectors.sweepOrphansOnce()).toBe(2);
      expect(vectors.count(384)).toBe(1);
      expect(vectors.search(384, [kb], stray(0).vector, 5).map((hit) => hit.chunkId)).toEqual([chunk]);
      // Once: a later start does not scan again.
      vectors.put(384, [stray(chunk + 1002)]);
      expect(vectors.sweepOrphansOnce()).toBe(0);
    } finally {
      await h.close();
    }
  }, 60_000);
});
