// A stored file's bytes, read on the parser launcher's thread from a connection of its own: reading
// a 2 MB blob held the event loop 1-5 ms for every file ingested (50 MB: tens of ms).
import { Database } from "bun:sqlite";

export function readStoredFile(dbPath: string, fileId: string): Uint8Array | undefined {
  // One connection per file: opening one costs well under a millisecond, on this thread.
  const db = new Database(dbPath, { readwrite: true, create: false });
  try {
    db.exec("PRAGMA busy_timeout = 5000");
    return db.query<{ content: Uint8Array }, [string]>("SELECT content FROM knowledge_file_blobs WHERE file_id = ?").get(fileId)?.content;
  } finally {
    db.close();
  }
}
