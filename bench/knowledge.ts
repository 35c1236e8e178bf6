// Knowledge suite: ingestion vs the bare embedder, search latency at 10k/100k chunks, quantized vector pre-filters, GET p99 and RSS while a big PDF ingests.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { openStorage } from "../src/platform/db/database";
import { loadEmbedder, type LoadedEmbedder } from "../src/platform/ml/transformers";
import { EMBED_BATCH } from "../src/features/knowledge/ingest/pipeline";
import { clusteredVectors, handbook, QUESTIONS } from "./lib/corpus";
import { cpuMeter, deleteFile, memoryOf, openSession, upload, waitForEmbedder, waitReady, type Session } from "./lib/hearth-api";
import { pdfIngest } from "./lib/knowledge-pdf";
import { measureSearch, MODES, populate, syntheticFile, TOP_K, type SearchBudget, type SizeResult } from "./lib/knowledge-search";
import { baseEnv, startServer, type ServerSpec } from "./lib/servers";
import { median } from "./lib/stats";
import { measurement, type MeasurementInput, type Suite, type SuiteContext } from "./lib/suite";
import { prepareTargets } from "./lib/targets";
import { meanPairCosine, quantizedExperiment, sliceSet, type VectorSet } from "./lib/vector-lab";

const MODEL = "onnx-community/all-MiniLM-L6-v2-ONNX";
const EMAIL = "bench@localhost";
const CORPUS = { seed: 7, sections: 40, paragraphs: 8 }; // ≈ 210 chunks of ≈ 180 tokens
const POLL_MS = 100; // coarse enough not to steal CPU from the 2-thread ONNX runtime; ≤ 0.6% of a run
const SIZES = [10_000, 100_000] as const;
const BUDGETS: Record<(typeof SIZES)[number], SearchBudget> = {
  10_000: { e2e: { warmup: 3, count: 100, maxMs: 2_500 }, stage: { count: 200, maxMs: 1_000 }, floor: { count: 100, maxMs: 1_000 }, keywordStage: true },
  100_000: { e2e: { warmup: 2, count: 40, maxMs: 4_000 }, stage: { count: 40, maxMs: 3_000 }, floor: { count: 20, maxMs: 2_000 }, keywordStage: true },
};
const QUANT = { k: TOP_K, maxMsPerVariant: 2_000, rounds: 5 };
const PDF = { pages: 1_200, maxBuildMs: 8_000, targetBytes: 52_000_000 };
const INGEST_WINDOW_MS = 40_000;
const SYNTHETIC_NOISE = 1.0;
const IDLE_MS = 4_000;
const GOALS = { ingestRatio: 0.85, stageP95Ms: 5, e2eP95Ms: 25, p99Ratio: 2 };

const kLabel = (n: number) => `${n / 1000}k`;
const secs = (ms: number | undefined) => (ms === undefined || !Number.isFinite(ms) ? "not reached" : `${(ms / 1000).toFixed(1)} s`);
const cores = (l: { oursCores: number; otherCores: number }) => `${l.oursCores.toFixed(2)} cores bench+Hearth, ${l.otherCores.toFixed(2)} cores other processes`;

/** One timed Hearth ingestion (upload → ready, polled) with when it was parsed and stored and the CPU it took. */
async function hearthRun(s: Session, serverPid: number, name: string, bytes: Uint8Array) {
  const cpu = cpuMeter([process.pid, serverPid]);
  const t0 = performance.now();
  const queued = await upload(s, name, bytes);
  const r = await waitReady(s, queued.id, { pollMs: POLL_MS, timeoutMs: 180_000, t0 });
  const ms = performance.now() - t0;
  if (r.file.status !== "ready") throw new Error(`${name} not ready after 180 s (${r.file.status}, ${r.file.progress})`);
  return { ...r, ms, load: cpu() };
}

