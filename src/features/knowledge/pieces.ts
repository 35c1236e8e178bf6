// Gathering a stored file's pieces (content.ts) back into its bytes, shared by the event loop's
// reader (content.ts) and the parser launcher's (ingest/blob-store.ts). No imports: the launcher
// thread loads it without the database layer.

/** Collects pieces, in order, into `size` bytes; `bytes()` is undefined unless exactly that many came. */
export function gatherPieces(size: number) {
  const out = new Uint8Array(size);
  let at = 0;
  return {
    /** False when the piece would run past `size` (not the bytes the file row describes). */
    add(piece: Uint8Array): boolean {
      if (at + piece.byteLength > size) return false;
      out.set(piece, at);
      at += piece.byteLength;
      return true;
    },
    bytes: (): Uint8Array | undefined => (at === size ? out : undefined),
  };
}
