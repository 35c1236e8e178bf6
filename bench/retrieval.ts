// Retrieval suite: 192 labelled questions over 140 PostgreSQL manual pages in seven formats; hit@1/@5,
// MRR@10, nDCG@10 and the cited PDF page per mode and kind, paired bootstrap against the stored baseline.
import { Database } from "bun:sqlite";
import { createHash } from "node:crypto";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createHarness, defaultWorkspaceId, type Harness } from "../test/support/harness";
import { QUESTIONS, type QuestionKind } from "./fixtures/retrieval-questions";
import { linear, minMax, pairedBootstrap, rrf, zScore, type FusionMethod, type Ranked } from "./fusion-eval";
import { buildCorpus, corpusKey, type CorpusFile } from "./lib/retrieval-corpus";
import { meanOf, METRIC_KEYS, METRIC_LABELS, scoreHits, type EvalHit, type MetricKey, type QuestionScores } from "./lib/retrieval-eval";
import { formatTable } from "./lib/report";
import { VECTOR_WEIGHTS, vectorWeight } from "../src/features/knowledge/fusion";
import { measurement, modelsDirOf, type Suite, type SuiteContext, type SuiteResult } from "./lib/suite";

const SUITE = "retrieval";
const TOP_K = 10;
/** Depth of each stage's list for the offline fusion comparison. */
const DEPTH = 40;
const MODES = ["hybrid", "vector", "keyword", "bm25"] as const;
type Mode = (typeof MODES)[number];
const KINDS: QuestionKind[] = ["paraphrase", "identifier", "mixed"];
const BASELINE_FILE = resolve(import.meta.dir, "fixtures/retrieval-baseline.json");
const CACHE = resolve(import.meta.dir, "results/retrieval");

interface ApiHit {
  chunk_id: number;
  file_name: string;
  page?: number;
  score: number;
}

/** Everything that decides which chunks and vectors ingestion stores: when it changes, the cached database is rebuilt. */
function ingestKey(corpus: string): string {
  const h = createHash("sha256").update(corpus);
  for (const dir of ["src/features/knowledge/ingest", "src/platform/ml"]) {
    const abs = resolve(import.meta.dir, "..", dir);
    for (const f of readdirSync(abs).sort()) h.update(f).update(readFileSync(join(abs, f)));
  }
  return h.digest("hex").slice(0, 16);
}

async function ingest(h: Harness, jwt: string, ws: string, files: CorpusFile[], log: (m: string) => void) {
  const ids: [string, string][] = [];
  for (const f of files) {
    const fd = new FormData();
    fd.append("file", new File([readFileSync(f.path)], f.name));
    fd.append("product_id", ws);
    const r = await h.call("POST", "/api/knowledge-base/storage/upload", { token: jwt, raw: fd });
    if (r.status !== 202) throw new Error(`upload of ${f.name} answered ${r.status}: ${r.text}`);
    ids.push([f.name, r.body.data.id]);
  }
  h.services.start();
  const t0 = performance.now();
  await h.services.jobs.idle();
  let chunks = 0;
  for (const [name, id] of ids) {
    const f = (await h.call("GET", `/api/knowledge-base/storage/file/${id}`, { token: jwt })).body.data;
    if (f.status !== "ready" || !f.embedding_model) throw new Error(`${name} ended ${f.status} (${f.error ?? "no vectors"})`);
    chunks += f.chunk_count;
  }
  log(`ingested ${files.length} files, ${chunks} chunks in ${((performance.now() - t0) / 1000).toFixed(0)} s`);
}

/** A Hearth data directory with the corpus ingested: from the cache when the corpus and ingestion code are unchanged. */
async function preparedDataDir(ctx: SuiteContext): Promise<{ dataDir: string; cached: boolean; files: CorpusFile[] }> {
  const key = corpusKey();
  const files = await buildCorpus(join(CACHE, `corpus-${key}`));
  const cacheDir = join(CACHE, `db-${ingestKey(key)}`);
  const dataDir = join(ctx.tmp, "data");
  if (existsSync(join(cacheDir, ".complete"))) {
    cpSync(cacheDir, dataDir, { recursive: true });
    return { dataDir, cached: true, files };
  }
  ctx.log(`ingesting ${files.length} files (cached afterwards in ${cacheDir.slice(ctx.root.length + 1)})`);
  const h = await createHarness({}, dataDir);
  try {
    const jwt = await h.login();
    await ingest(h, jwt, await defaultWorkspaceId(h, jwt), files, ctx.log);
  } finally {
    await h.close();
  }
  rmSync(cacheDir, { recursive: true, force: true });
  mkdirSync(CACHE, { recursive: true });
  cpSync(dataDir, cacheDir, { recursive: true });
  writeFileSync(join(cacheDir, ".complete"), "");
  return { dataDir, cached: false, files };
}

