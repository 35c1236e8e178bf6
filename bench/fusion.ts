// Fusion suite: ingests a labeled corpus into an in-process Hearth and compares ways of fusing vector and BM25 lists offline.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createHarness, defaultWorkspaceId, type Harness } from "../test/support/harness";
import { PASSAGES, type QueryType } from "./fixtures/fusion-corpus";
import { QUERIES } from "./fixtures/fusion-queries";
import { METHODS, METRICS, mean, pairedBootstrap, score, type Ranked, type Scores } from "./fusion-eval";
import { formatTable } from "./lib/report";
import { measurement, modelsDirOf, type Suite, type SuiteContext, type SuiteResult } from "./lib/suite";

const SUITE = "fusion";
/** How many hits each stage contributes to offline fusion. */
const DEPTH = 50;
/** The depth production fuses at the default top_k of 5 (4 candidates per result): a second, robustness pass. */
const SHALLOW = 20;
/** The production hybrid search (src/features/knowledge/fusion.ts), asked for 10 results (it then fuses 4 × 10 candidates of each stage). */
const CURRENT = "hybrid API (min-max α=0.5)";
const TYPES: QueryType[] = ["paraphrase", "identifier", "name", "mixed"];
/** Smallest overall nDCG@10 gain over the current hybrid that would justify changing it. */
const MEANINGFUL = 0.02;

interface Hit {
  file_name: string;
  score: number;
}

function checkCorpus() {
  const ids = new Set(PASSAGES.map((p) => p.id));
  if (ids.size !== PASSAGES.length) throw new Error("duplicate passage ids in the fusion corpus");
  for (const q of QUERIES) for (const r of q.relevant) if (!ids.has(r)) throw new Error(`query ${q.id} names unknown passage ${r}`);
  if (new Set(QUERIES.map((q) => q.id)).size !== QUERIES.length) throw new Error("duplicate query ids");
}

/** Uploads one Markdown file per passage and waits until every file is ingested; returns the chunk count per passage. */
async function ingest(h: Harness, jwt: string, ws: string): Promise<Map<string, number>> {
  const fileIds: [string, string][] = [];
  for (const p of PASSAGES) {
    const fd = new FormData();
    fd.append("file", new File([`# ${p.title}\n\n${p.text}\n`], `${p.id}.md`));
    fd.append("product_id", ws);
    const r = await h.call("POST", "/api/knowledge-base/storage/upload", { token: jwt, raw: fd });
    if (r.status !== 202) throw new Error(`upload of ${p.id} answered ${r.status}: ${r.text}`);
    fileIds.push([p.id, r.body.data.id]);
  }
  await h.services.jobs.idle();
  const chunks = new Map<string, number>();
  for (const [pid, fid] of fileIds) {
    const f = (await h.call("GET", `/api/knowledge-base/storage/file/${fid}`, { token: jwt })).body.data;
    if (f.status !== "ready" || !f.embedding_model) throw new Error(`${pid} ended ${f.status} (${f.error ?? "no vectors"})`);
    chunks.set(pid, f.chunk_count);
  }
  return chunks;
}

/** One stage's list through the public search endpoint, reduced to passages (first hit of each). */
async function stage(h: Harness, jwt: string, ws: string, query: string, mode: string, topK: number): Promise<Ranked[]> {
  const r = await h.call("POST", "/api/knowledge-base/embeddings", { token: jwt, body: { query, mode, product_id: ws, top_k: topK } });
  if (r.status !== 200) throw new Error(`${mode} search for "${query}" answered ${r.status}: ${r.text}`);
  const seen = new Map<string, number>();
  for (const hit of r.body.data as Hit[]) {
    const id = hit.file_name.replace(/\.md$/, "");
    if (!seen.has(id)) seen.set(id, hit.score);
  }
  return [...seen].map(([id, s]) => ({ id, score: s }));
}

/** A plain text table (first column left-aligned, the rest right-aligned). */
function textTable(header: string[], rows: string[][]): string {
  const all = [header, ...rows];
  const widths = header.map((_, i) => Math.max(...all.map((r) => r[i]!.length)));
  const line = (r: string[]) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("  ");
  return [line(header), widths.map((w) => "-".repeat(w)).join("  "), ...rows.map(line)].map((l) => `    ${l}`).join("\n");
}

