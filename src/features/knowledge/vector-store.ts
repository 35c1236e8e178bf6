// The one owner of the vector tables: one sqlite-vec table per embedding dimension, partitioned
// by knowledge base, cleaned by a trigger when chunks go. Raw SQL lives here and nowhere else.
import type { Database } from "bun:sqlite";

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

const tableFor = (dim: number) => {
  if (!Number.isInteger(dim) || dim < 1 || dim > 8192) throw new Error(`unsupported embedding dimension ${dim}`);
  return `knowledge_vectors_${dim}`;
};

export function createVectorStore(sqlite: Database) {
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
    },

    /** The k nearest chunks within the given knowledge bases (exact search, per partition). */
    search(dim: number, knowledgeBaseIds: string[], query: Float32Array, k: number): VectorHit[] {
      const table = ensure(dim);
      const q = sqlite.query<{ chunk_id: number; distance: number }, [Float32Array, number, string]>(
        `SELECT chunk_id, distance FROM ${table} WHERE embedding MATCH ? AND k = ? AND knowledge_base_id = ?`,
      );
      const hits = knowledgeBaseIds.flatMap((kb) => q.all(query, k, kb).map((r) => ({ chunkId: r.chunk_id, distance: r.distance })));
      return hits.sort((a, b) => a.distance - b.distance).slice(0, k);
    },

    /** Removes the vectors of these chunks (all dimensions). */
    remove(chunkIds: number[]) {
      for (const dim of dims()) {
        const del = sqlite.query(`DELETE FROM ${tableFor(dim)} WHERE chunk_id = ?`);
        for (const id of chunkIds) del.run(id);
      }
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