/** 1. The handbook through Hearth, the same chunk texts through the bare embedder, both twice, alternating (drift cancels). */
async function ingestion(ctx: SuiteContext, s: Session, serverPid: number, dataDir: string, modelsDir: string) {
  const text = handbook(CORPUS.seed, CORPUS.sections, CORPUS.paragraphs);
  const md = new TextEncoder().encode(text);
  ctx.log(`ingesting handbook.md (${(md.length / 1024).toFixed(0)} KB) through Hearth`);
  const rssBefore = memoryOf(serverPid);
  const first = await hearthRun(s, serverPid, "handbook.md", md);
  const rssAfter = memoryOf(serverPid);

  const storage = await openStorage(dataDir);
  const rows = storage.sqlite.query<{ id: number; text: string }, [string]>("SELECT id, text FROM knowledge_chunks WHERE file_id = ? ORDER BY ordinal").all(first.file.id);
  const kb = storage.sqlite.query<{ id: string; productId: string }, [string]>("SELECT knowledge_base_id AS id, product_id AS productId FROM knowledge_files WHERE id = ?").get(first.file.id)!;
  ctx.log(`Hearth: ${rows.length} chunks in ${(first.ms / 1000).toFixed(1)} s; now the bare embedder on the same texts`);
  const embedder: LoadedEmbedder = await loadEmbedder({ modelsDir, model: MODEL, offline: true });
  const bare = async () => {
    const cpu = cpuMeter([process.pid, serverPid]);
    const out: Float32Array[] = [];
    const t = performance.now();
    for (let i = 0; i < rows.length; i += EMBED_BATCH) out.push(...(await embedder.embed(rows.slice(i, i + EMBED_BATCH).map((r) => r.text))));
    return { ms: performance.now() - t, vectors: out, load: cpu() };
  };
  const bareRuns = [await bare()];
  const vectors = bareRuns[0]!.vectors;
  const queryVectors: Float32Array[] = [];
  const queryMs: number[] = [];
  for (const q of QUESTIONS) {
    const t = performance.now();
    queryVectors.push(...(await embedder.embed([q])));
    queryMs.push(performance.now() - t);
  }

  // Only the title differs, so the chunks are the same; the copy is deleted again before the search part.
  ctx.log(`bare: ${(bareRuns[0]!.ms / 1000).toFixed(1)} s; Hearth again (handbook-copy.md), then bare again`);
  const second = await hearthRun(s, serverPid, "handbook-copy.md", new TextEncoder().encode(text.replace("# Operations handbook", "# Operations handbook, copy")));
  await deleteFile(s, second.file.id);
  bareRuns.push(await bare());
  return { storage, kb, rows, vectors, queryVectors, runs: [first, second], bareRuns: bareRuns.map(({ ms, load }) => ({ ms, load })), queryEmbedMs: median(queryMs), rssBefore, rssAfter, bytes: md.length };
}

/** The 100k-vector set: the real chunk vectors first, then clustered synthetic ones with fresh chunk ids. */
function vectorSet(real: { ids: number[]; vectors: Float32Array[] }, n: number, dim: number): VectorSet {
  const flat = new Float32Array(n * dim);
  const ids = new Int32Array(n);
  real.vectors.forEach((v, i) => flat.set(v, i * dim));
  real.ids.forEach((id, i) => (ids[i] = id));
  flat.set(clusteredVectors(real.vectors, n - real.ids.length, dim, 99, SYNTHETIC_NOISE), real.ids.length * dim);
  const next = Math.max(...real.ids) + 1;
  for (let i = real.ids.length; i < n; i++) ids[i] = next + i;
  return { flat, ids, n, dim };
}

