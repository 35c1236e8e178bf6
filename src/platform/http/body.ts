// Reads request bodies under a byte cap and parses JSON only after a depth check, so hostile
// bodies (huge, chunked without length, nested a million deep) get a 4xx instead of a crash.
import { AppError, invalid, tooLarge } from "../errors";
import { requestMeta } from "./request-meta";

export const JSON_BODY_LIMIT = 1024 * 1024;
export const MAX_JSON_DEPTH = 64;

/** Reads the body as bytes, failing with 413 once it passes `limit` (checked before and while reading). */
export async function readLimited(request: Request, limit: number): Promise<Uint8Array> {
  const declared = Number(request.headers.get("content-length") ?? NaN);
  if (declared > limit) throw bodyTooLarge(limit);
  if (!request.body) return new Uint8Array();
  const reader = request.body.getReader();
  const parts: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => {});
      throw bodyTooLarge(limit);
    }
    parts.push(value);
  }
  return Buffer.concat(parts);
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
    throw new AppError(415, "UnsupportedMediaType", `A ${contentType.split(";")[0] || "body without a type"} body is not accepted; send a JSON object with Content-Type: application/json`);
  }
  return "";
}


/** Reads a multipart body under `limit` and turns it into a plain object (repeated keys → arrays). */
export async function parseMultipart(request: Request, limit: number): Promise<Record<string, unknown>> {
  const bytes = await readLimited(request, limit);
  let form: Awaited<ReturnType<Response["formData"]>>;
  try {
    form = await new Response(bytes, { headers: { "content-type": request.headers.get("content-type") ?? "" } }).formData();
  } catch {
    throw invalid("Request body is not valid multipart/form-data");
  }
  const out: Record<string, unknown> = {};
  for (const key of new Set(form.keys())) {
    const values = form.getAll(key);
    out[key] = values.length === 1 ? values[0] : values;
  }
  return out;
}
