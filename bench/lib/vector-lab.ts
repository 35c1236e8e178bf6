// Vector experiments outside Hearth: a plain-JS cosine floor, and quantized pre-filters (sqlite-vec bit/int8, JS bit codes) with float re-scoring.
import type { Database } from "bun:sqlite";
import { openStorage } from "../../src/platform/db/database";
import { summarize, type LatencySummary } from "./stats";

export interface VectorSet {
  /** n×dim unit vectors, row i belongs to chunk ids[i]. */
  flat: Float32Array;
  ids: Int32Array;
  n: number;
  dim: number;
}

export const sliceSet = (s: VectorSet, n: number): VectorSet => ({ flat: s.flat.subarray(0, n * s.dim), ids: s.ids.subarray(0, n), n, dim: s.dim });

/** Exact top-k chunk ids by cosine: a plain JS loop over every vector (norms included, not assumed). */
export function bruteForceTopK(s: VectorSet, q: Float32Array, k: number): number[] {
  const { flat, dim, n } = s;
  let qn = 0;
  for (let j = 0; j < dim; j++) qn += q[j]! * q[j]!;
  qn = Math.sqrt(qn);
  const topScore = new Float64Array(k).fill(-Infinity);
  const topIdx = new Int32Array(k).fill(-1);
  for (let i = 0; i < n; i++) {
    const o = i * dim;
    let dot = 0;
    let nn = 0;
    for (let j = 0; j < dim; j++) {
      const x = flat[o + j]!;
      dot += x * q[j]!;
      nn += x * x;
    }
    const score = dot / (Math.sqrt(nn) * qn);
    if (score <= topScore[k - 1]!) continue;
    let p = k - 1;
    while (p > 0 && topScore[p - 1]! < score) {
      topScore[p] = topScore[p - 1]!;
      topIdx[p] = topIdx[p - 1]!;
      p--;
    }
    topScore[p] = score;
    topIdx[p] = i;
  }
  return [...topIdx].filter((i) => i >= 0).map((i) => s.ids[i]!);
}

/** Mean cosine of `pairs` pseudo-random pairs of unit vectors (how tightly the set is packed). */
export function meanPairCosine(flat: Float32Array, dim: number, pairs: number): number {
  const n = flat.length / dim;
  let sum = 0;
  for (let p = 0; p < pairs; p++) {
    const a = ((p * 7919) % n) * dim;
    const b = ((p * 104729 + 13) % n) * dim;
    let dot = 0;
    for (let j = 0; j < dim; j++) dot += flat[a + j]! * flat[b + j]!;
    sum += dot;
  }
  return sum / pairs;
}

export const recallAt = (got: number[], exact: number[]) => (exact.length ? got.filter((id) => exact.includes(id)).length / exact.length : Number.NaN);

/** Per-dimension mean of the set: sign bits of (v − mean) split a model's embeddings far better than sign bits of v. */
export function meanOf(s: VectorSet): Float32Array {
  const mean = new Float32Array(s.dim);
  for (let i = 0; i < s.n; i++) for (let j = 0; j < s.dim; j++) mean[j]! += s.flat[i * s.dim + j]!;
  for (let j = 0; j < s.dim; j++) mean[j]! /= s.n;
  return mean;
}

const centered = (v: Float32Array, mean: Float32Array | null) => (mean ? v.map((x, j) => x - mean[j]!) : v);

/** Sign-bit codes (as sqlite-vec's vec_quantize_binary: bit set when the component is > 0), 32 dims a word. */
function binaryCodes(s: VectorSet, mean: Float32Array | null): Uint32Array {
  const words = Math.ceil(s.dim / 32);
  const out = new Uint32Array(s.n * words);
  const m = mean ?? new Float32Array(s.dim);
  for (let i = 0; i < s.n; i++) for (let j = 0; j < s.dim; j++) if (s.flat[i * s.dim + j]! - m[j]! > 0) out[i * words + (j >> 5)]! |= 1 << (j & 31);
  return out;
}

