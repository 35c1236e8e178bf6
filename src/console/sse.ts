// Server-sent events over fetch: EventSource cannot send the Authorization header, so the console
// reads the stream itself. Follows the WHATWG parsing rules for event, data, id and comments.
import { request } from "./api";

export interface SseMessage {
  event: string;
  data: string;
  id?: string;
}

/** Yields each event of a text/event-stream response until it ends or `signal` aborts. */
export async function* readSse(res: Response): AsyncGenerator<SseMessage> {
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  let event = "";
  let data: string[] = [];
  let id: string | undefined;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    const lines = buffer.split(/\r\n|\r|\n/);
    buffer = lines.pop() ?? "";
    for (const line of lines) {
      if (line === "") {
        if (data.length) yield { event: event || "message", data: data.join("\n"), id };
        event = "";
        data = [];
        continue;
      }
      if (line.startsWith(":")) continue;
      const colon = line.indexOf(":");
      const field = colon < 0 ? line : line.slice(0, colon);
      let val = colon < 0 ? "" : line.slice(colon + 1);
      if (val.startsWith(" ")) val = val.slice(1);
      if (field === "event") event = val;
      else if (field === "data") data.push(val);
      else if (field === "id") id = val;
    }
  }
}

/** Opens an SSE stream with the session's credentials (POST with a JSON body, or GET). */
export async function openSse(path: string, options: { body?: unknown; signal?: AbortSignal; lastEventId?: string } = {}) {
  const extra: Record<string, string> = { accept: "text/event-stream" };
  if (options.body !== undefined) extra["content-type"] = "application/json";
  if (options.lastEventId) extra["last-event-id"] = options.lastEventId;
  const res = await request(path, {
    method: options.body === undefined ? "GET" : "POST",
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
    headers: extra,
    signal: options.signal,
  });
  return readSse(res);
}