async function run(ctx: SuiteContext) {
  const targets = await prepareTargets(ctx);
  const { modelsDir } = ctx;
  const password = `bench-${crypto.randomUUID()}`;
  const spec = (dataDir: string): ServerSpec => ({
    name: "hearth",
    cmd: [...targets.hearth, "serve", "--host", "127.0.0.1", "--port", "0"],
    env: baseEnv({ HEARTH_DATA_DIR: dataDir, HEARTH_MODELS_DIR: modelsDir, HEARTH_ADMIN_EMAIL: EMAIL, HEARTH_ADMIN_PASSWORD: password, HEARTH_OFFLINE: "1", HEARTH_RATE_LIMIT: "1000000", HEARTH_RATE_LIMIT_STRICT: "1000000" }),
    cwd: ctx.root,
  });
  const inputs: MeasurementInput[] = [];
  const notes: string[] = [...targets.notes];
  // 4 runs first, while the bench process is still small (no model, no 100k vectors): its client's GC stays out of the p99.
  const pdf = await pdfIngest(ctx, spec, { ...PDF, windowMs: INGEST_WINDOW_MS, idleMs: IDLE_MS, email: EMAIL, password });
  const dataDir = join(ctx.tmp, "search");
  mkdirSync(dataDir);

  const server = await startServer(spec(dataDir), 30_000);
  let set!: VectorSet;
  let queryVectors!: Float32Array[];
  let realChunks = 0;
  let queryEmbedMs = Number.NaN;
  let part1!: { runs: { ms: number; parsedMs?: number; storedMs?: number; load: ReturnType<ReturnType<typeof cpuMeter>> }[]; bareRuns: { ms: number; load: ReturnType<ReturnType<typeof cpuMeter>> }[] };
  const sizes: SizeResult[] = [];
  try {
    const session = await openSession(server, EMAIL, password);
    const loadMs = await waitForEmbedder(session.base, 60_000);
    ctx.log(`Hearth up (${targets.mode}); embedder ready after ${(loadMs / 1000).toFixed(1)} s`);
    const ing = await ingestion(ctx, session, server.pid, dataDir, modelsDir);
    queryVectors = ing.queryVectors;
    queryEmbedMs = ing.queryEmbedMs;
    const n = ing.rows.length;
    realChunks = n;
    const hearthMs = ing.runs.reduce((sum, r) => sum + r.ms, 0);
    const hearthChunks = ing.runs.reduce((sum, r) => sum + r.file.chunk_count, 0);
    const hearthRate = hearthChunks / (hearthMs / 1000);
    const bareMs = ing.bareRuns.reduce((sum, r) => sum + r.ms, 0) / ing.bareRuns.length;
    const bareRate = n / (bareMs / 1000);
    const runs = ing.runs.map((r) => ({ ms: r.ms, chunks: r.file.chunk_count, parsedMs: r.parsedMs, storedMs: r.storedMs, load: r.load }));
    inputs.push(
      { name: `ingestion, handbook.md → ready (${n} chunks, ${ing.runs.length} runs)`, unit: "chunks/s", value: hearthRate, baseline: bareRate, baselineName: `bare embedder, same texts, batches of ${EMBED_BATCH}`, goal: { on: "ratio", kind: "min", limit: GOALS.ingestRatio }, details: { runs, bareRuns: ing.bareRuns, bytes: ing.bytes } },
      { name: "ingestion wall time per run, upload → ready", unit: "s", value: hearthMs / ing.runs.length / 1000, baseline: bareMs / 1000, baselineName: "bare embedder time per run" },
      { name: "server RSS after ingesting handbook.md", unit: "MB", value: ing.rssAfter.rss, baseline: ing.rssBefore.rss, baselineName: "server RSS before" },
    );
    part1 = { runs, bareRuns: ing.bareRuns };
    // 2. Search at 10k and 100k chunks in one knowledge base.
    set = vectorSet({ ids: ing.rows.map((r) => r.id), vectors: ing.vectors }, SIZES[SIZES.length - 1]!, ing.vectors[0]!.length);
    const synthetic = syntheticFile(ing.storage, ing.kb);
    let filled = n;
    for (const size of SIZES) {
      const ms = populate(ing.storage, ing.kb, synthetic, set, filled, size);
      ctx.log(`knowledge base now ${kLabel(size)} chunks (+${size - filled} in ${(ms / 1000).toFixed(1)} s); timing search`);
      filled = size;
      const r = await measureSearch(session, server, ing.storage, ing.kb.id, sliceSet(set, size), QUESTIONS, queryVectors, BUDGETS[size]);
      sizes.push(r);
      const big = size === SIZES[SIZES.length - 1];
      for (const mode of MODES) {
        const e = r.e2e[mode];
        inputs.push({ name: `search ${mode}, ${kLabel(size)} chunks, HTTP p50`, unit: "ms", value: e.p50, details: e, digits: 2 });
        inputs.push({ name: `search ${mode}, ${kLabel(size)} chunks, HTTP p95`, unit: "ms", value: e.p95, goal: big ? { on: "value", kind: "max", limit: GOALS.e2eP95Ms } : undefined, digits: 2 });
      }
      const floor = { baselineName: "plain JS cosine loop, same vectors" };
      inputs.push({ name: `vector stage (VectorStore.search), ${kLabel(size)}, p50`, unit: "ms", value: r.stage.p50, baseline: r.floor.p50, ...floor, details: { stage: r.stage, floor: r.floor, agreement: r.stageFloorAgreement }, digits: 2 });
      inputs.push({ name: `vector stage (VectorStore.search), ${kLabel(size)}, p95`, unit: "ms", value: r.stage.p95, baseline: r.floor.p95, ...floor, goal: big ? { on: "value", kind: "max", limit: GOALS.stageP95Ms } : undefined, digits: 2 });
      inputs.push({ name: `vector stage recall@${TOP_K} vs the exact JS floor, ${kLabel(size)}`, unit: "%", value: r.stageFloorAgreement * 100, baseline: 100, ...floor });
      if (r.keyword) {
        const kw = r.keyword;
        inputs.push({ name: `keyword stage (KeywordStore.search), ${kLabel(size)}, p50`, unit: "ms", value: kw.latency.p50, details: kw, digits: 2 });
        inputs.push({ name: `keyword stage (KeywordStore.search), ${kLabel(size)}, p95`, unit: "ms", value: kw.latency.p95, digits: 2, note: `a question's FTS5 query matches ${kw.matched.median} chunks (median), ${kw.matched.max} at most; BM25 scores every match` });
      }
    }
    ing.storage.close();
  } catch (e) {
    process.stderr.write(`hearth stderr (tail):\n${server.stderrTail()}\n`);
    throw e;
  } finally {
    await server.stop();
  }

  // 3. Quantized pre-filter vs the exact float scan, same 100k vectors, own temp database.
  ctx.log("quantized pre-filter experiment (own sqlite-vec database)");
  const quant = await quantizedExperiment(join(ctx.tmp, "quant"), set, queryVectors, QUANT, ctx.log);
  const exact = quant.results[0]!;
  for (const v of quant.results) {
    const isExact = v === exact;
    const base = isExact ? {} : { baseline: exact.latency.p50, baselineName: "exact float[384] vec0 scan" };
    inputs.push({ name: `${kLabel(set.n)} ${v.name}, p50`, unit: "ms", value: v.latency.p50, ...base, details: v, digits: 2 });
    inputs.push({ name: `${kLabel(set.n)} ${v.name}, p95`, unit: "ms", value: v.latency.p95, ...(isExact ? {} : { baseline: exact.latency.p95, baselineName: "exact float[384] vec0 scan" }), digits: 2 });
    if (!isExact) inputs.push({ name: `${kLabel(set.n)} ${v.name}, recall@${TOP_K}`, unit: "%", value: v.recall * 100, baseline: 100, baselineName: "exact" });
  }

  // 4. A big PDF on a fresh server (measured first, reported last).
  for (const r of pdf.results) {
    inputs.push(
      { name: `${r.name} p99 while the PDF ingests`, unit: "µs", value: r.during.p99, baseline: r.idle.p99, baselineName: "same GET, idle", goal: { on: "ratio", kind: "max", limit: GOALS.p99Ratio }, details: r },
      { name: `${r.name} p50 while the PDF ingests`, unit: "µs", value: r.during.p50, baseline: r.idle.p50, baselineName: "same GET, idle" },
    );
  }
  inputs.push(
    { name: "slowest of those GETs while the PDF ingests", unit: "µs", value: pdf.maxDuring, baseline: Math.max(...pdf.results.map((r) => r.idle.max)), baselineName: "slowest idle", details: { stalls: pdf.stalls } },
    { name: "server peak RSS while the PDF ingests (VmRSS polled)", unit: "MB", value: pdf.mem.rss, baseline: pdf.idleRss.rss, baselineName: "idle RSS before the upload", details: pdf.mem, note: `peak ${secs(pdf.mem.rssAtMs)} after the upload started` },
    { name: "server VmHWM after the window", unit: "MB", value: pdf.mem.hwm, baseline: pdf.idleRss.hwm, baselineName: "VmHWM before the upload" },
    { name: "parser child peak RSS (VmRSS polled)", unit: "MB", value: pdf.mem.childRss, note: `peak ${secs(pdf.mem.childRssAtMs)} after the upload started` },
  );

  const s100 = sizes[sizes.length - 1]!;
  const density = meanPairCosine(set.flat.subarray(realChunks * set.dim), set.dim, 2_000);
  notes.push(
    `Hearth: ${targets.mode === "binary" ? "dist/hearth" : "bun src/main.ts"} as its own process on loopback; ingestion runs in its inference worker and parser child; model ${MODEL} (q4) from ${modelsDir}`,
    `1. corpus: a generated Markdown handbook (${CORPUS.sections} sections × ${CORPUS.paragraphs} paragraphs, seed ${CORPUS.seed}); Hearth = upload → status ready (polled every ${POLL_MS} ms) incl. parse child, chunking with the model tokenizer, SQLite writes; bare = loadEmbedder() in the bench process embedding the chunk texts Hearth stored, ${EMBED_BATCH} per call, model load excluded on both sides; order Hearth, bare, Hearth, bare (the second upload a copy differing only in its title); Hearth runs ${part1.runs.map((r) => `${secs(r.ms)} (parsed after ${secs(r.parsedMs)}, chunks stored after ${secs(r.storedMs)}, the rest embedding; CPU ${cores(r.load)})`).join(" and ")}; bare runs ${part1.bareRuns.map((r) => `${secs(r.ms)} (CPU ${cores(r.load)})`).join(" and ")}`,
    `2. knowledge base grown to 10k then 100k chunks: rows inserted straight into knowledge_chunks (FTS5 filled by its triggers; 3–5 generated sentences each, 1 in 10 on the handbook's topics, the rest on 1,000 made-up topics in made-up words with English function words, so the handbook's words are in at most ≈ 5% of the chunks) and vectors through VectorStore.put; vectors = the ${realChunks} real chunk embeddings plus synthetic unit vectors normalize(a + 0.6·b + noise) around pairs of them; noise norm ${SYNTHETIC_NOISE} (mean cosine of random pairs ${density.toFixed(2)}: denser than a real multi-topic corpus, so quantized recall here is on the pessimistic side); queries = ${QUESTIONS.length} questions (HTTP: JWT, top_k ${TOP_K}; vector stage: their model embeddings)`,
    `2. vector stage and JS floor agree on ${(s100.stageFloorAgreement * 100).toFixed(0)}% of the top-${TOP_K} at 100k (the JS floor is exact; the vector stage pre-filters by sign bits, then re-scores exactly: this is its recall@10); HTTP vector/hybrid search includes embedding the query in Hearth's worker (bare embedder, one question: median ${queryEmbedMs.toFixed(1)} ms here)`,
    `3. standalone sqlite-vec ${quant.vecVersion} database with the same 100k vectors as float[384] (cosine), bit[384] (vec_quantize_binary) and int8[384] (vec_quantize_int8 'unit') vec0 tables plus a plain id → float blob table for re-scoring (vec_distance_cosine over the candidates); JS codes = ${(quant.codeBytes / 1e6).toFixed(1)} MB of sign bits in memory, Hamming by popcount; recall@${TOP_K} vs the exact float scan over ${QUESTIONS.length} model-embedded questions; tables built in ${(quant.buildMs / 1000).toFixed(1)} s`,
    `4. PDF: ${(pdf.pdf.bytes.length / 1e6).toFixed(1)} MB (${(pdf.pdf.bytes.length / 2 ** 20).toFixed(1)} MiB) built with pdf-lib in ${(pdf.buildMs / 1000).toFixed(1)} s: ${pdf.pdf.pages} pages of text (${(pdf.pdf.textBytes / 1e6).toFixed(1)} MB of text) + ${(pdf.pdf.paddingBytes / 1e6).toFixed(1)} MB incompressible embedded attachment (a real 50 MB text-only PDF, ~35k pages, takes minutes to build and parse here); each GET's p99 is compared with its own idle p99, measured just before on the same server (idle p99 moves between runs, 0.4–1.4 ms here)`,
    `4. window ${(pdf.windowMs / 1000).toFixed(1)} s from upload start (upload sent by ${pdf.uploader}): uploaded ${secs(pdf.phases.uploaded)}, parsed ${secs(pdf.phases.parsed)}, chunks stored ${secs(pdf.phases.chunksStored)}; at the end status ${pdf.last.status}, progress ${pdf.last.progress.toFixed(2)}, ${pdf.last.chunk_count} chunks; ${pdf.count} GETs (JWT and API token in turn) on one keep-alive connection (idle: ${pdf.results.map((r) => r.idle.count).reduce((a, b) => a + b, 0)} in ${IDLE_MS / 1000} s); worst: ${pdf.stalls.map((x) => `${(x.us / 1000).toFixed(0)} ms at ${(x.at / 1000).toFixed(1)} s`).join(", ")}; p99 by phase: ${pdf.byPhase.map((p) => `${p.name} ${Number.isFinite(p.p99) ? `${(p.p99 / 1000).toFixed(1)} ms` : "-"} (${p.count})`).join(", ")}; CPU in the window: ${cores(pdf.load)}`,
    `4. server RSS (MB): idle ${pdf.idleRss.rss.toFixed(0)}, after the upload ${pdf.mem.rssAt(pdf.phases.uploaded + 300).toFixed(0)}, when parsed ${pdf.mem.rssAt(pdf.phases.parsed ?? Number.NaN).toFixed(0)}, when the chunks were stored ${pdf.mem.rssAt(pdf.phases.chunksStored ?? Number.NaN).toFixed(0)}, at the end ${pdf.mem.rssAt(Number.POSITIVE_INFINITY).toFixed(0)}`,
  );
  const info = { mode: targets.mode, model: MODEL, corpus: CORPUS, sizes: SIZES, budgets: BUDGETS, quant: QUANT, pdf: { ...PDF, bytes: pdf.pdf.bytes.length, pages: pdf.pdf.pages }, ingestWindowMs: INGEST_WINDOW_MS, idleMs: IDLE_MS, goals: GOALS, phases: pdf.phases };
  return { measurements: inputs.map((m) => measurement("knowledge", m)), info, notes };
}

export const knowledgeSuite: Suite = {
  name: "knowledge",
  description: "ingestion vs bare embedder, search p50/p95 at 10k/100k chunks, quantized pre-filter, GET p99 and RSS during a big PDF ingest",
  run,
};
