// The http node: one request under the outbound address rule, with the execution's idempotency
// key, a timeout, a capped response, and failures worth retrying told apart from the others.
import { t } from "elysia";
import { BlockedAddressError, safeFetch, type AllowList } from "../../../platform/net/safe-fetch";
import { parseRetryAfter } from "../engine/retry";
import { RetryableError, type NodeType } from "./node-type";

const DEFAULT_TIMEOUT_MS = 30_000;
export const MAX_RESPONSE_BYTES = 5 * 1024 * 1024;

interface HttpConfig {
  method?: string;
  url: string;
  headers?: Record<string, string>;
  body?: unknown;
  timeout_ms?: number;
}

/** The headers a node's output keeps: what a following node may need, never cookies. */
const KEPT = ["content-type", "content-length", "etag", "last-modified", "location", "retry-after", "link", "x-request-id"];

export function httpNode(allow: AllowList): NodeType<HttpConfig> {
  return {
    type: "http",
    description: "Calls an HTTP API (never loopback, link-local or metadata addresses unless HEARTH_HTTP_ALLOW names them); 4xx/5xx fail the node.",
    config: t.Object(
      {
        method: t.Optional(t.UnionEnum(["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"], { default: "GET" })),
        url: t.String({ minLength: 1, maxLength: 8192 }),
        headers: t.Optional(t.Record(t.String(), t.String())),
        body: t.Optional(t.Unknown({ description: "An object or array is sent as JSON; a string as it is" })),
        timeout_ms: t.Optional(t.Integer({ minimum: 1, maximum: 600_000 })),
      },
      { additionalProperties: false },
    ),
    check: (c) => {
      if (typeof c.url === "string" && !c.url.includes("{{")) {
        try {
          const u = new URL(c.url);
          if (u.protocol !== "http:" && u.protocol !== "https:") return "url must be http or https";
        } catch {
          return `url "${c.url}" is not a URL`;
        }
      }
      return undefined;
    },
    async run(c, ctx) {
      const method = c.method ?? "GET";
      const headers = new Headers(c.headers ?? {});
      // The same on every attempt and after a crash, so the receiver can drop a repeated request.
      if (!headers.has("idempotency-key")) headers.set("idempotency-key", ctx.idempotencyKey);
      let body: string | undefined;
      if (c.body !== undefined && c.body !== null && method !== "GET" && method !== "HEAD") {
        body = typeof c.body === "string" ? c.body : JSON.stringify(c.body);
        if (typeof c.body !== "string" && !headers.has("content-type")) headers.set("content-type", "application/json");
      }
      const signal = AbortSignal.any([ctx.signal, AbortSignal.timeout(c.timeout_ms ?? DEFAULT_TIMEOUT_MS)]);
      let res;
      try {
        res = await safeFetch(c.url, { method, headers, body, signal, allow, maxBytes: MAX_RESPONSE_BYTES });
      } catch (e) {
        if (e instanceof BlockedAddressError) throw e;
        if ((e as Error).name === "TimeoutError") throw new RetryableError(`${method} ${c.url} timed out`);
        throw e;
      }
      const type = res.headers.get("content-type") ?? "";
      const text = res.text();
      let parsed: unknown = text;
      if (/json/i.test(type) && text) {
        try {
          parsed = JSON.parse(text);
        } catch {
          // a server that says JSON and sends something else: the text is kept
        }
      }
      if (res.status >= 400) {
        const line = `${method} ${c.url} answered ${res.status}: ${text.slice(0, 300).replace(/\s+/g, " ")}`;
        if (res.status >= 500 || res.status === 429) throw new RetryableError(line, parseRetryAfter(res.headers.get("retry-after"), ctx.clock.now()));
        throw new Error(line);
      }
      const kept: Record<string, string> = {};
      for (const h of KEPT) {
        const v = res.headers.get(h);
        if (v !== null) kept[h] = v;
      }
      return { output: { status: res.status, headers: kept, body: parsed } };
    },
  };
}
