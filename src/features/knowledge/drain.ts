// Knowledge's large deletes, drained (platform/db/drain.ts): a file's, a knowledge base's or a
// workspace's chunks before their rows go (one statement held the event loop ~2 s for 50,000), a
// stored-again file's old chunks, and dropped vectors (~22 µs each: 1.1 s for 50,000 in one go).
import type { Database } from "bun:sqlite";
import { drainer, nextTurn, SLICE_ROWS } from "../../platform/db/drain";

export function createChunkDrain(sqlite: Database) {
  const byBase = drainer<[string]>(sqlite, "knowledge_chunks", "knowledge_base_id = ?");
  const lastOfFile = sqlite.query<{ last: number | null }, [string]>("SELECT max(id) AS last FROM knowledge_chunks WHERE file_id = ?");
  const basesOf = sqlite.query<{ id: string }, [string]>("SELECT id FROM knowledge_bases WHERE product_id = ?");

  return {
    file: drainer<[fileId: string]>(sqlite, "knowledge_chunks", "file_id = ?"),
    /** The file's last chunk id now: what `fileUpTo` drains, leaving chunks written later. */
    lastChunkOf: (fileId: string) => lastOfFile.get(fileId)?.last ?? 0,
    // Chunk ids only grow (AUTOINCREMENT): a file's chunks up to an id are the ones it had then.
    fileUpTo: drainer<[fileId: string, lastId: number]>(sqlite, "knowledge_chunks", "file_id = ? AND id <= ?"),
    base: byBase,
    async workspace(productId: string) {
      for (const { id } of basesOf.all(productId)) await byBase(id);
    },
    /** Runs `remove` over `ids` a slice at a time, a commit each (a file's vectors when they are dropped). */
    async inSlices(ids: number[], remove: (slice: number[]) => void) {
      for (let i = 0; i < ids.length; i += SLICE_ROWS) {
        sqlite.transaction(() => remove(ids.slice(i, i + SLICE_ROWS)))();
        await nextTurn();
      }
    },
  };
}

export type ChunkDrain = ReturnType<typeof createChunkDrain>;
