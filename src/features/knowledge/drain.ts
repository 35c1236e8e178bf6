// Deleting a chunk costs ~40 µs: its keyword row, its vector and its knowledge base's vector epoch
// go with it by trigger. In one statement a file of 20,000 chunks held the event loop ~0.9 s and a
// workspace of 50,000 ~2 s, every other request waiting. So a deletion first drains the chunks,
// SLICE_ROWS per commit with requests let in between, and the cascade after it has little left.
// Dropped vectors go the same way (~22 µs each: 1.1 s for a knowledge base of 50,000 in one go).
import type { Database } from "bun:sqlite";

/** ~10 ms of deleting. */
const SLICE_ROWS = 250;

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

export function createChunkDrain(sqlite: Database) {
  const slice = (column: "file_id" | "knowledge_base_id") =>
    sqlite.query<never, [string]>(`DELETE FROM knowledge_chunks WHERE id IN (SELECT id FROM knowledge_chunks WHERE ${column} = ? LIMIT ${SLICE_ROWS})`);
  const byFile = slice("file_id");
  const byBase = slice("knowledge_base_id");
  // Chunk ids only grow (AUTOINCREMENT): a file's chunks up to an id are the ones it had then.
  const byFileUpTo = sqlite.query<never, [string, number]>(
    `DELETE FROM knowledge_chunks WHERE id IN (SELECT id FROM knowledge_chunks WHERE file_id = ? AND id <= ? LIMIT ${SLICE_ROWS})`,
  );
  const lastOfFile = sqlite.query<{ last: number | null }, [string]>("SELECT max(id) AS last FROM knowledge_chunks WHERE file_id = ?");
  const basesOf = sqlite.query<{ id: string }, [string]>("SELECT id FROM knowledge_bases WHERE product_id = ?");

  /** Runs `step` (one slice's delete, its count) a turn at a time until it deletes nothing. */
  const drain = async (step: () => number) => {
    while (step() > 0) await turn();
  };

  return {
    file: (fileId: string) => drain(() => byFile.run(fileId).changes),
    /** The file's last chunk id now: what `fileUpTo` drains, leaving chunks written later. */
    lastChunkOf: (fileId: string) => lastOfFile.get(fileId)?.last ?? 0,
    fileUpTo: (fileId: string, lastId: number) => drain(() => byFileUpTo.run(fileId, lastId).changes),
    base: (knowledgeBaseId: string) => drain(() => byBase.run(knowledgeBaseId).changes),
    /** Runs `remove` over `ids` a slice at a time, a commit each (a file's vectors when they are dropped). */
    async inSlices(ids: number[], remove: (slice: number[]) => void) {
      for (let i = 0; i < ids.length; i += SLICE_ROWS) {
        sqlite.transaction(() => remove(ids.slice(i, i + SLICE_ROWS)))();
        await turn();
      }
    },
    async workspace(productId: string) {
      for (const { id } of basesOf.all(productId)) await drain(() => byBase.run(id).changes);
    },
  };
}

export type ChunkDrain = ReturnType<typeof createChunkDrain>;
