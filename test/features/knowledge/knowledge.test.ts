// Knowledge end to end with the real model, real sqlite-vec and FTS5: upload every format,
// ingestion, page citations, hybrid finding what only keywords find, duplicates, deletes,
// tenant isolation, and bad uploads.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHarness, defaultWorkspaceId, secondTenant, uploadFile, type Harness } from "../../support/harness";
import { makeDocx, makePdf, utf16le } from "../../support/documents";

let h: Harness;
let jwt: string;
let ws: string;

beforeAll(async () => {
  h = await createHarness();
  jwt = await h.login();
  ws = await defaultWorkspaceId(h, jwt);
  h.services.start();
});
afterAll(() => h.close());

const upload = (name: string, bytes: Uint8Array | string, extra: Record<string, string> = {}, token = jwt) => uploadFile(h, token, ws, name, bytes, extra);

const ingested = async (id: string) => {
  await h.services.jobs.idle();
  return (await h.call("GET", `/api/knowledge-base/storage/file/${id}`, { token: jwt })).body.data;
};

const search = (query: string, mode: string, extra: Record<string, unknown> = {}) =>
  h.call("POST", "/api/knowledge-base/embeddings", { token: jwt, body: { query, mode, product_id: ws, top_k: 5, ...extra } });

const chunkRows = (table: string) => (h.services.storage.sqlite.query(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;

describe("ingestion of every format", () => {
  test("PDF pages are cited: a question answered on page 3 returns page 3", async () => {
    const pdf = await makePdf([
      "Hearth handbook. This manual introduces the platform and its team.",
      "Installation. Copy the binary to the server and start it with the serve command.",
      "Backups. Run the backup command every night; it writes a consistent copy of the database file.",
      "Appendix. Licenses of the bundled components.",
    ]);
    const r = await upload("handbook.pdf", pdf);
    expect(r.status).toBe(202);
    expect(r.body.data.status).toBe("queued");
    const file = await ingested(r.body.data.id);
    expect(file).toMatchObject({ status: "ready", progress: 1, error: null, embedding_model: "onnx-community/all-MiniLM-L6-v2-ONNX" });
    expect(file.chunk_count).toBeGreaterThanOrEqual(4);
    const hits = await search("How do I make a nightly copy of my data?", "vector");
    expect(hits.status).toBe(200);
    expect(hits.body.data[0]).toMatchObject({ file_name: "handbook.pdf", page: 3 });
    expect(hits.body.data[0].text).toContain("backup command");
    expect(hits.body.data[0].score).toBeGreaterThan(0.3);
  });

  test("DOCX headings, CSV, XML, JSON, Markdown and UTF-16 text all become ready", async () => {
    const files: [string, Uint8Array | string][] = [
      ["guide.docx", await makeDocx([{ h: 1, text: "Onboarding" }, "New staff receive a laptop on their first day.", { h: 2, text: "Accounts" }, "Ask the admin for an account."])],
      ["staff.csv", "name,team,extension\nAnnika Lindqvist,Platform,4411\nBruno Okafor,Support,4412\n"],
      ["config.xml", '<?xml version="1.0"?><settings><retention days="30">Logs are kept for thirty days</retention></settings>'],
      ["limits.json", JSON.stringify({ uploads: { max_megabytes: 50, formats: ["pdf", "docx"] } })],
      ["faq.md", "# FAQ\n## Is Hearth offline?\nYes, Hearth never needs the internet.\n"],
      ["notes.txt", utf16le("Grüße: the Köln office opens at nine.")],
    ];
    for (const [name, bytes] of files) {
      const r = await upload(name, bytes);
      expect({ name, status: r.status }).toEqual({ name, status: 202 });
      const f = await ingested(r.body.data.id);
      expect({ name, status: f.status, error: f.error }).toEqual({ name, status: "ready", error: null });
      expect(f.chunk_count).toBeGreaterThan(0);
    }
    const docx = await search("Who gives me an account?", "hybrid");
    expect(docx.body.data[0].file_name).toBe("guide.docx");
    expect(docx.body.data[0].headings).toEqual(["Onboarding", "Accounts"]);
    const csv = await search("Bruno Okafor", "keyword");
    expect(csv.body.data[0].text).toStartWith("name | team | extension");
    const utf16 = await search("Köln office", "keyword");
    expect(utf16.body.data[0].file_name).toBe("notes.txt");
  });
});

describe("search", () => {
  test("an error code only keyword search can find is found by hybrid", async () => {
    const r = await upload("errors.md", "# Error codes\n\nZX-9042: the replication link to the standby dropped.\n\n# Other\n\nGeneral advice about networks and disks.");
    await ingested(r.body.data.id);
    const kw = await search("ZX-9042", "keyword");
    expect(kw.body.data[0].text).toContain("ZX-9042");
    const hybrid = await search("ZX-9042", "hybrid");
    expect(hybrid.body.data[0].text).toContain("ZX-9042");
  });

  test("top_k, min_score and knowledge_base_ids are honoured; bad input is 4xx", async () => {
    const few = await search("Hearth", "hybrid", { top_k: 2 });
    expect(few.body.data.length).toBeLessThanOrEqual(2);
    const strict = await search("completely unrelated astronomy question about nebulae", "vector", { min_score: 0.9 });
    expect(strict.body.data).toEqual([]);
    const none = await h.call("POST", "/api/knowledge-base/embeddings", { token: jwt, body: { query: "x", knowledge_base_ids: [crypto.randomUUID()] } });
    expect(none.status).toBe(404);
    for (const body of [{ query: "" }, { query: "x", mode: "fuzzy", product_id: ws }, { query: "x", top_k: 0, product_id: ws }, { query: 5 }]) {
      const r = await h.call("POST", "/api/knowledge-base/embeddings", { token: jwt, body });
      expect([400, 422]).toContain(r.status);
    }
  });

  test("only ready files are searched: chunks of a file being stored again or failed are left out", async () => {
    const text = (name: string) => `# ${name}\n\nThe QV-5523 valve on the cooling loop is replaced every spring by the ${name} crew.`;
    const a = (await upload("valve-a.md", text("north"))).body.data.id;
    const b = (await upload("valve-b.md", text("south"))).body.data.id;
    await ingested(a);
    await ingested(b);
    // Which of the two files the search finds (other tests' files may fill the other places).
    const found = async (mode: string) => {
      const ids = new Set((await search("QV-5523 valve replacement", mode)).body.data.map((hit: { file_id: string }) => hit.file_id));
      return [a, b].filter((id) => ids.has(id));
    };
    for (const mode of ["keyword", "vector", "hybrid"]) expect(await found(mode)).toEqual([a, b]);
    const setStatus = (id: string, status: string) => h.services.storage.sqlite.query("UPDATE knowledge_files SET status = ? WHERE id = ?").run(status, id);
    for (const status of ["processing", "queued", "failed"]) {
      setStatus(a, status); // its chunks and vectors are still there, as while a new version is stored
      for (const mode of ["keyword", "vector", "hybrid"]) expect({ status, mode, found: await found(mode) }).toEqual({ status, mode, found: [b] });
    }
    // The best hit of a file not ready does not cost a place: top_k 1 is still the ready file's.
    for (const mode of ["keyword", "vector", "hybrid"]) {
      const one = (await search("QV-5523 valve replacement north crew", mode, { top_k: 1 })).body.data;
      expect({ mode, files: one.map((hit: { file_id: string }) => hit.file_id) }).toEqual({ mode, files: [b] });
    }
    setStatus(a, "ready");
    expect(await found("hybrid")).toEqual([a, b]);
  });

  test("an API token searches its own workspace; another tenant finds nothing of it", async () => {
    const t = await h.call("POST", "/api/api-tokens", { token: jwt, body: { product_id: ws, token_name: "search" } });
    const mine = await h.call("POST", "/api/knowledge-base/embeddings", { headers: { "x-api-token": t.body.data.token }, body: { query: "backup", mode: "keyword" } });
    expect(mine.status).toBe(200);
    expect(mine.body.data.length).toBeGreaterThan(0);

    const other = await secondTenant(h, jwt);
    const theirs = await h.call("POST", "/api/knowledge-base/embeddings", { token: other.jwt, body: { query: "backup", mode: "keyword", product_id: other.workspaceId } });
    expect(theirs.body.data).toEqual([]);
    expect((await h.call("POST", "/api/knowledge-base/embeddings", { token: other.jwt, body: { query: "backup", product_id: ws } })).status).toBe(404);
    const kbs = await h.call("GET", `/api/knowledge-base/${ws}`, { token: jwt });
    const kb = kbs.body.data[0].id;
    for (const [m, p] of [["GET", `/api/knowledge-base/storage/${kb}`], ["DELETE", `/api/knowledge-base/${kb}`], ["GET", `/api/knowledge-base/${ws}`]] as const) {
      expect((await h.call(m, p, { token: other.jwt })).status).toBe(404);
    }
  });
});

describe("files", () => {
  test("identical bytes return the existing record; download gives the exact bytes", async () => {
    const bytes = new TextEncoder().encode("Duplicate detection keeps one copy.\n");
    const a = await upload("one.txt", bytes);
    const b = await upload("two.txt", bytes);
    expect(b.status).toBe(200);
    expect(b.body.data.id).toBe(a.body.data.id);
    const dl = await h.app.handle(new Request(`http://hearth.test/api/knowledge-base/storage/file/${a.body.data.id}/download`, { headers: { authorization: `Bearer ${jwt}` } }));
    expect(dl.status).toBe(200);
    expect(new Uint8Array(await dl.arrayBuffer())).toEqual(bytes);
    expect(dl.headers.get("content-disposition")).toContain("one.txt");
  });

  test("PUT renames a file, or replaces its content and ingests it again", async () => {
    const r = await upload("draft.md", "# Draft\nThe launch is planned for March.");
    await ingested(r.body.data.id);
    const renamed = await h.call("PUT", `/api/knowledge-base/storage/file/${r.body.data.id}`, { token: jwt, body: { name: "plan.md" } });
    expect(renamed.status).toBe(200);
    expect(renamed.body.data.name).toBe("plan.md");
    const fd = new FormData();
    fd.append("file", new File(["# Plan\nThe launch moved to September because of the audit."], "plan.md"));
    const replaced = await h.call("PUT", `/api/knowledge-base/storage/file/${r.body.data.id}`, { token: jwt, raw: fd });
    expect(replaced.status).toBe(202);
    expect(replaced.body.data.status).toBe("queued");
    const f = await ingested(r.body.data.id);
    expect(f.status).toBe("ready");
    const hits = await search("September audit", "keyword");
    expect(hits.body.data[0].file_id).toBe(r.body.data.id);
    expect((await search("planned for March", "keyword")).body.data.some((x: { file_id: string }) => x.file_id === r.body.data.id)).toBe(false);
    const empty = await h.call("PUT", `/api/knowledge-base/storage/file/${r.body.data.id}`, { token: jwt, body: {} });
    expect([400, 422]).toContain(empty.status);
  });

  test("spec §4.5's PUT and DELETE /storage manage the file named by file_id, like the routes by id", async () => {
    // Before: both fell to /api/knowledge-base/{id} and answered "id must be a UUID" for "storage".
    const r = await upload("notes-4-5.md", "# Notes\nThe storage routes of section 4.5.");
    const id = r.body.data.id as string;
    await ingested(id);
    const renamed = await h.call("PUT", "/api/knowledge-base/storage", { token: jwt, body: { file_id: id, name: "renamed-4-5.md" } });
    expect([renamed.status, renamed.body.data?.name]).toEqual([200, "renamed-4-5.md"]);
    const fd = new FormData();
    fd.append("file_id", id);
    fd.append("file", new File(["# Notes\nReplaced through PUT /storage."], "renamed-4-5.md"));
    const replaced = await h.call("PUT", "/api/knowledge-base/storage", { token: jwt, raw: fd });
    expect([replaced.status, replaced.body.data?.status]).toEqual([202, "queued"]);
    await ingested(id);
    expect((await h.call("PUT", "/api/knowledge-base/storage", { token: jwt, body: { name: "x.md" } })).status).toBe(422);
    expect((await h.call("PUT", "/api/knowledge-base/storage", { token: jwt, body: { file_id: crypto.randomUUID(), name: "x.md" } })).status).toBe(404);
    expect((await h.call("DELETE", "/api/knowledge-base/storage", { token: jwt })).status).toBe(400);
    const gone = await h.call("DELETE", `/api/knowledge-base/storage?file_id=${id}`, { token: jwt });
    expect([gone.status, gone.body.data?.id]).toEqual([200, id]);
    expect((await h.call("GET", `/api/knowledge-base/storage/file/${id}`, { token: jwt })).status).toBe(404);
    expect((await h.call("DELETE", `/api/knowledge-base/storage?file_id=${id}`, { token: jwt })).status).toBe(404);
  });

  test("delete removes file, bytes, chunks, keyword rows and vectors", async () => {
    const r = await upload("temp.md", "# Temporary\nThis file will be deleted soon, with its vectors.");
    await ingested(r.body.data.id);
    const before = { chunks: chunkRows("knowledge_chunks"), vectors: h.services.vectors.count(384) };
    const d = await h.call("DELETE", `/api/knowledge-base/storage/file/${r.body.data.id}`, { token: jwt });
    expect(d.status).toBe(200);
    expect(chunkRows("knowledge_chunks")).toBeLessThan(before.chunks);
    expect(h.services.vectors.count(384)).toBeLessThan(before.vectors);
    const orphans = h.services.storage.sqlite
      .query("SELECT (SELECT count(*) FROM knowledge_chunks WHERE file_id NOT IN (SELECT id FROM knowledge_files)) AS c, (SELECT count(*) FROM knowledge_content_pieces WHERE content_id NOT IN (SELECT content_id FROM knowledge_files)) AS b, (SELECT count(*) FROM knowledge_vectors_384 WHERE chunk_id NOT IN (SELECT id FROM knowledge_chunks)) AS v")
      .get();
    expect(orphans).toEqual({ c: 0, b: 0, v: 0 });
    expect(chunkRows("knowledge_chunks_fts")).toBe(chunkRows("knowledge_chunks"));
  });

  test("unsupported, lying, empty and oversized files are refused as JSON, and nothing of them is stored", async () => {
    const files = () => h.services.storage.sqlite.query("SELECT count(*) AS n FROM knowledge_files").get();
    const before = files();
    const png = await upload("image.png", new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0]));
    expect(png.status).toBe(415);
    expect(png.body.error).toBe("UnsupportedMediaType");
    const fake = await upload("report.pdf", "this is not a pdf");
    expect(fake.status).toBe(415);
    const big = await upload("big.txt", new Uint8Array(50 * 1024 * 1024 + 1).fill(0x61));
    expect(big.status).toBe(413);
    expect(big.body.error).toBe("PayloadTooLarge");
    const noFile = await h.call("POST", "/api/knowledge-base/storage/upload", { token: jwt, raw: new FormData() });
    expect([400, 422]).toContain(noFile.status);
    // An empty file, whatever its name says, is refused at once instead of stored to fail later.
    for (const name of ["empty.txt", "setup.exe"]) {
      const empty = await upload(name, new Uint8Array(0));
      expect(empty.status).toBe(400);
      expect(empty.body).toMatchObject({ success: false, error: "ValidationError", message: `${name} is empty: there is nothing to index` });
    }
    expect(files()).toEqual(before);
  });

  test("a broken document ends failed with a readable error", async () => {
    const pdf = await makePdf(["one", "two"]);
    const r = await upload("broken.pdf", pdf.subarray(0, 400));
    const f = await ingested(r.body.data.id);
    expect(f.status).toBe("failed");
    expect(f.error).toBeString();
    expect(f.chunk_count).toBe(0);
  });

  test("knowledge bases: create, rename, list with counts, delete with everything inside", async () => {
    const c = await h.call("POST", "/api/knowledge-base", { token: jwt, body: { product_id: ws, name: "Legal" } });
    expect(c.status).toBe(201);
    const dup = await h.call("POST", "/api/knowledge-base", { token: jwt, body: { product_id: ws, name: "Legal" } });
    expect(dup.status).toBe(409);
    const blank = await h.call("POST", "/api/knowledge-base", { token: jwt, body: { product_id: ws, name: "   " } });
    expect([blank.status, blank.body.message]).toEqual([422, "name must not be blank"]);
    // A token names no workspace: its own, as workflows and agents take it (before: 422); a session must name one.
    const token = (await h.call("POST", "/api/api-tokens", { token: jwt, body: { product_id: ws, token_name: "kb maker" } })).body.data.token;
    const viaToken = await h.call("POST", "/api/knowledge-base", { token, body: { name: "Made by CI" } });
    expect([viaToken.status, viaToken.body.data?.product_id]).toEqual([201, ws]);
    const unnamed = await h.call("POST", "/api/knowledge-base", { token: jwt, body: { name: "No workspace" } });
    expect([unnamed.status, unnamed.body.message]).toEqual([422, "product_id is required: the workspace the knowledge base belongs to"]);
    const blankRename = await h.call("PUT", `/api/knowledge-base/${c.body.data.id}`, { token: jwt, body: { name: "  " } });
    expect([blankRename.status, blankRename.body.message]).toEqual([422, "name must not be blank"]);
    const kb = c.body.data.id;
    const r = await upload("contract.md", "# Contract\nThe notice period is three months.", { knowledge_base_id: kb });
    await ingested(r.body.data.id);
    const renamed = await h.call("PUT", `/api/knowledge-base/${kb}`, { token: jwt, body: { name: "Legal & Compliance" } });
    expect(renamed.body.data.name).toBe("Legal & Compliance");
    const list = await h.call("GET", `/api/knowledge-base/${ws}`, { token: jwt });
    expect(list.body.data.find((b: { id: string }) => b.id === kb).file_count).toBe(1);
    expect(list.body.data[0].is_default).toBe(true);
    expect((await h.call("DELETE", `/api/knowledge-base/${kb}`, { token: jwt })).status).toBe(200);
    expect((await h.call("GET", `/api/knowledge-base/storage/file/${r.body.data.id}`, { token: jwt })).status).toBe(404);
    const left = h.services.storage.sqlite.query("SELECT count(*) AS n FROM knowledge_chunks WHERE knowledge_base_id = ?").get(kb) as { n: number };
    expect(left.n).toBe(0);
  });
});
