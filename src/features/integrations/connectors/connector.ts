// One interface every connector implements: its config and credentials schemas, and its tools,
// each a real call of that product's documented API through the outbound address rule.
import type { TSchema } from "elysia";
import { safeFetch, type AllowList } from "../../../platform/net/safe-fetch";
import { parseRetryAfter } from "../../workflows/engine/retry";
import { RetryableError } from "../../workflows/nodes/node-type";

export interface CallContext {
  config: Record<string, unknown>;
  credentials: Record<string, unknown>;
  signal: AbortSignal;
  allow: AllowList;
  /** Where a communicator's reply goes (a Teams activity's verified serviceUrl); never a caller's argument. */
  replyServiceUrl?: string;
}

export interface ConnectorTool {
  name: string;
  description: string;
  input: TSchema;
  run(args: any, ctx: CallContext): Promise<{ text: string; data: unknown }>;
}

export interface Connector {
  type: string;
  description: string;
  config: TSchema;
  credentials: TSchema;
  tools: ConnectorTool[];
  /** Tools that depend on an integration's config (the generic http service's operations). */
  toolsFor?(config: Record<string, unknown>): ConnectorTool[];
  /** Config fields naming where the credentials are sent (default: base_url): http(s) URLs only. */
  urlFields?: string[];
  /** One cheap authenticated read that proves config and credentials work; a line saying what it saw. */
  check?(ctx: CallContext): Promise<string>;
}

const MAX_BYTES = 5 * 1024 * 1024;

/**
 * One JSON API call: 429 and 5xx become retryable errors carrying Retry-After, other errors one
 * readable line from the product's error body.
 */
export async function apiCall(product: string, url: string, init: { method?: string; headers: Record<string, string>; body?: unknown; signal: AbortSignal; allow: AllowList }) {
  const res = await safeFetch(url, {
    method: init.method ?? "GET",
    headers: { accept: "application/json", ...(init.body !== undefined ? { "content-type": "application/json" } : {}), ...init.headers },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
    signal: AbortSignal.any([init.signal, AbortSignal.timeout(30_000)]),
    allow: init.allow,
    maxBytes: MAX_BYTES,
  });
  const text = res.text();
  let data: unknown = text;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    // not JSON: kept as text for the message
  }
  if (res.status >= 400) {
    const body = data as { message?: string; error?: string | { message?: string }; errorMessages?: string[] } | string;
    const reason =
      typeof body === "string"
        ? body.slice(0, 200)
        : (body?.message ?? (typeof body?.error === "string" ? body.error : body?.error?.message) ?? body?.errorMessages?.join("; ") ?? JSON.stringify(body).slice(0, 200));
    // A service may echo what it was sent: the Authorization header (Basic credentials only exist encoded, here) is not repeated.
    const authorization = Object.entries(init.headers).find(([name]) => name.toLowerCase() === "authorization")?.[1];
    const line = redact(`${product} answered ${res.status} to ${init.method ?? "GET"} ${new URL(url).pathname}: ${reason}`, authorization ? [authorization, authorization.replace(/^\S+\s+/, "")] : []);
    if (res.status === 429 || res.status >= 500 || (res.status === 403 && res.headers.get("x-ratelimit-remaining") === "0")) throw new RetryableError(line, parseRetryAfter(res.headers.get("retry-after"), Date.now()));
    throw new Error(line);
  }
  return { data, headers: res.headers };
}

/** `text` with every one of `secrets` (those of 4 characters or more) replaced by [redacted]. */
export function redact(text: string, secrets: string[]): string {
  return secrets
    .filter((x) => x.length >= 4)
    .sort((a, b) => b.length - a.length)
    .reduce((out, secret) => out.replaceAll(secret, "[redacted]"), text);
}

/**
 * Pages one listing follows at most: a server whose every page points to a next one (empty or not)
 * must not keep Hearth calling it. 200 items, the largest limit, fit in far fewer pages.
 */
export const MAX_PAGES = 10;

/** The URL of the next page from an RFC 8288 Link header (GitHub, Gitea). */
export function nextLink(link: string | null): string | undefined {
  return link?.split(",").map((p) => /<([^>]+)>;\s*rel="next"/.exec(p)?.[1]).find(Boolean);
}

export const baseUrl = (config: Record<string, unknown>, fallback: string) => String(config.base_url ?? fallback).replace(/\/+$/, "");