/** Plain SQLite FTS5 BM25 over the same chunks: every word of the question ORed, nothing else. */
function plainBm25(dataDir: string) {
  const src = new Database(join(dataDir, "hearth.db"), { readonly: true });
  const rows = src.query<{ id: number; text: string; page: number | null; name: string }, []>("SELECT c.id, c.text, c.page, f.name FROM knowledge_chunks c JOIN knowledge_files f ON f.id = c.file_id").all();
  src.close();
  const db = new Database(":memory:");
  db.run("CREATE VIRTUAL TABLE t USING fts5(text)");
  const insert = db.prepare("INSERT INTO t(rowid, text) VALUES (?, ?)");
  db.transaction(() => rows.forEach((r) => insert.run(r.id, r.text)))();
  const byId = new Map(rows.map((r) => [r.id, r]));
  const search = db.query<{ id: number }, [string, number]>("SELECT rowid AS id FROM t WHERE t MATCH ? ORDER BY bm25(t) LIMIT ?");
  return (question: string): EvalHit[] => {
    const words = [...new Set(question.match(/[\p{L}\p{N}_]+/gu) ?? [])];
    if (!words.length) return [];
    return search.all(words.map((w) => `"${w}"`).join(" OR "), TOP_K).map((r) => ({ file: byId.get(r.id)!.name, page: byId.get(r.id)!.page }));
  };
}

const table = (header: string[], rows: string[][]) => {
  const all = [header, ...rows];
  const widths = header.map((_, i) => Math.max(...all.map((r) => r[i]!.length)));
  const line = (r: string[]) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("  ");
  return [line(header), widths.map((w) => "-".repeat(w)).join("  "), ...rows.map(line)].map((l) => `    ${l}`).join("\n");
};
const f2 = (x: number) => (Number.isFinite(x) ? x.toFixed(2) : "-");
const ci = (b: { diff: number; lo: number; hi: number }) => `${b.diff >= 0 ? "+" : ""}${b.diff.toFixed(3)} [${b.lo.toFixed(3)}, ${b.hi.toFixed(3)}]`;

/** The commit measured, "+dirty" when the work tree has changes. */
function revision(): string {
  const git = (...args: string[]) => Bun.spawnSync(["git", ...args], { cwd: resolve(import.meta.dir, ".."), stdout: "pipe", stderr: "ignore" }).stdout.toString().trim();
  return `${git("rev-parse", "--short", "HEAD")}${git("status", "--porcelain") ? "+dirty" : ""}`;
}

/** A word that looks like a name from the documents: snake_case, --flag, a.b, camelCase, ALLCAPS, digits. */
export const namesIdentifier = (q: string) => q.split(/\s+/).some((w) => /\w_\w|^--?\w|\w[.-]\w|[a-z][A-Z]|^[A-Z]{2,}\W*$|\d/.test(w));

type PerQuestion = { id: string; kind: QuestionKind; scores: Record<string, QuestionScores> };

/** Per-question values of a metric for a method, in QUESTIONS order, only where the metric applies. */
const column = (rows: PerQuestion[], method: string, key: MetricKey) => rows.map((r) => r.scores[method]![key]);
function bootstrap(a: (number | null)[], b: (number | null)[]) {
  const pairs = a.map((x, i) => [x, b[i]] as const).filter((p): p is readonly [number, number] => p[0] !== null && p[1] !== null);
  return pairedBootstrap(pairs.map((p) => p[0]), pairs.map((p) => p[1]));
}

