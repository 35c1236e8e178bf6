// What Hearth defends against in document ingestion: uploads that explode into chunks or parsed
// text, regexes that hold the parser for its whole timeout, secrets leaking into the parser
// child, and one workspace's backlog starving another's upload.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AutoTokenizer } from "@huggingface/transformers";
import { configure } from "../../src/platform/ml/transformers";
import { chunkSections } from "../../src/features/knowledge/ingest/chunk";
import { parseDocument, ParseError, PARSE_CAPS, type Section } from "../../src/features/knowledge/ingest/parse";
import { parseIsolated } from "../../src/features/knowledge/ingest/isolate";
import { sectionsOf } from "../support/parts";
import { openStorage, type Storage } from "../../src/platform/db/database";
import { migrate } from "../../src/platform/db/migrate";
import { manualClock } from "../../src/platform/clock";
import { silentLogger } from "../../src/platform/log";
import { createJobQueue, jobKind } from "../../src/platform/jobs/queue";
import { createHarness, defaultWorkspaceId, uploadFile, type Harness } from "../support/harness";
import { makeZipBombDocx, nestedJson, openAngles, slowDocx, spacedHeading, wideCsv } from "../support/hostile";
import { makeDocx } from "../support/documents";
import { declaredInflatedBytes } from "../../src/features/knowledge/ingest/zip-directory";
import { TEST_MODELS_DIR } from "../support/models";

const INGEST = jobKind<{ name: string }>("ingest");

const MODEL = "onnx-community/all-MiniLM-L6-v2-ONNX";
/** The window the worker gives the chunker: the model's 256 tokens less [CLS] and [SEP]. */
const WINDOW = 254;
const LIMITS = { timeoutMs: 30_000, maxRssBytes: 1024 * 1024 * 1024 };
const enc = (s: string) => new TextEncoder().encode(s);
// Real models and child processes: allow time, on two shared cores.
setDefaultTimeout(60_000);

let countTokens: (t: string) => number;
beforeAll(async () => {
  configure({ modelsDir: TEST_MODELS_DIR, offline: true });
  const tokenizer = await AutoTokenizer.from_pretrained(MODEL);
  countTokens = (t) => tokenizer.encode(t, { add_special_tokens: false }).length;
});

/** Parts of `doc` no chunk covers, other than whitespace. */
function uncovered(doc: string, chunks: { charStart: number; charEnd: number }[]): string {
  const covered = new Uint8Array(doc.length);
  for (const c of chunks) covered.fill(1, c.charStart, c.charEnd);
  let rest = "";
  for (let i = 0; i < doc.length; i++) if (!covered[i]) rest += doc[i];
  return rest.trim();
}

const docText = (sections: Section[]) => sections.map((s) => s.text).join("\n\n");

describe("chunk explosion", () => {
  test("a 17 KB CSV of 300 columns × 2,000 rows: chunks proportional to its tokens, none over the window, nothing lost", async () => {
    const csv = wideCsv(300, 2000);
    expect(csv.byteLength).toBeLessThan(20_000);
    const sections = await parseDocument("csv", csv);
    const started = performance.now();
    const chunks = chunkSections(sections, { maxTokens: WINDOW, overlapTokens: 32, countTokens });
    const ms = performance.now() - started;
    const doc = docText(sections);
    const tokens = countTokens(doc);
    // Each chunk's body takes at least a quarter of the window and moves on by at least half of itself.
    const bound = Math.ceil((8 * tokens) / WINDOW) + sections.length;
    expect(chunks.length).toBeLessThanOrEqual(bound);
    for (const c of chunks) expect(c.tokens).toBeLessThanOrEqual(WINDOW);
    expect(uncovered(doc, chunks)).toBe("");
    expect(ms).toBeLessThan(10_000);
  });

  test("the overlap always moves a chunk on by a real stride, even with a large overlap", () => {
    const words = (t: string) => t.split(/\s+/).filter(Boolean).length;
    const text = Array.from({ length: 1000 }, (_, i) => `r${i}`).join("\n");
    const chunks = chunkSections([{ text, headings: [] }], { maxTokens: 20, overlapTokens: 1000, countTokens: words });
    for (let i = 1; i < chunks.length; i++) expect(chunks[i]!.charStart).toBeGreaterThan(chunks[i - 1]!.charStart);
    expect(chunks.length).toBeLessThanOrEqual(Math.ceil((4 * 1000) / 20) + 1);
    expect(uncovered(text, chunks)).toBe("");
  });
});

