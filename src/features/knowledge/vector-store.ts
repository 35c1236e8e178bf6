// The one owner of the vector tables: one sqlite-vec table per embedding dimension, partitioned
// by knowledge base, cleaned by a trigger when chunks go. Raw SQL lives here and nowhere else.
// Searches run on in-memory indexes (vector-index.ts) built from these tables, within a memory
// budget; a knowledge base that does not fit is searched by sqlite-vec's own exact scan.
import type { Database } from "bun:sqlite";
import { VectorIndex } from "./vector-index";

export interface VectorHit {
  chunkId: number;
  /** Cosine distance, 0 (same direction) to 2 (opposite). */
  distance: number;
}

export interface VectorRow {
  chunkId: number;
  knowledgeBaseId: string;
  vector: Float32Array;
}

/** Candidates the bit pre-filter hands to exact re-scoring: at least this many, or 10 per result. */
const MIN_CANDIDATES = 1000;
const candidatesFor = (k: number) => Math.max(MIN_CANDIDATES, 10 * k);

const tableFor = (dim: number) => {
  if (!Number.isInteger(dim) || dim < 1 || dim > 8192) throw new Error(`unsupported embedding dimension ${dim}`);
  return `knowledge_vectors_${dim}`;
};

export interface VectorStoreOptions {
  /** Memory the in-memory indexes may hold together, in bytes; 0 searches with sqlite-vec only. */
  memoryBudget?: number;
}

