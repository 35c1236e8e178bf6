// HTTP/1.1 requests to a listening Hearth from a chosen loopback address (127.0.0.x), so tests can
// tell callers apart by client address the way the server sees them.
import net from "node:net";
import type { Reply } from "./harness";

export interface AddressedRequest {
  from: string;
  method?: string;
  path: string;
  headers?: Record<string, string>;
  body?: unknown;
}

function decodeChunked(raw: Buffer): Buffer {
  const out: Buffer[] = [];
  let i = 0;
  for (;;) {
    const eol = raw.indexOf("\r\n", i);
    if (eol < 0) break;
    const size = parseInt(raw.subarray(i, eol).toString(), 16);
    if (!size) break;
    out.push(raw.subarray(eol + 2, eol + 2 + size));
    i = eol + 2 + size + 2;
  }
  return Buffer.concat(out);
}

/** Sends one request over a fresh connection bound to `from` and reads the whole reply. */
export function requestFrom(port: number, r: AddressedRequest): Promise<Reply> {
  const body = r.body === undefined ? "" : JSON.stringify(r.body);
  const headers: Record<string, string> = { host: "hearth.test", connection: "close", ...r.headers };
  if (r.body !== undefined) {
    headers["content-type"] ??= "application/json";
    headers["content-length"] = String(Buffer.byteLength(body));
  }
  const head = `${r.method ?? "GET"} ${r.path} HTTP/1.1\r\n${Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join("")}\r\n`;
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    const sock = net.connect({ host: "127.0.0.1", port, localAddress: r.from }, () => sock.write(head + body));
    sock.on("data", (d: Buffer) => parts.push(d));
    sock.on("error", reject);
    sock.on("end", () => {
      const raw = Buffer.concat(parts);
      const split = raw.indexOf("\r\n\r\n");
      const lines = raw.subarray(0, split).toString().split("\r\n");
      const status = Number(lines[0]!.split(" ")[1]);
      const h = new Headers();
      for (const line of lines.slice(1)) {
        const at = line.indexOf(":");
        h.append(line.slice(0, at).trim(), line.slice(at + 1).trim());
      }
      const rest = raw.subarray(split + 4);
      const text = (h.get("transfer-encoding") === "chunked" ? decodeChunked(rest) : rest).toString();
      let parsed: unknown = text;
      try {
        parsed = JSON.parse(text);
      } catch {}
      resolve({ status, headers: h, body: parsed, text });
    });
  });
}