export const fusionSuite: Suite = {
  name: SUITE,
  description: "hybrid search: RRF vs min-max/z-score linear fusion on a labeled corpus (recall@5, MRR@10, nDCG@10)",
  async run(ctx: SuiteContext): Promise<SuiteResult> {
    checkCorpus();
    const h = await createHarness({}, join(ctx.tmp, "data"));
    try {
      const jwt = await h.login();
      const ws = await defaultWorkspaceId(h, jwt);
      h.services.start();
      const t0 = performance.now();
      ctx.log(`ingesting ${PASSAGES.length} passages`);
      const chunks = await ingest(h, jwt, ws);
      const ingestMs = Math.round(performance.now() - t0);
      const multi = [...chunks].filter(([, n]) => n !== 1).map(([id, n]) => `${id}:${n}`);

      ctx.log(`searching ${QUERIES.length} queries (vector, keyword, hybrid)`);
      const names = [...METHODS.map((m) => m.name), CURRENT];
      const perQuery: { id: string; type: QueryType; query: string; scores: Record<string, Scores>; shallow: Record<string, Scores>; vectorTop: string[]; keywordTop: string[]; keywordHits: number }[] = [];
      for (const q of QUERIES) {
        const v = await stage(h, jwt, ws, q.query, "vector", DEPTH);
        const kw = await stage(h, jwt, ws, q.query, "keyword", DEPTH);
        const hybrid = await stage(h, jwt, ws, q.query, "hybrid", 10);
        const scores: Record<string, Scores> = {};
        const shallow: Record<string, Scores> = {};
        for (const m of METHODS) scores[m.name] = score(m.fuse(v, kw), q.relevant);
        for (const m of METHODS) shallow[m.name] = score(m.fuse(v.slice(0, SHALLOW), kw.slice(0, SHALLOW)), q.relevant);
        scores[CURRENT] = score(hybrid.map((x) => x.id), q.relevant);
        perQuery.push({ id: q.id, type: q.type, query: q.query, scores, shallow, vectorTop: v.slice(0, 5).map((x) => x.id), keywordTop: kw.slice(0, 5).map((x) => x.id), keywordHits: kw.length });
      }

      const groups: [string, typeof perQuery][] = [["all", perQuery], ...TYPES.map((t) => [t, perQuery.filter((q) => q.type === t)] as [string, typeof perQuery])];
      const avg = (qs: typeof perQuery, method: string, key: keyof Scores) => mean(qs.map((q) => q.scores[method]![key]));
      const pct = (x: number) => (100 * x).toFixed(1);

      const measurements = names.flatMap((name) =>
        METRICS.map(({ key, label }) =>
          measurement(SUITE, {
            name: `${name} · ${label}`,
            unit: "%",
            value: 100 * avg(perQuery, name, key),
            baseline: 100 * avg(perQuery, CURRENT, key),
            baselineName: CURRENT,
          }),
        ),
      );

      /** Best method of a group: highest nDCG@10, then MRR@10, then recall@5 (references excluded). */
      const candidates = [CURRENT, ...names.filter((n) => n !== CURRENT && n !== "vector only" && n !== "keyword only")];
      const order = (qs: typeof perQuery) => (a: string, b: string) =>
        avg(qs, b, "ndcg10") - avg(qs, a, "ndcg10") || avg(qs, b, "mrr10") - avg(qs, a, "mrr10") || avg(qs, b, "recall5") - avg(qs, a, "recall5");
      /** Ties keep the current hybrid first (stable sort). */
      const best = (qs: typeof perQuery) => [...candidates].sort(order(qs))[0]!;

      const notes: string[] = [];
      for (const { key, label } of METRICS) {
        const header = [`${label} (%)`, ...groups.map(([g, qs]) => `${g} (${qs.length})`)];
        notes.push(`${label} by query type:\n${textTable(header, names.map((n) => [n, ...groups.map(([, qs]) => pct(avg(qs, n, key)))]))}`);
      }
      const bestByGroup = Object.fromEntries(groups.map(([g, qs]) => [g, best(qs)]));
      for (const [g, qs] of groups) {
        const b = bestByGroup[g]!;
        const tied = candidates.filter((n) => n !== b && Math.abs(order(qs)(n, b)) < 1e-12);
        notes.push(`best for ${g}: ${b} (nDCG@10 ${pct(avg(qs, b, "ndcg10"))}, MRR@10 ${pct(avg(qs, b, "mrr10"))}, recall@5 ${pct(avg(qs, b, "recall5"))}${tied.length ? `; tied with ${tied.join(", ")}` : ""}; current ${pct(avg(qs, CURRENT, "ndcg10"))} / ${pct(avg(qs, CURRENT, "mrr10"))} / ${pct(avg(qs, CURRENT, "recall5"))})`);
      }
      const ndcg = (method: string, at: "scores" | "shallow" = "scores") => perQuery.map((q) => q[at][method]!.ndcg10);
      const comparisons = candidates
        .filter((n) => n !== CURRENT)
        .map((n) => {
          const deep = pairedBootstrap(ndcg(n), ndcg(CURRENT));
          const shallow = pairedBootstrap(ndcg(n, "shallow"), ndcg("RRF k=60", "shallow"));
          const worseOn = TYPES.filter((t) => avg(perQuery.filter((q) => q.type === t), n, "ndcg10") < avg(perQuery.filter((q) => q.type === t), CURRENT, "ndcg10") - MEANINGFUL);
          const meaningful = deep.diff >= MEANINGFUL && deep.lo > 0 && shallow.diff >= MEANINGFUL && shallow.lo > 0 && worseOn.length === 0;
          return { method: n, ...deep, shallow, worseOn, meaningful };
        });
      const ci = (x: { diff: number; lo: number; hi: number }) => [(100 * x.diff).toFixed(1), `[${(100 * x.lo).toFixed(1)}, ${(100 * x.hi).toFixed(1)}]`];
      notes.push(
        `paired bootstrap of nDCG@10 differences over ${perQuery.length} queries: at depth ${DEPTH} vs ${CURRENT}, and at depth ${SHALLOW} (what top_k=5 fuses) vs RRF k=60 at depth ${SHALLOW}; "types worse": query types whose nDCG@10 at depth ${DEPTH} drops more than ${100 * MEANINGFUL} points:\n${textTable(
          ["method", `Δ@${DEPTH}`, "95% CI", "better", "worse", "types worse", `Δ@${SHALLOW}`, "95% CI"],
          comparisons.map((c) => [c.method, ...ci(c), String(c.wins), String(c.losses), c.worseOn.join(",") || "-", ...ci(c.shallow)]),
        )}`,
      );
      const pick = comparisons.filter((c) => c.meaningful).sort((a, b) => b.diff - a.diff)[0];
      const top = comparisons.find((c) => c.method === bestByGroup.all);
      notes.push(
        pick
          ? `recommendation: switch to ${pick.method} (nDCG@10 +${(100 * pick.diff).toFixed(1)} points at depth ${DEPTH}, +${(100 * pick.shallow.diff).toFixed(1)} at depth ${SHALLOW}, both CIs above 0, no query type worse)`
          : `recommendation: keep RRF k=60: no method gains ≥ ${100 * MEANINGFUL} nDCG@10 points with a 95% CI above 0 at both depths without a query type losing more than ${100 * MEANINGFUL} points${top ? ` (highest mean: ${top.method}, Δ ${ci(top).join(" ")} at depth ${DEPTH}, ${ci(top.shallow).join(" ")} at depth ${SHALLOW})` : ""}`,
      );
      const misses = perQuery.filter((q) => q.scores[CURRENT]!.recall5 < 1).map((q) => `${q.id} (${q.type}) "${q.query}": vector ${q.vectorTop.slice(0, 3).join(", ")} | keyword ${q.keywordTop.slice(0, 3).join(", ") || "-"}`);
      notes.push(`queries the current hybrid does not fully answer in its top 5 (${misses.length}):\n${misses.map((m) => `    ${m}`).join("\n")}`);
      notes.push(`corpus: ${PASSAGES.length} passages (${multi.length ? `more than one chunk: ${multi.join(", ")}` : "one chunk each"}), ${QUERIES.length} queries; ingestion ${(ingestMs / 1000).toFixed(1)} s; offline methods fuse the top ${DEPTH} of each stage (second pass: top ${SHALLOW}), "${CURRENT}" is POST /api/knowledge-base/embeddings mode=hybrid top_k=10; α is the vector weight; references (vector/keyword only) are never picked as best`);

      return {
        measurements,
        info: {
          model: h.services.embedder.model,
          passages: PASSAGES.length,
          queries: QUERIES.length,
          depth: DEPTH,
          shallowDepth: SHALLOW,
          ingestMs,
          bestByGroup,
          comparisons,
          perQuery: perQuery.map(({ scores, shallow: _, ...q }) => ({ ...q, ndcg10: Object.fromEntries(names.map((n) => [n, Math.round(1000 * scores[n]!.ndcg10) / 1000])) })),
        },
        notes,
      };
    } finally {
      await h.close();
    }
  },
};

if (import.meta.main) {
  const tmp = mkdtempSync(join(tmpdir(), "hearth-fusion-"));
  const started = performance.now();
  try {
    const root = resolve(import.meta.dir, "..");
    const ctx: SuiteContext = { root, bun: process.execPath, tmp, modelsDir: modelsDirOf(root), flags: new Set(), log: (m) => process.stderr.write(`[fusion ${((performance.now() - started) / 1000).toFixed(1)}s] ${m}\n`) };
    const result = await fusionSuite.run(ctx);
    process.stdout.write(`\n== fusion (${((performance.now() - started) / 1000).toFixed(1)} s) ==\n${formatTable(result.measurements)}\n`);
    for (const n of result.notes) process.stdout.write(`  note: ${n}\n`);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}