const popcount = (x: number) => {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  return (((x + (x >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
};

/** The `n` ids nearest by Hamming distance over in-memory codes (counting sort on the distance). */
function hammingTopN(codes: Uint32Array, words: number, ids: Int32Array, q: Uint32Array, n: number): number[] {
  const count = ids.length;
  const dist = new Uint16Array(count);
  const hist = new Uint32Array(words * 32 + 1);
  for (let i = 0; i < count; i++) {
    let d = 0;
    const o = i * words;
    for (let w = 0; w < words; w++) d += popcount(codes[o + w]! ^ q[w]!);
    dist[i] = d;
    hist[d]!++;
  }
  let cut = 0;
  for (let seen = 0; cut < hist.length && seen + hist[cut]! < n; cut++) seen += hist[cut]!;
  const out: number[] = [];
  for (let i = 0; i < count && out.length < n; i++) if (dist[i]! < cut) out.push(ids[i]!);
  for (let i = 0; i < count && out.length < n; i++) if (dist[i] === cut) out.push(ids[i]!);
  return out;
}

export interface Variant {
  name: string;
  latency: LatencySummary;
  recall: number;
  candidates: number;
}

function createTables(db: Database, s: VectorSet, mean: Float32Array) {
  const d = s.dim;
  db.exec(`CREATE VIRTUAL TABLE vec_float USING vec0(id integer primary key, embedding float[${d}] distance_metric=cosine)`);
  db.exec(`CREATE VIRTUAL TABLE vec_bit USING vec0(id integer primary key, embedding bit[${d}])`);
  db.exec(`CREATE VIRTUAL TABLE vec_int8 USING vec0(id integer primary key, embedding int8[${d}])`);
  // Re-scoring needs the floats by id: vec0 has no fast rowid lookup in 0.1.9 (an IN list scans), a plain table does.
  db.exec("CREATE TABLE float_rows(id integer primary key, v blob not null)");
  const ins = {
    float: db.query("INSERT INTO vec_float(id, embedding) VALUES (?, ?)"),
    bit: db.query("INSERT INTO vec_bit(id, embedding) VALUES (?, vec_quantize_binary(?))"),
    int8: db.query("INSERT INTO vec_int8(id, embedding) VALUES (?, vec_quantize_int8(?, 'unit'))"),
    rows: db.query("INSERT INTO float_rows(id, v) VALUES (?, ?)"),
  };
  for (let b = 0; b < s.n; b += 10_000) {
    db.transaction(() => {
      for (let i = b; i < Math.min(s.n, b + 10_000); i++) {
        const v = s.flat.subarray(i * d, (i + 1) * d);
        const id = s.ids[i]!;
        ins.float.run(id, v);
        ins.bit.run(id, centered(v, mean));
        ins.int8.run(id, v);
        ins.rows.run(id, v);
      }
    })();
  }
}

/**
 * Builds a temp sqlite-vec database with the set as float, bit and int8 vec0 tables (and floats by
 * id), then times exact search against quantized pre-filters with float re-scoring; recall@k is
 * measured against the exact float scan.
 */
export async function quantizedExperiment(dir: string, s: VectorSet, queries: Float32Array[], o: { k: number; maxMsPerVariant: number; rounds: number }, log: (m: string) => void) {
  const storage = await openStorage(dir);
  const db = storage.sqlite;
  try {
    db.exec("PRAGMA synchronous = OFF");
    const t0 = performance.now();
    const mean = meanOf(s);
    createTables(db, s, mean);
    const buildMs = performance.now() - t0;
    log(`quantized experiment: ${s.n} vectors in float/bit/int8 vec0 tables in ${(buildMs / 1000).toFixed(1)} s`);
    const k = o.k;
    type Row = { id: number };
    const exactQ = db.prepare<Row, [Float32Array, number]>("SELECT id FROM vec_float WHERE embedding MATCH ? AND k = ?");
    const bitQ = db.prepare<Row, [Float32Array, number]>("SELECT id FROM vec_bit WHERE embedding MATCH vec_quantize_binary(?) AND k = ?");
    const int8Q = db.prepare<Row, [Float32Array, number]>("SELECT id FROM vec_int8 WHERE embedding MATCH vec_quantize_int8(?, 'unit') AND k = ?");
    const rescoreQ = db.prepare<Row, [Float32Array, string, number]>(
      "SELECT id, vec_distance_cosine(v, ?) AS d FROM float_rows WHERE id IN (SELECT value FROM json_each(?)) ORDER BY d LIMIT ?",
    );
    const rescore = (q: Float32Array, ids: number[]) => rescoreQ.all(q, JSON.stringify(ids), k).map((r) => r.id);
    const words = Math.ceil(s.dim / 32);
    const plainCodes = binaryCodes(s, null);
    const centeredCodes = binaryCodes(s, mean);
    const js = (codes: Uint32Array, m: Float32Array | null, n: number) => (q: Float32Array) =>
      rescore(q, hammingTopN(codes, words, s.ids, binaryCodes({ flat: q, ids: new Int32Array(1), n: 1, dim: s.dim }, m), n));

    const exact = queries.map((q) => exactQ.all(q, k).map((r) => r.id));
    const variants: { name: string; candidates: number; run: (q: Float32Array) => number[] }[] = [
      { name: "exact: float[384] vec0 scan (cosine)", candidates: k, run: (q) => exactQ.all(q, k).map((r) => r.id) },
      { name: "bit[384] vec0 (centered) top 100 → re-score", candidates: 100, run: (q) => rescore(q, bitQ.all(centered(q, mean), 100).map((r) => r.id)) },
      { name: "int8[384] vec0 top 40 → re-score", candidates: 40, run: (q) => rescore(q, int8Q.all(q, 40).map((r) => r.id)) },
      { name: "JS bit codes top 200 → re-score", candidates: 200, run: js(plainCodes, null, 200) },
      { name: "JS bit codes (centered) top 200 → re-score", candidates: 200, run: js(centeredCodes, mean, 200) },
      { name: "JS bit codes (centered) top 500 → re-score", candidates: 500, run: js(centeredCodes, mean, 500) },
    ];
    const results: Variant[] = [];
    for (const v of variants) {
      v.run(queries[0]!); // warm-up
      const samples: number[] = [];
      let hits = 0;
      const deadline = performance.now() + o.maxMsPerVariant;
      for (let r = 0; r < o.rounds && (r === 0 || performance.now() < deadline); r++) {
        queries.forEach((q, i) => {
          const t = Bun.nanoseconds();
          const got = v.run(q);
          samples.push((Bun.nanoseconds() - t) / 1e6);
          if (r === 0) hits += recallAt(got, exact[i]!);
        });
      }
      results.push({ name: v.name, latency: summarize(samples), recall: hits / queries.length, candidates: v.candidates });
      log(`  ${v.name}: p50 ${results.at(-1)!.latency.p50.toFixed(2)} ms, recall@${k} ${results.at(-1)!.recall.toFixed(3)}`);
    }
    return { buildMs, results, codeBytes: centeredCodes.byteLength, vecVersion: storage.vecVersion };
  } finally {
    storage.close();
  }
}
