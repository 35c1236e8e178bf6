// Deleting a chunk costs ~40 µs: its keyword row, its vector and its knowledge base's vector epoch
// go with it by trigger. In one statement a file of 20,000 chunks held the event loop ~0.9 s and a
// workspace of 50,000 ~2 s, every other request waiting. So a deletion first drains the chunks,
// SLICE_ROWS per commit with requests let in between, and the cascade after it has little left.
import type { Database } from "bun:sqlite";

/** ~10 ms of deleting. */
const SLICE_ROWS = 250;

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

export function createChunkDrain(sqlite: Database) {
  const slice = (column: "file_id" | "knowledge_base_id") =>
    sqlite.query<never, [string]>(`DELETE FROM knowledge_chunks WHERE id IN (SELECT id FROM knowledge_chunks WHERE ${column} = ? LIMIT ${SLICE_ROWS})`);
  const byFile = slice("file_id");
  const byBase = slice("knowledge_base_id");
  const basesOf = sqlite.query<{ id: string }, [string]>("SELECT id FROM knowledge_bases WHERE product_id = ?");

  const drain = async (statement: typeof byFile, id: string) => {
    while (statement.run(id).changes > 0) await turn();
  };

  return {
    file: (fileId: string) => drain(byFile, fileId),
    base: (knowledgeBaseId: string) => drain(byBase, knowledgeBaseId),
    async workspace(productId: string) {
      for (const { id } of basesOf.all(productId)) await drain(byBase, id);
    },
  };
}

export type ChunkDrain = ReturnType<typeof createChunkDrain>;
