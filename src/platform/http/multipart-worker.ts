// The form parser's thread (multipart.ts): parses a multipart body with Bun's own parser and sends
// back its entries. Uploaded files go back as Blobs: their bytes are copied here as they are posted,
// so the event loop receives them without a copy of its own.
import type { FormReply, FormRequest } from "./multipart";

declare const self: Worker;

self.onmessage = async (ev: MessageEvent<FormRequest>) => {
  const { id, chunks, contentType } = ev.data;
  let reply: FormReply;
  try {
    const form = await new Response(new Blob(chunks), { headers: { "content-type": contentType } }).formData();
    const entries: FormReply & { ok: true } = { id, ok: true, entries: [] };
    for (const [key, value] of form.entries()) {
      entries.entries.push([key, typeof value === "string" ? value : { blob: value, name: value.name, type: value.type }]);
    }
    reply = entries;
  } catch {
    reply = { id, ok: false };
  }
  postMessage(reply);
};
