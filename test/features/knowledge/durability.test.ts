// Ingestion survives restarts and a missing model: nothing acknowledged is lost.
import { describe, expect, test } from "bun:test";
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ADMIN_EMAIL, createHarness, defaultWorkspaceId, uploadText } from "../../support/harness";
import { createKnowledgeService } from "../../../src/features/knowledge/service";
import { TEST_MODELS_DIR } from "../../support/models";
import { silentLogger } from "../../../src/platform/log";

const MODEL = "onnx-community/all-MiniLM-L6-v2-ONNX";

const longText = Array.from({ length: 120 }, (_, i) => `Paragraph ${i}: the archive room on floor ${i % 7} keeps records of project ${i}.`).join("\n\n");

describe("durable ingestion", () => {
  test("a restart in the middle of ingestion resumes the job and finishes the file", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hearth-resume-"));
    const a = await createHarness({}, dir);
    const jwt = await a.login();
    const ws = await defaultWorkspaceId(a, jwt);
    a.services.start();
    const id = await uploadText(a, jwt, ws, "archive.txt", longText);
    // Stop as soon as the file is being processed: the job row stays `running`.
    for (let i = 0; i < 500; i++) {
      const s = (await a.call("GET", `/api/knowledge-base/storage/file/${id}`, { token: jwt })).body.data.status;
      if (s === "processing") break;
      await Bun.sleep(10);
    }
    await a.close();

    const b = await createHarness({}, dir);
    b.services.start();
    await b.services.jobs.idle();
    const jwt2 = await b.login();
    const f = (await b.call("GET", `/api/knowledge-base/storage/file/${id}`, { token: jwt2 })).body.data;
    expect(f).toMatchObject({ status: "ready", progress: 1, embedding_model: MODEL });
    const n = b.services.storage.sqlite.query("SELECT count(*) AS n, count(DISTINCT ordinal) AS o FROM knowledge_chunks WHERE file_id = ?").get(id) as { n: number; o: number };
    expect(n.n).toBe(f.chunk_count);
    expect(n.o).toBe(n.n); // no duplicated chunks from the interrupted run
    expect(b.services.vectors.count(384)).toBe(n.n);
    await b.close();
    rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  test("without the model: stored, keyword-searchable, /health says why; vectors follow once the model is there", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hearth-nomodel-"));
    const models = mkdtempSync(join(tmpdir(), "hearth-models-"));
    const a = await createHarness({ HEARTH_MODELS_DIR: models, HEARTH_OFFLINE: "1" }, dir);
    const jwt = await a.login();
    const ws = await defaultWorkspaceId(a, jwt);
    a.services.start();
    const health = (await a.call("GET", "/health", { token: jwt })).body; // details are for owners/admins
    expect(health.status).toBe("ok");
    expect(health.checks.embedder.status).toBe("unavailable");
    expect(health.checks.embedder.reason).toContain("missing");

    const id = await uploadText(a, jwt, ws, "ops.md", "# Runbook\nRestart the ingest daemon with code RB-5512.");
    await a.services.jobs.idle();
    const f = (await a.call("GET", `/api/knowledge-base/storage/file/${id}`, { token: jwt })).body.data;
    expect(f).toMatchObject({ status: "ready", embedding_model: null });
    const kw = await a.call("POST", "/api/knowledge-base/embeddings", { token: jwt, body: { query: "RB-5512", mode: "keyword", product_id: ws } });
    expect(kw.body.data[0].file_id).toBe(id);
    const vec = await a.call("POST", "/api/knowledge-base/embeddings", { token: jwt, body: { query: "restart", product_id: ws } });
    expect(vec.status).toBe(503);
    expect(vec.body.message).toContain("keyword");
    // Agents and MCP search as the assistant does: by keyword while there are no vectors (before,
    // search_knowledge failed "use mode keyword", a mode its callers cannot choose).
    const secret = (await a.call("POST", "/api/api-tokens", { token: jwt, body: { product_id: ws, token_name: "tool" } })).body.data.token as string;
    const check = a.services.authenticator.checkToken(secret);
    if (!check.ok) throw new Error("the new token does not authenticate");
    const tool = a.services.tools.forWorkspace({ productId: ws, organizationId: check.principal.organizationId }).find((t) => t.name === "search_knowledge")!;
    const found = await tool.run({ query: "how do I restart the ingest daemon" }, { principal: check.principal, productId: ws, organizationId: check.principal.organizationId, signal: new AbortController().signal, log: silentLogger });
    expect(found.sources?.[0]).toMatchObject({ file_id: id, file_name: "ops.md" });
    await a.close();

    // The model arrives; the next start (or the one-minute retry) embeds what was stored.
    cpSync(join(TEST_MODELS_DIR, MODEL), join(models, MODEL), { recursive: true });
    const b = await createHarness({ HEARTH_MODELS_DIR: models, HEARTH_OFFLINE: "1" }, dir);
    b.services.start();
    expect(await b.services.catchUpEmbeddings()).toBe(true);
    await b.services.jobs.idle();
    const jwt2 = await b.login();
    const g = (await b.call("GET", `/api/knowledge-base/storage/file/${id}`, { token: jwt2 })).body.data;
    expect(g.embedding_model).toBe(MODEL);
    const state = await b.call("GET", `/api/knowledge-base/embeddings?file_id=${id}`, { token: jwt2 });
    expect(state.body.data).toMatchObject({ embedder: "ok", files: [{ file_id: id, embedded: true }] });
    const v = await b.call("POST", "/api/knowledge-base/embeddings", { token: jwt2, body: { query: "how do I restart the daemon", product_id: ws } });
    expect(v.body.data[0].file_id).toBe(id);

    // DELETE drops vectors (keyword search stays), PUT brings them back.
    expect((await b.call("DELETE", `/api/knowledge-base/embeddings?file_id=${id}`, { token: jwt2 })).status).toBe(200);
    expect(b.services.vectors.count(384)).toBe(0);
    expect((await b.call("PUT", "/api/knowledge-base/embeddings", { token: jwt2, body: { file_id: id } })).status).toBe(202);
    await b.services.jobs.idle();
    expect(b.services.vectors.count(384)).toBe(g.chunk_count);
    // The scope may be in the query, as the README shows and GET and DELETE take it (before: 422 "Expected object").
    expect((await b.call("DELETE", `/api/knowledge-base/embeddings?file_id=${id}`, { token: jwt2 })).status).toBe(200);
    const byQuery = await b.call("PUT", `/api/knowledge-base/embeddings?file_id=${id}`, { token: jwt2 });
    expect(byQuery.status).toBe(202);
    expect(byQuery.body.data).toEqual({ queued: 1 });
    await b.services.jobs.idle();
    expect(b.services.vectors.count(384)).toBe(g.chunk_count);
    await b.close();
    rmSync(dir, { recursive: true, force: true });
    rmSync(models, { recursive: true, force: true });
  }, 60_000);

  test("files cut by an older chunking are cut again and re-embedded at the next start", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hearth-rechunk-"));
    const a = await createHarness({}, dir);
    const jwt = await a.login();
    const ws = await defaultWorkspaceId(a, jwt);
    a.services.start();
    const id = await uploadText(a, jwt, ws, "archive.txt", longText);
    await a.services.jobs.idle();
    const before = (await a.call("GET", `/api/knowledge-base/storage/file/${id}`, { token: jwt })).body.data;
    // As an older Hearth left it: another chunking (here one chunk fewer) and no version recorded.
    const sql = a.services.storage.sqlite;
    expect((sql.query("SELECT chunking_version AS v FROM knowledge_files WHERE id = ?").get(id) as { v: number }).v).toBeGreaterThan(0);
    sql.run("DELETE FROM knowledge_chunks WHERE file_id = ? AND ordinal = 0", [id]);
    sql.run("UPDATE knowledge_files SET chunking_version = 0, chunk_count = chunk_count - 1 WHERE id = ?", [id]);
    await a.close();

    const b = await createHarness({}, dir);
    b.services.start();
    expect(await b.services.catchUpEmbeddings()).toBe(true);
    await b.services.jobs.idle();
    const jwt2 = await b.login();
    const after = (await b.call("GET", `/api/knowledge-base/storage/file/${id}`, { token: jwt2 })).body.data;
    expect(after).toMatchObject({ status: "ready", chunk_count: before.chunk_count, embedding_model: MODEL });
    const row = b.services.storage.sqlite.query("SELECT chunking_version AS v FROM knowledge_files WHERE id = ?").get(id) as { v: number };
    expect(row.v).toBeGreaterThan(0);
    expect(b.services.vectors.count(384)).toBe(before.chunk_count);
    // Up to date now: the start after this one queues nothing.
    expect(b.services.ingestion.unembedded()).toEqual([]);
    await b.close();
    rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  test("a deletion is answered only once its commit is synced, and the connection stays FULL", async () => {
    const h = await createHarness();
    const jwt = await h.login();
    const ws = await defaultWorkspaceId(h, jwt);
    const id = await uploadText(h, jwt, ws, "gone.txt", "A file that is deleted.");
    const admin = h.services.storage.sqlite.query("SELECT id FROM users WHERE email = ?").get(ADMIN_EMAIL) as { id: string };
    const principal = h.services.accounts.principalFor(admin.id, 0)!;
    // The same service as the server's, over the same connection, with a WAL sync that waits for the test.
    const events: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const sync = async () => {
      events.push("sync");
      await gate;
      events.push("synced");
    };
    const { storage, clock, workspaces, jobs, content } = h.services;
    const knowledge = createKnowledgeService({ db: storage.db, clock, workspaces, jobs, content, sync, embedding: { model: MODEL, dim: 384 } });
    let answered = false;
    const deleting = knowledge.deleteFile(principal, id).then(() => void (answered = true));
    await Bun.sleep(20);
    // Committed (other requests no longer see it) without an fsync on the event loop; not answered yet.
    expect(h.services.storage.sqlite.query("SELECT count(*) AS n FROM knowledge_files WHERE id = ?").get(id)).toEqual({ n: 0 });
    expect((h.services.storage.sqlite.query("PRAGMA synchronous").get() as { synchronous: number }).synchronous).toBe(2);
    expect([answered, events]).toEqual([false, ["sync"]]);
    release();
    await deleting;
    expect(events).toEqual(["sync", "synced"]);
    await h.close();
  });
});
