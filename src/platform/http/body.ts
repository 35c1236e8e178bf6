// Reads request bodies under a byte cap and parses JSON only after a depth check, so hostile
// bodies (huge, chunked without length, nested a million deep) get a 4xx instead of a crash.
import { invalid, tooLarge, unsupportedMedia } from "../errors";
import { formEntries, MultipartError, type FormValue } from "./multipart";
import { requestMeta } from "./request-meta";

export const JSON_BODY_LIMIT = 1024 * 1024;

/** Bodies read to their end (requests here, responses in safe-fetch): the rest were refused or cut short. */
const readToEnd = new WeakSet<object>();

/**
 * Whether the request came with a body Hearth did not read to its end (refused before reading, or
 * stopped at a cap). Its answer then closes the connection: otherwise the server keeps receiving,
 * and throwing away, the rest of an upload it has already refused (megabytes per request in a flood).
 */
export function bodyLeftUnread(request: Request): boolean {
  // Bun gives an empty body as null, so a GET or a bodiless POST keeps its connection.
  return request.body !== null && !readToEnd.has(request);
}
export const MAX_JSON_DEPTH = 64;

/** Bytes of a body read in one turn of the event loop (readLimited). */
const READ_TURN_BYTES = 512 * 1024;

/**
 * The body's chunks as they arrive, failing with 413 once it passes `limit` (checked before and
 * while reading). `inspect` sees each chunk and may throw to stop reading at once. A body already
 * received arrives chunk after chunk within one turn of the event loop; a turn every
 * READ_TURN_BYTES lets the requests that came meanwhile run between them. Each chunk is a buffer
 * of its own (Bun's), so a consumer may move it to another thread.
 */
export async function* bodyChunks(
  request: Pick<Request, "headers" | "body">,
  limit: number,
  inspect?: (chunk: Uint8Array) => void,
  tooLarge: (limit: number) => Error = bodyTooLarge,
): AsyncGenerator<Uint8Array> {
  const declared = Number(request.headers.get("content-length") ?? NaN);
  if (declared > limit) throw tooLarge(limit);
  if (!request.body) return;
  const reader = request.body.getReader();
  let size = 0;
  let sinceTurn = 0;
  for (;;) {
    if (sinceTurn >= READ_TURN_BYTES) {
      sinceTurn = 0;
      await new Promise((resolve) => setImmediate(resolve));
    }
    const { done, value } = await reader.read();
    if (done) {
      readToEnd.add(request);
      return;
    }
    try {
      if (size + value.byteLength > limit) throw tooLarge(limit);
      inspect?.(value);
    } catch (e) {
      await reader.cancel().catch(() => {});
      throw e;
    }
    size += value.byteLength;
    sinceTurn += value.byteLength;
    yield value;
  }
}

/**
 * Reads the body as bytes under `limit` (bodyChunks). Past its first READ_TURN_BYTES, a body is
 * copied into place as it comes (into a buffer of the declared length, when there is one) instead
 * of being joined at the end: joining a 50 MB upload's chunks held the event loop ~20 ms. Not
 * sooner: a buffer of the declared size for every request of a flood refused after its first KB
 * made the garbage collector run all the time.
 */
export async function readLimited(
  request: Pick<Request, "headers" | "body">,
  limit: number,
  inspect?: (chunk: Uint8Array) => void,
  tooLarge: (limit: number) => Error = bodyTooLarge,
): Promise<Uint8Array> {
  const declared = Number(request.headers.get("content-length") ?? NaN);
  const parts: Uint8Array[] = [];
  let whole: Uint8Array | undefined;
  let size = 0;
  for await (const value of bodyChunks(request, limit, inspect, tooLarge)) {
    if (!whole && size + value.byteLength <= READ_TURN_BYTES) parts.push(value);
    else {
      whole = placeAt(whole ?? Buffer.concat(parts), size, value, declared >= 0 ? declared : 0, limit);
      parts.length = 0;
    }
    size += value.byteLength;
  }
  if (!whole) return Buffer.concat(parts);
  // A buffer of exactly the body (what a declared length gives) can be handed to another thread whole.
  return size === whole.byteLength ? whole : whole.slice(0, size);
}

/** `chunk` copied into `buf` at `at`; a bigger buffer first (`want` bytes, or twice as many) if it does not fit. */
function placeAt(buf: Uint8Array, at: number, chunk: Uint8Array, want: number, limit: number): Uint8Array {
  if (at + chunk.byteLength > buf.byteLength) {
    const grown = new Uint8Array(Math.min(limit, Math.max(want, 2 * buf.byteLength, at + chunk.byteLength)));
    grown.set(buf.subarray(0, at));
    buf = grown;
  }
  buf.set(chunk, at);
  return buf;
}

export const bodyTooLarge = (limit: number) =>
  tooLarge(`Request body is larger than the ${formatBytes(limit)} this endpoint accepts`);

export function formatBytes(n: number): string {
  return n >= 1024 * 1024 ? `${Math.round(n / (1024 * 1024))} MB` : `${Math.round(n / 1024)} KB`;
}

/** Deepest nesting of arrays/objects in a JSON text, stopping early once past `max`. */
export function jsonDepthExceeds(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92 /* \ */) i++;
      else if (c === 34 /* " */) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 123 || c === 91 /* { [ */) {
      if (++depth > max) return true;
    } else if (c === 125 || c === 93) depth--;
  }
  return false;
}

