// Workspaces share the one inference worker fairly: a small embedding of workspace B waits for at
// most one sub-batch of workspace A's big batch, not for all of it (the real model).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createKnowledgeEmbedder, subBatches, SUB_BATCH_CHARS, type ChunkedPart, type KnowledgeEmbedder } from "../../../src/features/knowledge/embedder";
import { documentParts, PART_CHARS, type Chunk } from "../../../src/features/knowledge/ingest/chunk";
import type { Section } from "../../../src/features/knowledge/ingest/parse";
import { TEST_MODELS_DIR } from "../../support/models";

const MODEL = "onnx-community/all-MiniLM-L6-v2-ONNX";
const chunkText = (i: number) => Array.from({ length: 40 }, (_, j) => `record ${i}-${j} of the archive`).join(", ");

/** A document's chunking, every part together: its chunks, and its vectors when they came with it. */
async function chunkAll(embedder: KnowledgeEmbedder, sections: Section[], fileName: string, lane: string) {
  const out: { chunks: Chunk[]; parts: number; embedded?: ChunkedPart["embedded"] } = { chunks: [], parts: 0 };
  for await (const part of embedder.chunk(documentParts(sections), fileName, lane)) {
    out.chunks.push(...part.chunks);
    out.parts++;
    out.embedded = part.embedded;
  }
  return out;
}

describe("sub-batches", () => {
  test("about one chunk each, short texts together, order kept", () => {
    const long = "x".repeat(SUB_BATCH_CHARS + 10);
    expect(subBatches([long, "a", "b", long, "c"])).toEqual([[long], ["a", "b"], [long], ["c"]]);
    expect(subBatches([])).toEqual([]);
    expect(subBatches(Array.from({ length: 100 }, () => "y".repeat(100))).every((b) => b.length === 5)).toBe(true);
  });
});

describe("embedding lanes", () => {
  let embedder: KnowledgeEmbedder;
  beforeAll(async () => {
    embedder = createKnowledgeEmbedder({ modelsDir: TEST_MODELS_DIR, model: MODEL, offline: true, maxTokens: 256 });
    for (let i = 0; i < 600 && (await embedder.status()).state === "loading"; i++) await Bun.sleep(50);
    expect((await embedder.status()).state).toBe("ok");
  }, 60_000);
  afterAll(() => embedder.stop());

  test("B's one text is served before the rest of A's sixteen chunks", async () => {
    const aTexts = Array.from({ length: 16 }, (_, i) => chunkText(i));
    const single = await embedder.embed([chunkText(99)], "workspace:A"); // warm, and the same vector expected below
    const t0 = performance.now();
    let aMs = 0;
    let bMs = 0;
    const a = embedder.embed(aTexts, "workspace:A").then((r) => ((aMs = performance.now() - t0), r));
    await Bun.sleep(5);
    const b = embedder.embed([chunkText(99)], "workspace:B").then((r) => ((bMs = performance.now() - t0), r));
    const [ra, rb] = await Promise.all([a, b]);
    expect(bMs).toBeLessThan(aMs / 3);
    // Results are whole and in order despite the split.
    expect(ra.vectors).toHaveLength(16);
    expect(ra.dim).toBe(384);
    expect([...rb.vectors[0]!].map((x) => x.toFixed(4))).toEqual([...single.vectors[0]!].map((x) => x.toFixed(4)));
    const again = await embedder.embed([aTexts[7]!], "workspace:C");
    expect([...ra.vectors[7]!].map((x) => x.toFixed(4))).toEqual([...again.vectors[0]!].map((x) => x.toFixed(4)));
  }, 60_000);

  test("a small document comes back from chunking embedded (with its context line); a larger one does not", async () => {
    const small = await chunkAll(embedder, [{ text: "The badge office is on the second floor and opens at nine.", headings: ["Facilities"] }], "office-guide.md", "workspace:B");
    expect(small.chunks).toHaveLength(1);
    expect(small.chunks[0]!.text).toBe("The badge office is on the second floor and opens at nine.");
    expect(small.embedded?.vectors).toHaveLength(1);
    const direct = await embedder.embed(["office guide › Facilities\nThe badge office is on the second floor and opens at nine."]);
    expect([...small.embedded!.vectors[0]!].map((x) => x.toFixed(4))).toEqual([...direct.vectors[0]!].map((x) => x.toFixed(4)));
    const large = await chunkAll(embedder, [{ text: Array.from({ length: 12 }, (_, i) => chunkText(i)).join("\n\n"), headings: [] }], "archive.txt", "workspace:A");
    expect(large.chunks.length).toBeGreaterThan(1);
    expect(large.embedded).toBeUndefined();
  }, 60_000);

  test("a large document is chunked a part at a time: B's small file is served before the rest of A's, and A's offsets hold", async () => {
    // ~600 KB of one section (a .txt): ~1 s of tokenizing; as one request, B's file waited all of it.
    const paragraphs = Array.from({ length: 1200 }, (_, i) => `Paragraph ${i}. ${chunkText(i).slice(0, 480)}.`);
    const document = paragraphs.join("\n\n");
    const t0 = performance.now();
    let aMs = 0;
    let bMs = 0;
    const a = chunkAll(embedder, [{ text: document, headings: [] }], "archive.txt", "workspace:A").then((r) => ((aMs = performance.now() - t0), r));
    await Bun.sleep(20);
    const b = chunkAll(embedder, [{ text: "The badge office opens at nine.", headings: [] }], "note.txt", "workspace:B").then((r) => ((bMs = performance.now() - t0), r));
    const [ra, rb] = await Promise.all([a, b]);
    expect(ra.parts).toBeGreaterThanOrEqual(Math.floor(document.length / PART_CHARS));
    expect(bMs).toBeLessThan(aMs / 3);
    expect(rb.embedded?.vectors).toHaveLength(1);
    // Every chunk's offsets point at its own text in the whole document, and together they cover every paragraph.
    for (const c of ra.chunks) expect(document.slice(c.charStart, c.charEnd)).toBe(c.text);
    const covered = new Set(ra.chunks.flatMap((c) => [...c.text.matchAll(/Paragraph (\d+)\./g)].map((m) => Number(m[1]))));
    expect(covered.size).toBe(paragraphs.length);
    expect(ra.chunks.every((c) => c.tokens <= 254)).toBe(true);
  }, 60_000);
});

describe("health while the model loads", () => {
  test("/health's embedder check answers at once during the first load, then reports the model", async () => {
    const fresh = createKnowledgeEmbedder({ modelsDir: TEST_MODELS_DIR, model: MODEL, offline: true, maxTokens: 256 });
    try {
      expect((await fresh.health()).status).toBe("ok"); // files present, nothing loaded yet
      const first = chunkAll(fresh, [{ text: "The first upload loads the model.", headings: [] }], "first.txt", "workspace:A");
      const slowest = { ms: 0, states: new Set<string>() };
      let done = false;
      void first.finally(() => (done = true));
      while (!done) {
        const t0 = performance.now();
        const h = await fresh.health();
        slowest.ms = Math.max(slowest.ms, performance.now() - t0);
        slowest.states.add(h.status);
        await Bun.sleep(10);
      }
      expect((await first).chunks).toHaveLength(1);
      expect(slowest.states.has("loading")).toBe(true);
      expect(slowest.ms).toBeLessThan(50);
      for (let i = 0; i < 100 && (await fresh.health()).status !== "ok"; i++) await Bun.sleep(20);
      expect(await fresh.health()).toEqual({ status: "ok", detail: `${MODEL} (384 dimensions)` });
    } finally {
      await fresh.stop();
    }
  }, 60_000);
});