export function createVectorStore(sqlite: Database, options: VectorStoreOptions = {}) {
  const memoryBudget = options.memoryBudget ?? 512 * 2 ** 20;
  const ready = new Set<number>();

  const ensure = (dim: number): string => {
    const table = tableFor(dim);
    if (ready.has(dim)) return table;
    sqlite.exec(
      `CREATE VIRTUAL TABLE IF NOT EXISTS ${table} USING vec0(
         chunk_id integer primary key,
         knowledge_base_id text partition key,
         embedding float[${dim}] distance_metric=cosine
       )`,
    );
    // Deleting chunks (a file, a knowledge base, a workspace) removes their vectors in the same
    // transaction, so no orphan vector can outlive its text.
    sqlite.exec(`CREATE TRIGGER IF NOT EXISTS ${table}_chunk_delete AFTER DELETE ON knowledge_chunks BEGIN
         DELETE FROM ${table} WHERE chunk_id = old.id;
       END`);
    ready.add(dim);
    return table;
  };

  // Every change to a knowledge base's vectors bumps its epoch (in the change's own transaction:
  // deleted chunks by trigger, put and remove here). An index remembers the epoch it reflects,
  // so a rolled-back write, or a write by another connection, makes it stale and it is rebuilt.
  sqlite.exec(`CREATE TABLE IF NOT EXISTS knowledge_vector_epochs (
       knowledge_base_id text PRIMARY KEY NOT NULL,
       epoch integer NOT NULL
     ) WITHOUT ROWID`);
  sqlite.exec(`CREATE TRIGGER IF NOT EXISTS knowledge_vector_epochs_chunk_delete AFTER DELETE ON knowledge_chunks BEGIN
       INSERT INTO knowledge_vector_epochs(knowledge_base_id, epoch) VALUES (old.knowledge_base_id, 1)
         ON CONFLICT(knowledge_base_id) DO UPDATE SET epoch = epoch + 1;
     END`);
  const epochOf = sqlite.query<{ epoch: number }, [string]>("SELECT epoch FROM knowledge_vector_epochs WHERE knowledge_base_id = ?");
  const bump = sqlite.query<{ epoch: number }, [string]>(
    `INSERT INTO knowledge_vector_epochs(knowledge_base_id, epoch) VALUES (?, 1)
       ON CONFLICT(knowledge_base_id) DO UPDATE SET epoch = epoch + 1 RETURNING epoch`,
  );
  const currentEpoch = (kb: string) => epochOf.get(kb)?.epoch ?? 0;

  /** Loaded indexes by "dim:knowledge base", least recently searched first. */
  const indexes = new Map<string, { index: VectorIndex; epoch: number }>();
  const keyOf = (dim: number, kb: string) => `${dim}:${kb}`;
  const heldBytes = () => [...indexes.values()].reduce((sum, e) => sum + e.index.bytes, 0);
  /** Bytes an index of `n` vectors of `dim` floats needs (ids, bit codes, floats, norms). */
  const bytesFor = (dim: number, n: number) => n * (4 + 4 * Math.ceil(dim / 32) + 4 * dim + 4);

  /** The knowledge base's current index, built when missing or stale; null when it does not fit the budget. */
  const indexFor = (dim: number, kb: string): VectorIndex | null => {
    const key = keyOf(dim, kb);
    const epoch = currentEpoch(kb);
    const held = indexes.get(key);
    indexes.delete(key);
    if (held && held.epoch === epoch) {
      indexes.set(key, held); // most recently used now
      return held.index;
    }
    const table = ensure(dim);
    const n = sqlite.query<{ n: number }, [string]>(`SELECT count(*) AS n FROM ${table} WHERE knowledge_base_id = ?`).get(kb)?.n ?? 0;
    const need = bytesFor(dim, n);
    if (need > memoryBudget) return null;
    for (const k of indexes.keys()) {
      if (heldBytes() + need <= memoryBudget) break;
      indexes.delete(k); // least recently searched first
    }
    const rows = sqlite.query<{ chunk_id: number; embedding: Uint8Array }, [string]>(`SELECT chunk_id, embedding FROM ${table} WHERE knowledge_base_id = ?`).iterate(kb);
    const vectors = (function* () {
      for (const r of rows) yield { chunkId: r.chunk_id, vector: new Float32Array(r.embedding.slice().buffer) };
    })();
    const index = VectorIndex.build(dim, vectors, n);
    indexes.set(key, { index, epoch });
    return index;
  };

  /** Exact search by sqlite-vec's own scan of one knowledge base's partition. */
  const scan = (dim: number, kb: string, query: Float32Array, k: number): VectorHit[] =>
    sqlite
      .query<{ chunk_id: number; distance: number }, [Float32Array, number, string]>(
        `SELECT chunk_id, distance FROM ${ensure(dim)} WHERE embedding MATCH ? AND k = ? AND knowledge_base_id = ?`,
      )
      .all(query, k, kb)
      .map((r) => ({ chunkId: r.chunk_id, distance: r.distance }));

  /** After a write to a knowledge base's vectors (inside its transaction): the new epoch, applied to a current index. */
  const written = (dim: number, kb: string, apply: (index: VectorIndex) => void) => {
    const before = currentEpoch(kb);
    const after = bump.get(kb)!.epoch;
    const held = indexes.get(keyOf(dim, kb));
    if (!held) return;
    if (held.epoch !== before) return void indexes.delete(keyOf(dim, kb));
    apply(held.index);
    held.epoch = after;
  };

  /** Dimensions that have a vector table in this database (created earlier or now). */
  const dims = (): number[] =>
    sqlite
      .query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE type = 'table' AND name GLOB 'knowledge_vectors_[0-9]*'")
      .all()
      .map((r) => /^knowledge_vectors_(\d+)$/.exec(r.name)?.[1]) // skip sqlite-vec's shadow tables
      .filter((d): d is string => d !== undefined)
      .map(Number);

  return {
    ensure,
    dims,

    /** Writes vectors (replacing any a chunk had); call inside the caller's transaction. */
    put(dim: number, rows: VectorRow[]) {
      const table = ensure(dim);
      const del = sqlite.query(`DELETE FROM ${table} WHERE chunk_id = ?`);
      const ins = sqlite.query(`INSERT INTO ${table}(chunk_id, knowledge_base_id, embedding) VALUES (?, ?, ?)`);
      for (const r of rows) {
        if (r.vector.length !== dim) throw new Error(`vector of ${r.vector.length} dimensions for a ${dim}-dimension table`);
        del.run(r.chunkId);
        ins.run(r.chunkId, r.knowledgeBaseId, r.vector);
      }
      for (const kb of new Set(rows.map((r) => r.knowledgeBaseId))) {
        written(dim, kb, (index) => rows.forEach((r) => r.knowledgeBaseId === kb && index.put(r.chunkId, r.vector)));
      }
    },

    /**
     * The k nearest chunks within the given knowledge bases: on each one's in-memory index (bit
     * pre-filter, exact re-scoring), or by sqlite-vec's exact scan when it does not fit the budget.
     */
    search(dim: number, knowledgeBaseIds: string[], query: Float32Array, k: number): VectorHit[] {
      const hits = knowledgeBaseIds.flatMap((kb) => indexFor(dim, kb)?.search(query, k, candidatesFor(k)) ?? scan(dim, kb, query, k));
      return hits.sort((a, b) => a.distance - b.distance).slice(0, k);
    },

    scan,

    /** Memory the loaded indexes hold, in bytes, and how many there are. */
    memory: () => ({ bytes: heldBytes(), indexes: indexes.size }),

    /** Removes the vectors of these chunks (all dimensions). */
    remove(chunkIds: number[]) {
      const owner = sqlite.query<{ kb: string }, [number]>("SELECT knowledge_base_id AS kb FROM knowledge_chunks WHERE id = ?");
      const kbs = new Set(chunkIds.flatMap((id) => owner.get(id)?.kb ?? []));
      for (const dim of dims()) {
        const del = sqlite.query(`DELETE FROM ${tableFor(dim)} WHERE chunk_id = ?`);
        for (const id of chunkIds) del.run(id);
      }
      for (const kb of kbs) {
        bump.get(kb);
        for (const dim of dims()) indexes.delete(keyOf(dim, kb));
      }
    },

    /**
     * Once per database: removes vectors whose chunk is gone. Ingestion jobs before this version
     * kept writing vectors after their file was deleted or replaced mid-embedding; those were never
     * found again (search skips them) but held index memory and search slots. Returns how many.
     */
    sweepOrphansOnce(): number {
      sqlite.exec(`CREATE TABLE IF NOT EXISTS knowledge_vector_sweeps (name text PRIMARY KEY NOT NULL, done_at integer NOT NULL) WITHOUT ROWID`);
      if (sqlite.query("SELECT 1 FROM knowledge_vector_sweeps WHERE name = 'orphans'").get()) return 0;
      return sqlite.transaction(() => {
        let removed = 0;
        for (const dim of dims()) {
          const table = tableFor(dim);
          const orphans = sqlite.query<{ id: number; kb: string }, []>(`SELECT chunk_id AS id, knowledge_base_id AS kb FROM ${table} WHERE chunk_id NOT IN (SELECT id FROM knowledge_chunks)`).all();
          const del = sqlite.query(`DELETE FROM ${table} WHERE chunk_id = ?`);
          for (const o of orphans) del.run(o.id);
          for (const kb of new Set(orphans.map((o) => o.kb))) {
            bump.get(kb);
            indexes.delete(keyOf(dim, kb));
          }
          removed += orphans.length;
        }
        sqlite.query("INSERT INTO knowledge_vector_sweeps (name, done_at) VALUES ('orphans', ?)").run(Date.now());
        return removed;
      })();
    },

    count(dim: number, knowledgeBaseId?: string): number {
      const table = ensure(dim);
      const row = knowledgeBaseId
        ? sqlite.query<{ n: number }, [string]>(`SELECT count(*) AS n FROM ${table} WHERE knowledge_base_id = ?`).get(knowledgeBaseId)
        : sqlite.query<{ n: number }, []>(`SELECT count(*) AS n FROM ${table}`).get();
      return row?.n ?? 0;
    },
  };
}

export type VectorStore = ReturnType<typeof createVectorStore>;