export async function parseJsonBody(request: Request, limit = JSON_BODY_LIMIT): Promise<unknown> {
  const bytes = await readLimited(request, limit);
  requestMeta(request).rawBody = bytes;
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw invalid("Request body is not valid UTF-8");
  }
  if (text.trim() === "") throw invalid("Request body is empty; send a JSON object");
  if (jsonDepthExceeds(text, MAX_JSON_DEPTH)) throw invalid(`Request body is nested deeper than ${MAX_JSON_DEPTH} levels`);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw invalid(`Request body is not valid JSON: ${(e as Error).message}`);
  }
  // Every JSON body Hearth takes is an object; an array or a bare value would otherwise reach
  // validation mangled (defaults spread into it) and get a baffling message.
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw invalid("The request body must be a JSON object");
  return value;
}

/** A body in any other format: refused unless empty (POSTs without a body often carry a content type anyway). */
export async function refuseOtherBody(request: Request, contentType: string): Promise<string> {
  const bytes = await readLimited(request, JSON_BODY_LIMIT);
  if (bytes.byteLength > 0 && new TextDecoder().decode(bytes).trim() !== "") {
    throw unsupportedMedia(`A ${contentType.split(";")[0] || "body without a type"} body is not accepted; send a JSON object with Content-Type: application/json`);
  }
  return "";
}


/** Fields (parts) one multipart body may carry: a file upload needs a handful, never thousands. */
export const MAX_MULTIPART_FIELDS = 1000;

/** Reads a multipart body under `limit` and turns it into a plain object (repeated keys → arrays). */
export async function parseMultipart(request: Request, limit: number): Promise<Record<string, unknown>> {
  const contentType = request.headers.get("content-type") ?? "";
  const boundary = /boundary="?([^";]+)"?/i.exec(contentType)?.[1];
  // Parts are counted on the raw bytes as they arrive, so a body of 100,000 tiny fields is
  // refused after its first few KB, before the form parser builds 100,000 entries. The chunks are
  // kept as they came: a large body's go to the parser's thread without being joined here.
  const chunks: Uint8Array[] = [];
  for await (const chunk of bodyChunks(request, limit, boundary ? partCounter(`--${boundary}`) : undefined)) chunks.push(chunk);
  let entries: [string, FormValue][];
  try {
    entries = await formEntries(chunks, contentType);
  } catch (e) {
    if (e instanceof MultipartError) throw invalid("Request body is not valid multipart/form-data");
    throw e;
  }
  const out: Record<string, unknown> = Object.create(null);
  let fields = 0;
  // One pass over the entries: linear in the number of fields.
  for (const [key, value] of entries) {
    if (++fields > MAX_MULTIPART_FIELDS) throw tooManyFields();
    const seen = out[key];
    if (seen === undefined) out[key] = value;
    else if (Array.isArray(seen)) seen.push(value);
    else out[key] = [seen, value];
  }
  return { ...out };
}

const tooManyFields = () => tooLarge(`A multipart body may carry at most ${MAX_MULTIPART_FIELDS.toLocaleString("en-US")} fields`);

/** Counts boundary lines across chunks (one per part, plus the closing one) and throws past the cap. */
function partCounter(delimiter: string): (chunk: Uint8Array) => void {
  const needle = Buffer.from(delimiter);
  let tail = Buffer.alloc(0); // the previous chunk's last bytes, for a delimiter split across chunks
  let count = 0;
  return (chunk) => {
    const buf = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    const seam = Buffer.concat([tail, buf.subarray(0, needle.length - 1)]);
    for (let at = seam.indexOf(needle); at !== -1 && at < tail.length; at = seam.indexOf(needle, at + 1)) count++;
    for (let at = buf.indexOf(needle); at !== -1; at = buf.indexOf(needle, at + needle.length)) {
      if (++count > MAX_MULTIPART_FIELDS + 1) throw tooManyFields();
    }
    if (count > MAX_MULTIPART_FIELDS + 1) throw tooManyFields();
    const recent = buf.length >= needle.length - 1 ? buf : Buffer.concat([tail, buf]);
    tail = Buffer.from(recent.subarray(Math.max(0, recent.length - (needle.length - 1))));
  };
}

/** No request may carry more than this; routes that take files set their own, smaller caps. */
export const MAX_REQUEST_BYTES = 51 * 1024 * 1024;

/** Reads and parses a body by its content type: multipart under the global cap, JSON, or nothing. */
export function readBody(request: Request, contentType: string): Promise<unknown> {
  // Routes that take files check their own caps on the parsed file.
  if (contentType.startsWith("multipart/form-data")) return parseMultipart(request, MAX_REQUEST_BYTES);
  if (contentType.startsWith("application/json") || contentType.endsWith("+json")) return parseJsonBody(request);
  return refuseOtherBody(request, contentType);
}

/**
 * A body not read yet. The parse stage runs before Hearth knows who is calling, so it only wraps
 * the request; the auth step reads the body once the caller has passed authentication and its
 * rate limit (see platform/auth/plugin.ts). A request that fails either is answered unread.
 */
export class PendingBody {
  constructor(
    private readonly request: Request,
    private readonly contentType: string,
  ) {}

  read(): Promise<unknown> {
    return readBody(this.request, this.contentType);
  }
}

/** The body of a route without an `auth` option (its own checks ran first, e.g. webhooks): read it now. */
export const readPending = async (body: unknown): Promise<unknown> => (body instanceof PendingBody ? body.read() : body);
