// The one language-model interface chat, llm nodes and agents use: streaming, tool calls, abort,
// context window and usage, whichever server is behind it (Ollama, or any OpenAI-compatible one).
import type { Clock } from "../clock";

export interface ToolCall {
  id: string;
  name: string;
  arguments: Record<string, unknown>;
}

export type LlmMessage =
  | { role: "system" | "user"; content: string }
  | { role: "assistant"; content: string; toolCalls?: ToolCall[] }
  | { role: "tool"; content: string; toolCallId: string; name: string };

/** A tool the model may call: a name, what it does, and the JSON Schema of its arguments. */
export interface ToolSpec {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

export type LlmStatus = { state: "ok"; model: string; contextLength: number } | { state: "unavailable"; model: string; reason: string };

export type LlmPiece = { delta: string } | { toolCalls: ToolCall[] } | { done: true; promptTokens?: number; completionTokens?: number };

export interface LlmRequest {
  model: string;
  messages: LlmMessage[];
  contextLength: number;
  maxAnswerTokens: number;
  signal: AbortSignal;
  format?: "json";
  tools?: ToolSpec[];
  temperature?: number;
}

export interface Llm {
  provider: "ollama" | "openai";
  url: string;
  defaultModel: string;
  status(model?: string): Promise<LlmStatus>;
  /**
   * The last answer of `status`, without waiting (undefined before the first or after `forget`);
   * an old one is refreshed behind it, as `status` does.
   */
  knownStatus(model?: string): LlmStatus | undefined;
  /** Forgets what is known of a model, so the next status probes again (after a failure). */
  forget(model?: string): void;
  /** Streams the answer piece by piece: text, then any tool calls, then `done` with token counts. */
  stream(request: LlmRequest): AsyncGenerator<LlmPiece>;
  /** One short answer, not streamed; gives up after `timeoutMs`. */
  complete(request: LlmRequest & { timeoutMs: number }): Promise<string>;
  /** One line a person can act on, from whatever the client or the network threw. */
  describeFailure(e: unknown, model: string): string;
}

/** Context windows past this are not asked for: servers allocate the whole window up front. */
export const MAX_CONTEXT = 8192;
/** A status answer is trusted this long: spares every request a probe, still notices a restart. */
export const STATUS_TTL_MS = 5_000;
/** A probe of a server that does not answer gives up after this. */
export const PROBE_TIMEOUT_MS = 2_000;

/**
 * A status cache shared by the providers: at most one probe per model at a time, and none while
 * the last answer is younger than STATUS_TTL_MS. An older answer is still given at once while a
 * probe refreshes it, so a server that hangs costs its PROBE_TIMEOUT_MS only to the first caller,
 * not to every /health or chat every few seconds.
 */
export function statusCache(clock: Clock, probe: (model: string) => Promise<LlmStatus>) {
  const cache = new Map<string, { at: number; status: LlmStatus }>();
  const probing = new Map<string, Promise<LlmStatus>>();
  const refresh = (model: string): Promise<LlmStatus> => {
    let running = probing.get(model);
    if (!running) {
      running = probe(model)
        .then((status) => {
          // A forget() while probing wins: this answer may predate what made the caller forget.
          if (probing.get(model) === running) cache.set(model, { at: clock.now(), status });
          return status;
        })
        .finally(() => probing.get(model) === running && probing.delete(model));
      probing.set(model, running);
    }
    return running;
  };
  /** The cached answer (refreshed behind it once old), or undefined when there is none yet. */
  const peek = (model: string): LlmStatus | undefined => {
    const hit = cache.get(model);
    if (hit && clock.now() - hit.at >= STATUS_TTL_MS) void refresh(model).catch(() => undefined);
    return hit?.status;
  };
  return {
    peek,
    get(model: string): Promise<LlmStatus> {
      const known = peek(model);
      return known ? Promise.resolve(known) : refresh(model);
    },
    forget(model: string) {
      cache.delete(model);
      probing.delete(model);
    },
  };
}

/** The model server said nothing for longer than HEARTH_LLM_TIMEOUT_S (its message says so). */
export class LlmSilenceError extends Error {}

/** The network part of a failure message, common to every HTTP model server. */
export function networkFailure(e: unknown, url: string, server: string): string | undefined {
  if (e instanceof LlmSilenceError) return e.message;
  const err = e as Error & { code?: string; cause?: { code?: string } };
  const message = err?.message ?? String(e);
  if (err?.name === "TimeoutError" || /timed? ?out/i.test(message)) return `${server} at ${url} did not answer in time`;
  if (/ECONNREFUSED|Unable to connect|fetch failed|ConnectionRefused|Connection error|connect/i.test(`${message} ${err?.code ?? ""} ${err?.cause?.code ?? ""}`)) return `${server} is not reachable at ${url}`;
  return undefined;
}
