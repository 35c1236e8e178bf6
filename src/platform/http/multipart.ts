// Multipart bodies parsed off the event loop. Bun's form parser takes ~1.5 ms per MB on this
// machine, all in one call: a 2 MB upload held every other request ~3-4 ms, a 50 MB one 65-80 ms.
// Bodies past INLINE_BYTES go to a thread of their own; their files come back as Blobs. Posting a
// Blob copies its bytes on the sending side (the thread here), not on the event loop: 50 MB back
// cost the event loop ~1 ms.
import { workerUrl } from "../native";
import { ownsBuffer, replyThread } from "../reply-thread";

/** Bodies up to this size are parsed where they are read (the thread's round trip costs more). */
export const INLINE_BYTES = 128 * 1024;

export type FormValue = string | File;
export type FormRequest = { id: number; chunks: ArrayBuffer[]; contentType: string };
type SentValue = string | { blob: Blob; name: string; type: string };
export type FormReply = { id: number; ok: true; entries: [string, SentValue][] } | { id: number; ok: false };

export class MultipartError extends Error {}

/** The form parser's thread, started at the first large body (reply-thread.ts). */
const formThread = replyThread<FormReply>(workerUrl("platform/http/multipart-worker.ts"), "the form parser");

/**
 * The entries, in order, of a multipart body given as its chunks. A large body's chunks are moved
 * to the parser's thread (each is empty afterwards) when each is a whole buffer of its own, as a
 * request body's are, else copied: the body is never joined into one buffer on the event loop.
 * Throws MultipartError when the body is not valid multipart for `contentType`.
 */
export async function formEntries(chunks: Uint8Array[], contentType: string): Promise<[string, FormValue][]> {
  const size = chunks.reduce((n, c) => n + c.byteLength, 0);
  if (size <= INLINE_BYTES) {
    try {
      const form = await new Response(new Blob(chunks), { headers: { "content-type": contentType } }).formData();
      return [...form.entries()] as [string, FormValue][];
    } catch {
      throw new MultipartError("not valid multipart/form-data");
    }
  }
  const moved = chunks.map((c) => (ownsBuffer(c) ? (c.buffer as ArrayBuffer) : c.slice().buffer));
  const reply = await formThread.call((id) => ({ id, chunks: moved, contentType }) satisfies FormRequest, moved).reply;
  if (!reply.ok) throw new MultipartError("not valid multipart/form-data");
  return reply.entries.map(([key, v]) => [key, typeof v === "string" ? v : new File([v.blob], v.name, { type: v.type })]);
}

/** Bytes of a Blob copied in one turn of the event loop (blobBytes). */
const BLOB_TURN_BYTES = 1024 * 1024;

/**
 * The bytes of `blob` in one buffer of their own, copied a MB per turn of the event loop. A file
 * from the parser's thread shares its bytes with that thread, so `arrayBuffer()` copies them all
 * at once: ~20 ms for a 25 MB audio upload, during which no other request ran.
 */
export async function blobBytes(blob: Blob): Promise<Uint8Array> {
  const out = new Uint8Array(blob.size);
  for (let at = 0; at < blob.size; at += BLOB_TURN_BYTES) {
    if (at > 0) await new Promise((resolve) => setImmediate(resolve));
    out.set(new Uint8Array(await blob.slice(at, at + BLOB_TURN_BYTES).arrayBuffer()), at);
  }
  return out;
}