export const retrievalSuite: Suite = {
  name: SUITE,
  description: "search quality on 140 PostgreSQL manual pages in 7 formats, 192 labelled questions: hit@1/@5, MRR@10, nDCG@10, PDF page, per mode and kind",
  async run(ctx: SuiteContext): Promise<SuiteResult> {
    const { dataDir, cached } = await preparedDataDir(ctx);
    const bm25 = plainBm25(dataDir);
    const h = await createHarness({}, dataDir);
    const rows: PerQuestion[] = [];
    const offline: { q: (typeof QUESTIONS)[number]; v: Ranked[]; kw: Ranked[]; where: Map<string, EvalHit> }[] = [];
    try {
      const jwt = await h.login();
      const ws = await defaultWorkspaceId(h, jwt);
      h.services.start();
      while ((await h.services.embedder.status()).state === "loading") await Bun.sleep(100);
      const ask = async (query: string, mode: string, topK: number): Promise<ApiHit[]> => {
        const r = await h.call("POST", "/api/knowledge-base/embeddings", { token: jwt, body: { query, mode, product_id: ws, top_k: topK } });
        if (r.status !== 200) throw new Error(`${mode} search for "${query}" answered ${r.status}: ${r.text}`);
        return r.body.data;
      };
      const asEval = (hits: ApiHit[]): EvalHit[] => hits.map((x) => ({ file: x.file_name, page: x.page ?? null }));
      ctx.log(`${cached ? "cached corpus; " : ""}asking ${QUESTIONS.length} questions`);
      const t0 = performance.now();
      for (const q of QUESTIONS) {
        const v = await ask(q.question, "vector", DEPTH);
        const kw = await ask(q.question, "keyword", DEPTH);
        const hy = await ask(q.question, "hybrid", TOP_K);
        const scores: Record<string, QuestionScores> = {
          hybrid: scoreHits(asEval(hy), q),
          vector: scoreHits(asEval(v.slice(0, TOP_K)), q),
          keyword: scoreHits(asEval(kw.slice(0, TOP_K)), q),
          bm25: scoreHits(bm25(q.question), q),
        };
        rows.push({ id: q.id, kind: q.kind, scores });
        const where = new Map([...v, ...kw].map((x) => [String(x.chunk_id), { file: x.file_name, page: x.page ?? null }]));
        offline.push({ q, v: v.map((x) => ({ id: String(x.chunk_id), score: x.score })), kw: kw.map((x) => ({ id: String(x.chunk_id), score: x.score })), where });
      }
      ctx.log(`searched in ${((performance.now() - t0) / 1000).toFixed(0)} s`);
    } finally {
      await h.close();
    }

    const groups: [string, PerQuestion[]][] = [["all", rows], ...KINDS.map((k) => [k, rows.filter((r) => r.kind === k)] as [string, PerQuestion[]])];
    const avg = (rs: PerQuestion[], method: string, key: MetricKey) => meanOf(rs.map((r) => r.scores[method]!), key);
    const notes: string[] = [];
    const pageCount = QUESTIONS.filter((q) => q.pages).length;
    notes.push(
      `by mode and question kind (top_k ${TOP_K}; file-level ranking; page: share of the ${pageCount} PDF-page questions whose best-ranked passage from the labelled PDF cites a labelled page):\n${table(
        ["mode", "kind", "n", ...METRIC_KEYS.map((k) => METRIC_LABELS[k])],
        MODES.flatMap((m) => groups.map(([g, rs]) => [m, g, String(rs.length), ...METRIC_KEYS.map((k) => f2(avg(rs, m, k)))])),
      )}`,
    );

    // Hybrid against each single mode, per kind (nDCG@10).
    notes.push(
      `hybrid minus each single mode, nDCG@10, paired bootstrap 95% interval:\n${table(
        ["vs", ...groups.map(([g]) => g)],
        (["vector", "keyword", "bm25"] as Mode[]).map((m) => [m, ...groups.map(([, rs]) => ci(bootstrap(column(rs, "hybrid", "ndcg10"), column(rs, m, "ndcg10"))))]),
      )}`,
    );

    // Against the stored baseline (the behaviour before this work), question by question.
    let baseline: Record<string, Record<string, QuestionScores>> | null = null;
    if (existsSync(BASELINE_FILE)) baseline = JSON.parse(readFileSync(BASELINE_FILE, "utf8")).scores;
    const withBase = baseline ? rows.filter((r) => baseline![r.id]) : [];
    if (baseline && withBase.length) {
      const lines = MODES.flatMap((m) =>
        METRIC_KEYS.map((k) => {
          const now = column(withBase, m, k);
          const before = withBase.map((r) => baseline![r.id]![m]![k]);
          return [m, METRIC_LABELS[k], f2(meanOf(withBase.map((r) => baseline![r.id]![m]!), k)), f2(avg(withBase, m, k)), ci(bootstrap(now, before))];
        }),
      );
      notes.push(`against the stored baseline (${JSON.parse(readFileSync(BASELINE_FILE, "utf8")).revision}), paired bootstrap 95% interval of now − before:\n${table(["mode", "metric", "before", "now", "difference"], lines)}`);
      const perKind = KINDS.map((kind) => {
        const rs = withBase.filter((r) => r.kind === kind);
        return [kind, ...(["ndcg10", "page"] as MetricKey[]).map((k) => ci(bootstrap(column(rs, "hybrid", k), rs.map((r) => baseline![r.id]!.hybrid![k]))))];
      });
      notes.push(`hybrid against the baseline per kind:\n${table(["kind", "nDCG@10", "page"], perKind)}`);
    }

    // Offline fusion of the two stages' deep lists: RRF against normalised score fusion, the vector weight
    // tuned on the odd-numbered questions and checked on the even-numbered ones.
    const methods: FusionMethod[] = [rrf(60), ...[0.3, 0.4, 0.5, 0.6, 0.7, 0.8].flatMap((a) => [linear("min-max", minMax, a), linear("z-score", zScore, a)])];
    /** The first TOP_K chunks of a fused ranking, at most `perFile` from one file (diversity). */
    const cut = (ids: string[], where: Map<string, EvalHit>, perFile = Infinity) => {
      const seen = new Map<string, number>();
      const out: EvalHit[] = [];
      for (const id of ids) {
        const hit = where.get(id)!;
        if ((seen.get(hit.file) ?? 0) >= perFile) continue;
        seen.set(hit.file, (seen.get(hit.file) ?? 0) + 1);
        out.push(hit);
        if (out.length === TOP_K) break;
      }
      return out;
    };
    const fusedScores = methods.map((m) => offline.map((o) => scoreHits(cut(m.fuse(o.v, o.kw), o.where), o.q)));
    // Scores divided by the list's best (no shift): a flat list stays flat instead of being spread over 0..1.
    const maxNorm = (list: Ranked[]) => {
      const hi = Math.max(...list.map((h) => h.score), 0);
      const map = new Map(list.map((h) => [h.id, hi > 0 ? h.score / hi : 0]));
      return (id: string) => map.get(id) ?? 0;
    };
    for (const a of [0.4, 0.5, 0.6, 0.7]) {
      methods.push({ name: `max-norm α=${a}`, fuse: () => [] });
      fusedScores.push(offline.map((o) => scoreHits(cut(linear("max", maxNorm, a).fuse(o.v, o.kw), o.where), o.q)));
    }
    for (const perFile of [1, 2, 3, 5]) {
      methods.push({ name: `min-max α=0.5, ≤ ${perFile} per file`, fuse: () => [] });
      fusedScores.push(offline.map((o) => scoreHits(cut(linear("min-max", minMax, 0.5).fuse(o.v, o.kw), o.where, perFile), o.q)));
    }
    // Query-adaptive weight: questions naming an identifier lean on the keyword stage.
    const adaptive: [number, number][] = [];
    for (const aId of [0.3, 0.4, 0.5]) for (const aText of [0.5, 0.6, 0.7, 0.8]) adaptive.push([aId, aText]);
    for (const [aId, aText] of adaptive) {
      const ml = (a: number) => linear("min-max", minMax, a);
      methods.push({ name: `min-max α=${aId} with identifiers, else ${aText}`, fuse: () => [] });
      fusedScores.push(offline.map((o) => scoreHits(cut(ml(namesIdentifier(o.q.question) ? aId : aText).fuse(o.v, o.kw), o.where), o.q)));
    }
    // The production rule (fusion.ts): the weight chosen by the query's shape.
    methods.push({ name: `min-max by query shape (${Object.entries(VECTOR_WEIGHTS).map(([k, w]) => `${k} ${w}`).join(", ")})`, fuse: () => [] });
    fusedScores.push(offline.map((o) => scoreHits(cut(linear("min-max", minMax, vectorWeight(o.q.question)).fuse(o.v, o.kw), o.where), o.q)));
    const half = (odd: boolean) => (_: unknown, i: number) => i % 2 === (odd ? 0 : 1);
    const tuned = methods
      .map((m, i) => ({ m, train: meanOf(fusedScores[i]!.filter(half(true)), "ndcg10") }))
      // The single-weight grid the production weight was chosen from.
      .filter((x) => /^(min-max|z-score) α=[\d.]+$/.test(x.m.name))
      .sort((a, b) => b.train - a.train)[0]!;
    const tIdx = methods.indexOf(tuned.m);
    const test = (i: number) => fusedScores[i]!.filter(half(false));
    notes.push(
      `offline fusion of the vector and keyword lists (depth ${DEPTH}, cut to the first ${TOP_K} chunks), nDCG@10 / hit@5 / page over all questions:\n${table(
        ["method", "nDCG@10", "hit@5", "page", ...KINDS],
        methods.map((m, i) => [m.name, f2(meanOf(fusedScores[i]!, "ndcg10")), f2(meanOf(fusedScores[i]!, "hit5")), f2(meanOf(fusedScores[i]!, "page")), ...KINDS.map((k) => f2(meanOf(fusedScores[i]!.filter((_, j) => offline[j]!.q.kind === k), "ndcg10")))]),
      )}\n    tuned on odd-numbered questions: ${tuned.m.name} (train nDCG@10 ${f2(tuned.train)}); on the even-numbered: ${f2(meanOf(test(tIdx), "ndcg10"))} vs RRF k=60 ${f2(meanOf(test(0), "ndcg10"))}, difference ${ci(pairedBootstrap(test(tIdx).map((s) => s.ndcg10), test(0).map((s) => s.ndcg10)))}`,
    );

    // Against the previous run on this machine: how a lever moved things, question by question.
    const previousFile = join(CACHE, "previous-run.json");
    if (existsSync(previousFile)) {
      const prev = JSON.parse(readFileSync(previousFile, "utf8")) as { revision: string; scores: Record<string, Record<string, QuestionScores>> };
      const both = rows.filter((r) => prev.scores[r.id]);
      const lines = METRIC_KEYS.map((k) => [METRIC_LABELS[k], f2(meanOf(both.map((r) => prev.scores[r.id]!.hybrid!), k)), f2(avg(both, "hybrid", k)), ci(bootstrap(column(both, "hybrid", k), both.map((r) => prev.scores[r.id]!.hybrid![k])))]);
      notes.push(`hybrid against the previous run (${prev.revision}), paired bootstrap 95% interval of now − then:\n${table(["metric", "then", "now", "difference"], lines)}`);
    }
    mkdirSync(CACHE, { recursive: true });
    // The two stages' deep lists of this run, for trying fusion rules without searching again.
    writeFileSync(join(CACHE, "lists.json"), JSON.stringify(offline.map((o) => ({ id: o.q.id, v: o.v, kw: o.kw, where: Object.fromEntries(o.where) }))));
    writeFileSync(previousFile, JSON.stringify({ revision: revision(), scores: Object.fromEntries(rows.map((r) => [r.id, r.scores])) }));

    const misses = rows.filter((r) => r.scores.hybrid!.hit5 === 0 || r.scores.hybrid!.page === 0);
    notes.push(`hybrid misses (not in top 5, or wrong page): ${misses.map((r) => `${r.id}${r.scores.hybrid!.hit5 ? "(page)" : ""}`).join(" ")}`);

    if (ctx.flags.has("--save-baseline")) {
      writeFileSync(BASELINE_FILE, `${JSON.stringify({ revision: revision(), scores: Object.fromEntries(rows.map((r) => [r.id, r.scores])) })}\n`);
      notes.push(`baseline written to ${BASELINE_FILE.slice(ctx.root.length + 1)}`);
    }

    const base = (m: Mode, k: MetricKey) => (baseline && withBase.length ? meanOf(withBase.map((r) => baseline![r.id]![m]!), k) : undefined);
    const goals: Partial<Record<MetricKey, number>> = { hit5: 0.98, ndcg10: 0.92, page: 0.85 };
    const measurements = MODES.flatMap((m) =>
      METRIC_KEYS.map((k) =>
        measurement(SUITE, {
          name: `${m} · ${METRIC_LABELS[k]}`,
          unit: "%",
          value: 100 * avg(rows, m, k),
          ...(base(m, k) !== undefined ? { baseline: 100 * base(m, k)!, baselineName: "stored baseline" } : {}),
          ...(m === "hybrid" && goals[k] ? { goal: { on: "value" as const, kind: "min" as const, limit: 100 * goals[k]! } } : {}),
        }),
      ),
    );
    return {
      measurements,
      info: { questions: QUESTIONS.length, pageQuestions: pageCount, cachedIngestion: cached, perQuestion: rows },
      notes,
    };
  },
};

if (import.meta.main) {
  const tmp = mkdtempSync(join(tmpdir(), "hearth-retrieval-"));
  const started = performance.now();
  try {
    const root = resolve(import.meta.dir, "..");
    const ctx: SuiteContext = { root, bun: process.execPath, tmp, modelsDir: modelsDirOf(root), flags: new Set(process.argv.slice(2)), log: (m) => process.stderr.write(`[retrieval ${((performance.now() - started) / 1000).toFixed(1)}s] ${m}\n`) };
    const result = await retrievalSuite.run(ctx);
    process.stdout.write(`\n${formatTable(result.measurements)}\n`);
    for (const n of result.notes) process.stdout.write(`  note: ${n}\n`);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}