describe("caps on parsed documents", () => {
  test("60 KB of nested JSON no longer writes its full path for every leaf, and may not expand past 16× its size", async () => {
    const json = nestedJson(60_000);
    const started = performance.now();
    // Bounded paths still give ~60× here (thousands of chunks, minutes of embedding): refused, fast.
    await expect(parseDocument("json", json)).rejects.toThrow(/over 16× its size \(the limit for JSON and XML\)/);
    expect(performance.now() - started).toBeLessThan(2000);
    // Without the expansion cap the flattening itself is bounded (was ~1,500×, hundreds of MB).
    const sections = await parseDocument("json", json, { maxSections: 1e6, maxTextBytes: 1 << 30 });
    expect(JSON.stringify(sections).length).toBeLessThan(100 * json.byteLength);
    // Ordinary JSON of the same size (records) is far below the cap.
    const records = enc(JSON.stringify(Array.from({ length: 600 }, (_, i) => ({ id: i, name: `item ${i}`, tags: ["a", "b"], owner: { email: `u${i}@x.test` } }))));
    const ok = await parseDocument("json", records);
    expect(docText(ok).length).toBeLessThan(16 * records.byteLength);
  });

  test("a document over the section or text cap fails naming the limit", async () => {
    const rows = "a,b\n" + Array.from({ length: 5000 }, (_, i) => `${i},x`).join("\n");
    const tooMany = parseDocument("csv", enc(rows), { maxSections: 10, maxTextBytes: 1 << 30 });
    await expect(tooMany).rejects.toBeInstanceOf(ParseError);
    await expect(parseDocument("csv", enc(rows), { maxSections: 10, maxTextBytes: 1 << 30 })).rejects.toThrow(/more than 10 sections/);
    await expect(parseDocument("json", nestedJson(60_000), { maxSections: 1e6, maxTextBytes: 100_000 })).rejects.toThrow(/more than 0\.1 MB of text/);
    await expect(parseDocument("txt", enc("word ".repeat(50_000)), { maxSections: 1e6, maxTextBytes: 100_000 })).rejects.toThrow(/more than 0\.1 MB of text/);
  });

  test("the server reads at most the output cap from the parser child", async () => {
    const big = () => enc("lorem ipsum dolor ".repeat(20_000)); // ~360 KB of parsed text (parseIsolated takes the bytes)
    const r = parseIsolated("txt", big(), { ...LIMITS, maxOutputBytes: 64 * 1024 });
    await expect(r).rejects.toBeInstanceOf(ParseError);
    await expect(parseIsolated("txt", big(), { ...LIMITS, maxOutputBytes: 64 * 1024 })).rejects.toThrow(/more than 0\.06 MB/);
    expect(sectionsOf(await parseIsolated("txt", big(), LIMITS)).reduce((n, s) => n + s.text.length, 0)).toBeGreaterThan(300_000);
  });
});

