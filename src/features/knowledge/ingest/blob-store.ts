// A stored file's bytes, read on the parser launcher's thread from a connection of its own, piece
// by piece (knowledge/content.ts): reading them on the event loop held it 1-5 ms for every 2 MB file
// ingested (50 MB: tens of ms).
import { Database } from "bun:sqlite";
import { gatherPieces } from "../pieces";

/** The `size` bytes stored under `contentId`; undefined when they are missing or not that many. */
export function readStoredFile(dbPath: string, contentId: string, size: number): Uint8Array | undefined {
  // One connection per file: opening one costs well under a millisecond, on this thread.
  const db = new Database(dbPath, { readwrite: true, create: false });
  try {
    db.exec("PRAGMA busy_timeout = 5000");
    const gathered = gatherPieces(size);
    // One read transaction, so a replacement committed meanwhile cannot mix two versions.
    const pieces = db.query<{ bytes: Uint8Array }, [string]>("SELECT bytes FROM knowledge_content_pieces WHERE content_id = ? ORDER BY seq");
    for (const { bytes } of pieces.iterate(contentId)) if (!gathered.add(bytes)) return undefined;
    return gathered.bytes();
  } finally {
    db.close();
  }
}
