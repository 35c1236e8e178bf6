// An uploaded file's bytes, kept in the database in pieces (table.ts, knowledgeContentPieces).
//
// One 50 MB blob was one insert of ~0.5–0.7 s on the event loop (and one select of ~0.1 s to read it
// back), during which no other request was answered. Pieces of PIECE_BYTES are written and read
// one per event-loop turn instead, so other requests run between them. Writes are relaxed commits
// (no fsync each): the caller's durable commit of the row that names the content makes every
// earlier piece durable too (WAL frames are ordered; see platform/db/durability.ts).
import { and, asc, eq, notExists, sql } from "drizzle-orm";
import type { Db } from "../../platform/db/database";
import { relaxed } from "../../platform/db/durability";
import { knowledgeContentPieces, knowledgeFiles } from "./table";
import { gatherPieces } from "./pieces";

/** Bytes per piece: one piece's insert holds the event loop ~2–4 ms here. */
export const PIECE_BYTES = 256 * 1024;

/** Lets the event loop serve what is waiting before the next piece. */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** The bytes of `file` in pieces of PIECE_BYTES, one per event-loop turn (an empty file is one empty piece). */
async function* piecesOf(file: Blob): AsyncGenerator<Uint8Array> {
  for (let at = 0; at === 0 || at < file.size; at += PIECE_BYTES) {
    if (at > 0) await nextTurn();
    yield new Uint8Array(await file.slice(at, at + PIECE_BYTES).arrayBuffer());
  }
}

/** The SHA-256 (hex) of `file`, a piece per event-loop turn (a 50 MB file in one go held it ~40 ms). */
export async function digestOf(file: Blob): Promise<string> {
  const hash = new Bun.CryptoHasher("sha256");
  for await (const piece of piecesOf(file)) hash.update(piece);
  return hash.digest("hex");
}

export type ContentStore = ReturnType<typeof createContentStore>;

export function createContentStore(db: Db) {
  const insertPiece = db
    .insert(knowledgeContentPieces)
    .values({ contentId: sql.placeholder("contentId"), seq: sql.placeholder("seq"), bytes: sql.placeholder("bytes") })
    .prepare();
  const readPiece = db
    .select({ bytes: knowledgeContentPieces.bytes })
    .from(knowledgeContentPieces)
    .where(and(eq(knowledgeContentPieces.contentId, sql.placeholder("contentId")), eq(knowledgeContentPieces.seq, sql.placeholder("seq"))))
    .prepare();

  /**
   * Removes content no file row came to name (a failed or duplicate upload; one whose row was
   * committed before a later step failed is kept); false when the database refused the delete too
   * (a full disk), which leaves the pieces to the next start's sweep and the caller free to report
   * the error that led here.
   */
  const discard = (contentId: string): boolean => {
    const named = db.select({ one: sql`1` }).from(knowledgeFiles).where(eq(knowledgeFiles.contentId, contentId));
    try {
      relaxed(db, () => db.delete(knowledgeContentPieces).where(and(eq(knowledgeContentPieces.contentId, contentId), notExists(named))).run());
      return true;
    } catch {
      return false;
    }
  };

  return {
    /**
     * Stores the bytes of `file` under a new content id, which the caller then names in a file row
     * (until then the pieces belong to nobody, and a start removes them if that row never comes).
     */
    async write(file: Blob): Promise<string> {
      const contentId = crypto.randomUUID();
      try {
        let seq = 0;
        for await (const piece of piecesOf(file)) {
          relaxed(db, () => insertPiece.run({ contentId, seq, bytes: piece }));
          seq += 1;
        }
      } catch (e) {
        // A piece the database refused (a full disk, an I/O error): the pieces before it go now,
        // not at the next start.
        discard(contentId);
        throw e;
      }
      return contentId;
    },

    /** The bytes under `contentId` (`size` of them, as the file row says), read a piece per turn. */
    async read(contentId: string, size: number): Promise<Uint8Array | undefined> {
      const gathered = gatherPieces(size);
      for (let seq = 0; ; seq++) {
        if (seq > 0) await nextTurn();
        const piece = readPiece.get({ contentId, seq });
        if (!piece) break;
        if (!gathered.add(piece.bytes)) return undefined;
      }
      return gathered.bytes();
    },

    /** The bytes under `contentId` as a stream, a piece per pull (downloads never hold the whole file). */
    stream(contentId: string): ReadableStream<Uint8Array> {
      let seq = 0;
      return new ReadableStream<Uint8Array>({
        pull(controller) {
          const piece = readPiece.get({ contentId, seq: seq++ });
          if (piece) controller.enqueue(new Uint8Array(piece.bytes));
          else controller.close();
        },
      });
    },

    discard,

    /** Removes pieces no file names: an upload cut off by a crash before its row was committed. Run at start. */
    sweep(): number {
      return db.$client
        .prepare("DELETE FROM knowledge_content_pieces WHERE NOT EXISTS (SELECT 1 FROM knowledge_files f WHERE f.content_id = knowledge_content_pieces.content_id)")
        .run().changes;
    },
  };
}

/** Pieces of one content id in order (tests and diagnostics). */
export function pieceSizes(db: Db, contentId: string): number[] {
  return db
    .select({ n: sql<number>`length(${knowledgeContentPieces.bytes})` })
    .from(knowledgeContentPieces)
    .where(eq(knowledgeContentPieces.contentId, contentId))
    .orderBy(asc(knowledgeContentPieces.seq))
    .all()
    .map((r) => r.n);
}
