// Retry policy of a node: which failures are worth another attempt, and how long to wait first.
import { RetryableError } from "../nodes/node-type";
import type { RetryPolicy } from "../model";

const DEFAULT_BACKOFF_MS = 1000;
const DEFAULT_MAX_BACKOFF_MS = 60_000;
/** A server's Retry-After is honoured up to this; past it the node fails instead of sleeping a day. */
const MAX_RETRY_AFTER_MS = 3_600_000;

export class NodeTimeoutError extends Error {}

/** 5xx, 429, timeouts and network errors are retryable; a bad config or a 4xx is not. */
export function isRetryable(e: unknown): boolean {
  if (e instanceof RetryableError || e instanceof NodeTimeoutError) return true;
  const err = e as { name?: string; code?: string; message?: string; cause?: { code?: string } };
  if (err?.name === "TimeoutError") return true;
  const code = `${err?.code ?? ""} ${err?.cause?.code ?? ""}`;
  return /ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|ENOTFOUND|EAI_AGAIN|ConnectionRefused|ConnectionClosed/.test(code) || /fetch failed|Unable to connect|socket connection was closed/i.test(err?.message ?? "");
}

/**
 * Exponential backoff with "equal jitter" (half fixed, half random), capped; a Retry-After the
 * server sent is waited at least.
 */
export function backoffMs(policy: RetryPolicy | undefined, attempt: number, retryAfterMs?: number, random = Math.random): number {
  const base = policy?.backoff_ms ?? DEFAULT_BACKOFF_MS;
  const cap = policy?.max_backoff_ms ?? DEFAULT_MAX_BACKOFF_MS;
  const exp = Math.min(cap, base * 2 ** Math.max(0, attempt - 1));
  const jittered = exp / 2 + (random() * exp) / 2;
  return Math.round(Math.max(jittered, Math.min(retryAfterMs ?? 0, MAX_RETRY_AFTER_MS)));
}

/** Retry-After as milliseconds: delta-seconds or an HTTP date. */
export function parseRetryAfter(value: string | null, now: number): number | undefined {
  if (!value) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}
