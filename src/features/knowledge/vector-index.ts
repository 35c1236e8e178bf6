// An in-memory copy of one knowledge base's vectors, built for fast nearest-neighbour search:
// sign bits of each vector (centered on the set's mean) pick candidates by Hamming distance, then
// the float vectors re-score those candidates exactly. sqlite-vec stays the durable store; this
// index is rebuilt from it whenever it may be stale.

/** Bits set in each 16-bit value: Hamming distance by two table look-ups per 32-bit word. */
const POPCOUNT16 = (() => {
  const t = new Uint8Array(1 << 16);
  for (let i = 1; i < t.length; i++) t[i] = (i & 1) + t[i >> 1]!;
  return t;
})();

export interface IndexHit {
  chunkId: number;
  /** Cosine distance, as sqlite-vec computes it: 1 − cos. */
  distance: number;
}

export class VectorIndex {
  readonly dim: number;
  private readonly words: number;
  /** Per-dimension mean of the vectors the index was built from; bits are signs of (v − mean). */
  private readonly mean: Float32Array;
  private ids: Int32Array;
  private codes: Uint32Array;
  private floats: Float32Array;
  private norms: Float32Array;
  private readonly slots = new Map<number, number>();
  private n = 0;

  private constructor(dim: number, mean: Float32Array, capacity: number) {
    this.dim = dim;
    this.words = Math.ceil(dim / 32);
    this.mean = mean;
    this.ids = new Int32Array(capacity);
    this.codes = new Uint32Array(capacity * this.words);
    this.floats = new Float32Array(capacity * dim);
    this.norms = new Float32Array(capacity);
  }

  /**
   * An index over `rows` (read once, so they can stream from the database), centered on their
   * mean: the signs of a model's raw embeddings are far from balanced, those of (v − mean) are.
   */
  static build(dim: number, rows: Iterable<{ chunkId: number; vector: Float32Array }>, expected = 16): VectorIndex {
    const index = new VectorIndex(dim, new Float32Array(dim), Math.max(16, expected));
    const sum = new Float64Array(dim);
    for (const r of rows) {
      index.put(r.chunkId, r.vector, false);
      for (let j = 0; j < dim; j++) sum[j]! += r.vector[j]!;
    }
    for (let j = 0; j < dim; j++) index.mean[j] = index.n ? sum[j]! / index.n : 0;
    for (let slot = 0; slot < index.n; slot++) index.encode(slot);
    return index;
  }

  get size(): number {
    return this.n;
  }

  /** Memory held by the index, in bytes. */
  get bytes(): number {
    return this.ids.byteLength + this.codes.byteLength + this.floats.byteLength + this.norms.byteLength;
  }

  has(chunkId: number): boolean {
    return this.slots.has(chunkId);
  }

  /** Adds a vector, or replaces the one a chunk had. */
  put(chunkId: number, vector: Float32Array, encode = true) {
    if (vector.length !== this.dim) throw new Error(`vector of ${vector.length} dimensions for a ${this.dim}-dimension index`);
    let slot = this.slots.get(chunkId);
    if (slot === undefined) {
      if (this.n === this.ids.length) this.grow();
      slot = this.n++;
      this.slots.set(chunkId, slot);
      this.ids[slot] = chunkId;
    }
    this.floats.set(vector, slot * this.dim);
    let norm = 0;
    for (let j = 0; j < this.dim; j++) norm += vector[j]! * vector[j]!;
    this.norms[slot] = Math.sqrt(norm);
    if (encode) this.encode(slot);
  }

  /** Writes the slot's sign bits from its float vector. */
  private encode(slot: number) {
    const code = this.codes.subarray(slot * this.words, (slot + 1) * this.words);
    code.fill(0);
    const o = slot * this.dim;
    for (let j = 0; j < this.dim; j++) if (this.floats[o + j]! > this.mean[j]!) code[j >> 5]! |= 1 << (j & 31);
  }

  /**
   * The k nearest chunks by cosine distance. With more vectors than `candidates`, the `candidates`
   * nearest by Hamming distance are re-scored; otherwise every vector is scored exactly.
   */
  search(query: Float32Array, k: number, candidates: number): IndexHit[] {
    if (this.n === 0 || k < 1) return [];
    let qNorm = 0;
    for (let j = 0; j < this.dim; j++) qNorm += query[j]! * query[j]!;
    qNorm = Math.sqrt(qNorm);
    const slots = this.n <= candidates ? null : this.nearestByBits(query, candidates);
    const count = slots ? slots.length : this.n;
    // Exact cosine for every candidate; the k best kept in order by insertion (k is small).
    const want = Math.min(k, count);
    const bestDistance = new Float64Array(want).fill(Infinity);
    const bestSlot = new Int32Array(want).fill(-1);
    const { floats, dim, norms } = this;
    for (let c = 0; c < count; c++) {
      const s = slots ? slots[c]! : c;
      const o = s * dim;
      let dot = 0;
      for (let j = 0; j < dim; j++) dot += floats[o + j]! * query[j]!;
      const denominator = norms[s]! * qNorm;
      const distance = denominator > 0 ? 1 - dot / denominator : 1;
      if (distance >= bestDistance[want - 1]!) continue;
      let p = want - 1;
      for (; p > 0 && bestDistance[p - 1]! > distance; p--) {
        bestDistance[p] = bestDistance[p - 1]!;
        bestSlot[p] = bestSlot[p - 1]!;
      }
      bestDistance[p] = distance;
      bestSlot[p] = s;
    }
    const hits: IndexHit[] = [];
    for (let i = 0; i < want && bestSlot[i]! >= 0; i++) hits.push({ chunkId: this.ids[bestSlot[i]!]!, distance: bestDistance[i]! });
    return hits;
  }

  /** Slots of the `want` vectors nearest to the query in Hamming distance (a counting sort on distance). */
  private nearestByBits(query: Float32Array, want: number): Int32Array {
    const { words, codes, n } = this;
    const q = new Uint32Array(words);
    for (let j = 0; j < this.dim; j++) if (query[j]! > this.mean[j]!) q[j >> 5]! |= 1 << (j & 31);
    const distance = new Uint16Array(n);
    const histogram = new Uint32Array(words * 32 + 1);
    for (let i = 0, o = 0; i < n; i++, o += words) {
      let d = 0;
      for (let w = 0; w < words; w++) {
        const x = codes[o + w]! ^ q[w]!;
        d += POPCOUNT16[x & 0xffff]! + POPCOUNT16[x >>> 16]!;
      }
      distance[i] = d;
      histogram[d]!++;
    }
    // Every slot nearer than `cut` is taken; slots at exactly `cut` fill what is left.
    let cut = 0;
    let nearer = 0;
    while (nearer + histogram[cut]! < want) nearer += histogram[cut++]!;
    const out = new Int32Array(want);
    let taken = 0;
    let atCut = want - nearer;
    for (let i = 0; i < n && taken < want; i++) {
      const d = distance[i]!;
      if (d < cut || (d === cut && atCut-- > 0)) out[taken++] = i;
    }
    return out;
  }

  private grow() {
    const capacity = this.ids.length * 2;
    const grown = <T extends Int32Array | Uint32Array | Float32Array>(a: T, per: number, make: (n: number) => T): T => {
      const b = make(capacity * per);
      b.set(a);
      return b;
    };
    this.ids = grown(this.ids, 1, (n) => new Int32Array(n));
    this.codes = grown(this.codes, this.words, (n) => new Uint32Array(n));
    this.floats = grown(this.floats, this.dim, (n) => new Float32Array(n));
    this.norms = grown(this.norms, 1, (n) => new Float32Array(n));
  }
}