describe("zip bombs", () => {
  const failure = async (bytes: Uint8Array) => {
    const started = performance.now();
    const [r] = await Promise.allSettled([parseIsolated("docx", bytes, LIMITS)]);
    expect(r.status).toBe("rejected");
    expect((r as PromiseRejectedResult).reason).toBeInstanceOf(ParseError);
    return { message: String((r as PromiseRejectedResult).reason.message), ms: performance.now() - started };
  };

  test("a DOCX that says it inflates to 2 GB fails at once, naming the 256 MB cap (it ran into the parser's memory cap seconds later)", async () => {
    const { message, ms } = await failure(makeZipBombDocx(2000));
    expect(message).toBe("the DOCX inflates to more than 256 MB (the limit per document)");
    expect(ms).toBeLessThan(3000);
  });

  test("one whose sizes lie is stopped while it inflates, not after", async () => {
    const { message, ms } = await failure(makeZipBombDocx(2000, 1000));
    expect(message).toBe("not a readable DOCX: word/document.xml inflates to more than the 1000 bytes it declares");
    expect(ms).toBeLessThan(3000);
  });

  describe("at upload", () => {
    let h: Harness;
    let jwt: string;
    let ws: string;
    beforeAll(async () => {
      h = await createHarness();
      jwt = await h.login();
      ws = await defaultWorkspaceId(h, jwt);
    });
    afterAll(() => h.close());
    const upload = (name: string, bytes: Uint8Array) => uploadFile(h, jwt, ws, name, bytes);
    const count = (table: string) => (h.services.storage.sqlite.query(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;

    test("a DOCX whose directory says 2 GB is refused with 422 naming the cap, and nothing is stored or queued", async () => {
      const r = await upload("bomb.docx", makeZipBombDocx(2000));
      expect(r.status).toBe(422);
      expect(r.body.message).toBe("bomb.docx inflates to more than 256 MB (the limit per document)");
      expect([count("knowledge_files"), count("knowledge_content_pieces"), count("jobs")]).toEqual([0, 0, 0]);
    });

    test("one whose sizes lie is stored and then fails in the parser child; an ordinary DOCX is stored", async () => {
      const liar = await upload("liar.docx", makeZipBombDocx(2000, 1000));
      expect(liar.status).toBe(202);
      const docx = await upload("runbook.docx", await makeDocx([{ h: 1, text: "Runbook" }, "Restart the daemon with code RB-5512."]));
      expect(docx.status).toBe(202);
      h.services.start();
      await h.services.jobs.idle();
      const state = async (id: string) => (await h.call("GET", `/api/knowledge-base/storage/file/${id}`, { token: jwt })).body.data;
      expect(await state(liar.body.data.id)).toMatchObject({ status: "failed", error: "not a readable DOCX: word/document.xml inflates to more than the 1000 bytes it declares" });
      expect(await state(docx.body.data.id)).toMatchObject({ status: "ready" });
    });
  });

  test("the directory's declared sizes are read from its tail: JSZip's own figures; anything unreadable is left to the parser", async () => {
    const docx = await makeDocx([{ h: 1, text: "Runbook" }, "Restart the daemon with code RB-5512."]);
    const { default: JSZip } = await import("jszip");
    const zip = await JSZip.loadAsync(docx);
    const sizes = Object.values(zip.files).map((f) => (f as unknown as { _data: { uncompressedSize: number } })._data.uncompressedSize);
    expect(await declaredInflatedBytes(new Blob([docx]))).toBe(sizes.reduce((a, b) => a + b, 0));
    // A zip comment after the end record (up to 64 KB) does not hide it.
    const commented = new Uint8Array(docx.byteLength + 1000);
    commented.set(docx);
    new DataView(commented.buffer).setUint16(docx.byteLength - 2, 1000, true);
    expect(await declaredInflatedBytes(new Blob([commented]))).toBe(sizes.reduce((a, b) => a + b, 0));
    expect(await declaredInflatedBytes(new Blob([makeZipBombDocx(40)]))).toBeGreaterThan(40 * 1024 * 1024);
    expect(await declaredInflatedBytes(new Blob([docx.subarray(0, docx.byteLength - 30)]))).toBeUndefined();
    expect(await declaredInflatedBytes(new Blob([enc("not a zip at all")]))).toBeUndefined();
    expect(await declaredInflatedBytes(new Blob([]))).toBeUndefined();
  });

  test("the cap counts what the entries inflate to; an ordinary DOCX is far below it", async () => {
    const caps = { ...PARSE_CAPS, maxInflatedBytes: 16 * 1024 * 1024 };
    await expect(parseDocument("docx", makeZipBombDocx(40), caps)).rejects.toThrow("the DOCX inflates to more than 16 MB (the limit per document)");
    const docx = await makeDocx([{ h: 1, text: "Runbook" }, "Restart the daemon with code RB-5512."]);
    const sections = await parseDocument("docx", docx, { ...PARSE_CAPS, maxInflatedBytes: 64 * 1024 });
    expect(sections).toEqual([{ text: "Restart the daemon with code RB-5512.", headings: ["Runbook"] }]);
  });
});

describe("the parser child", () => {
  const quick = async (format: "xml" | "md", bytes: Uint8Array) => {
    const started = performance.now();
    const r = await Promise.allSettled([parseIsolated(format, bytes, LIMITS)]);
    return { ms: performance.now() - started, result: r[0]! };
  };

  test("500 KB of `<` (and its variants) in XML parse or fail in well under the timeout", async () => {
    for (const bytes of [openAngles("<"), openAngles("</"), openAngles("<a/"), openAngles("<a ")]) {
      const { ms, result } = await quick("xml", bytes);
      if (result.status === "rejected") expect(String(result.reason.message)).not.toMatch(/longer than/);
      expect(ms).toBeLessThan(2000);
    }
    // The parser's own message quotes the whole tag: the child cuts it, so the reason survives.
    const { result } = await quick("xml", openAngles("<"));
    expect(result.status).toBe("rejected");
    const reason = String((result as PromiseRejectedResult).reason.message);
    expect(reason).toStartWith("not well-formed XML");
    expect(reason.length).toBeLessThan(400);
  });

  test("a Markdown heading padded with 500 KB of spaces parses in well under the timeout", async () => {
    const { ms, result } = await quick("md", spacedHeading(500_000));
    expect(result.status).toBe("fulfilled");
    const [heading] = sectionsOf((result as PromiseFulfilledResult<string[]>).value)[0]!.headings;
    expect([heading!.at(0), heading!.at(-1), heading!.length]).toEqual(["a", "b", 500_002]);
    expect(ms).toBeLessThan(2000);
    const hashes = await quick("md", enc(`# a${"#".repeat(500_000)}b\n# c ${"#".repeat(500_000)}`));
    expect(hashes.result.status).toBe("fulfilled");
    expect(sectionsOf((hashes.result as PromiseFulfilledResult<string[]>).value).map((s) => s.headings[0]!.length)).toEqual([500_002, 1]);
    expect(hashes.ms).toBeLessThan(2000);
  });

  test("gets a minimal environment: no Hearth secret, nothing but what it needs", async () => {
    process.env.HEARTH_JWT_SECRET = "s".repeat(40);
    process.env.HEARTH_TEST_SECRET = "do-not-leak";
    try {
      const parsing = parseIsolated("docx", slowDocx(), { timeoutMs: 4000, maxRssBytes: 8 * 1024 ** 3 }).catch(() => undefined);
      let environ: string[] | undefined;
      for (let tries = 0; tries < 300 && !environ; tries++) {
        for (const pid of readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
          try {
            const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
            const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
            if (ppid !== process.pid || !readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("__parse")) continue;
            environ = readFileSync(`/proc/${pid}/environ`, "utf8").split("\0").filter(Boolean);
          } catch {
            // the process ended while we looked
          }
        }
        if (!environ) await Bun.sleep(10);
      }
      await parsing;
      expect(environ).toBeDefined();
      const names = environ!.map((e) => e.slice(0, e.indexOf("=")));
      expect(names).not.toContain("HEARTH_JWT_SECRET");
      expect(names).not.toContain("HEARTH_TEST_SECRET");
      for (const n of names) expect(["PATH", "LANG", "LC_ALL", "TZ", "TMPDIR", "HEARTH_PARSE_CHILD"]).toContain(n);
    } finally {
      delete process.env.HEARTH_JWT_SECRET;
      delete process.env.HEARTH_TEST_SECRET;
    }
  });
});

describe("fair ingestion between workspaces", () => {
  const open: { storage: Storage; dir: string }[] = [];
  afterAll(() => {
    for (const o of open.splice(0)) {
      o.storage.close();
      rmSync(o.dir, { recursive: true, force: true });
    }
  });

  test("the queue takes turns between groups: B's one job runs before A's backlog drains", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hearth-fair-"));
    const storage = await openStorage(dir);
    migrate(storage.db);
    open.push({ storage, dir });
    const queue = createJobQueue({ db: storage.db, clock: manualClock(), log: silentLogger });
    const order: string[] = [];
    queue.register(INGEST, async (p) => void order.push(p.name));
    for (let i = 1; i <= 10; i++) queue.enqueue(INGEST, { name: `A${i}` }, { group: "A" });
    queue.enqueue(INGEST, { name: "B1" }, { group: "B" });
    for (let i = 1; i <= 3; i++) queue.enqueue(INGEST, { name: `C${i}` }, { group: "C" });
    queue.start();
    await queue.idle();
    await queue.stop();
    expect(order.slice(0, 6)).toEqual(["A1", "B1", "C1", "A2", "C2", "A3"]);
    expect(order).toHaveLength(14);
  });

  test("with two slots and one per group, B's job runs while A's long job still holds the other slot", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hearth-fair-"));
    const storage = await openStorage(dir);
    migrate(storage.db);
    open.push({ storage, dir });
    const queue = createJobQueue({ db: storage.db, clock: manualClock(), log: silentLogger });
    let releaseA!: () => void;
    const aHolds = new Promise<void>((r) => (releaseA = r));
    const events: string[] = [];
    let bDone!: () => void;
    const bFinished = new Promise<void>((r) => (bDone = r));
    queue.register(
      INGEST,
      async (p) => {
        events.push(`start ${p.name}`);
        if (p.name.startsWith("A")) await aHolds;
        events.push(`end ${p.name}`);
        if (p.name === "B1") bDone();
      },
      { concurrency: 2, perGroup: 1 },
    );
    for (let i = 1; i <= 20; i++) queue.enqueue(INGEST, { name: `A${i}` }, { group: "A" });
    queue.start();
    queue.enqueue(INGEST, { name: "B1" }, { group: "B" });
    queue.wake();
    await bFinished;
    expect(events).toEqual(["start A1", "start B1", "end B1"]); // A's second file did not take B's slot
    releaseA();
    await queue.idle();
    await queue.stop();
    expect(events.filter((e) => e.startsWith("end"))).toHaveLength(21);
  });

  describe("uploads", () => {
    let h: Harness;
    let jwt: string;
    beforeAll(async () => {
      h = await createHarness({ HEARTH_MAX_CHUNKS_PER_FILE: "5" });
      jwt = await h.login();
    });
    afterAll(() => h.close());

    const upload = (ws: string, name: string, text: string) => uploadFile(h, jwt, ws, name, text);
    const fileOf = async (id: string) => (await h.call("GET", `/api/knowledge-base/storage/file/${id}`, { token: jwt })).body.data;
    const firstChunk = (fileId: string) =>
      (h.services.storage.sqlite.query("SELECT min(id) AS id FROM knowledge_chunks WHERE file_id = ?").get(fileId) as { id: number }).id;

    test("workspace B's upload is ingested before workspace A's queued backlog", async () => {
      const a = await defaultWorkspaceId(h, jwt);
      const b = (await h.call("POST", "/api/products", { token: jwt, body: { name: "Workspace B" } })).body.data.id;
      const backlog = [];
      for (let i = 0; i < 6; i++) backlog.push((await upload(a, `a${i}.txt`, `Backlog file ${i} of workspace A.`)).body.data.id);
      const small = (await upload(b, "b.txt", "The small upload of workspace B.")).body.data.id;
      h.services.start();
      await h.services.jobs.idle();
      for (const id of [...backlog, small]) expect((await fileOf(id)).status).toBe("ready");
      expect(firstChunk(small)).toBeLessThan(firstChunk(backlog[2]!));
    });

    test("a file over the chunk cap ends failed naming the limit; the next file is fine", async () => {
      const ws = await defaultWorkspaceId(h, jwt);
      const long = Array.from({ length: 40 }, (_, i) => `Paragraph ${i}. ${"Words that fill the chunk window quickly. ".repeat(30)}`).join("\n\n");
      const big = (await upload(ws, "long.txt", long)).body.data.id;
      const fine = (await upload(ws, "short.txt", "A short note that fits in one chunk.")).body.data.id;
      await h.services.jobs.idle();
      const failed = await fileOf(big);
      expect(failed.status).toBe("failed");
      expect(failed.error).toMatch(/more than 5 chunks/);
      expect(failed.chunk_count).toBe(0);
      expect((await fileOf(fine)).status).toBe("ready");
    });
  });
});
