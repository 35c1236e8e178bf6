// The language model behind the assistant: Ollama through its official client. Knows (briefly
// cached) whether the server answers and has the model, and the model's context window; streams
// answers that stop the moment the caller's signal aborts.
import { Ollama, type Message } from "ollama";
import type { Clock } from "../../platform/clock";

export type LlmStatus = { state: "ok"; model: string; contextLength: number } | { state: "unavailable"; model: string; reason: string };

export type LlmPiece = { delta: string } | { done: true; promptTokens?: number; completionTokens?: number };

/** Context windows past this are not asked for: Ollama allocates the whole window up front. */
export const MAX_CONTEXT = 8192;
/** Ollama's own default window, assumed when a model does not say. */
const DEFAULT_CONTEXT = 2048;
/** How long a status answer is trusted: long enough to spare every chat a probe, short enough to notice a restart. */
const STATUS_TTL_MS = 5_000;
/** A probe of a server that does not answer gives up after this. */
const PROBE_TIMEOUT_MS = 2_000;

export interface LlmOptions {
  url: string;
  model: string;
  clock: Clock;
}

/** One line a person can act on, from whatever the client or the network threw. */
export function describeFailure(e: unknown, url: string, model: string): string {
  const err = e as Error & { status_code?: number; code?: string; cause?: { code?: string } };
  const message = err?.message ?? String(e);
  if (err?.status_code === 404 || /not found/i.test(message)) return `the model "${model}" is not available in Ollama (run: ollama pull ${model})`;
  if (err?.name === "TimeoutError" || /timed? ?out/i.test(message)) return `Ollama at ${url} did not answer in time`;
  if (/ECONNREFUSED|Unable to connect|fetch failed|ConnectionRefused|connect/i.test(`${message} ${err?.code ?? ""} ${err?.cause?.code ?? ""}`)) {
    return `Ollama is not reachable at ${url}`;
  }
  return `Ollama failed: ${message}`;
}

export function createLlm({ url, model: defaultModel, clock }: LlmOptions) {
  /** A client whose every request also ends when `signal` aborts (the ollama client takes no per-call signal). */
  const clientFor = (signal: AbortSignal) =>
    new Ollama({
      host: url,
      fetch: ((input: string | URL | Request, init?: RequestInit) =>
        fetch(input, { ...init, signal: init?.signal ? AbortSignal.any([init.signal, signal]) : signal })) as typeof fetch,
    });

  const cache = new Map<string, { at: number; status: LlmStatus }>();

  const probe = async (model: string): Promise<LlmStatus> => {
    try {
      const shown = await clientFor(AbortSignal.timeout(PROBE_TIMEOUT_MS)).show({ model });
      const info = (shown.model_info ?? {}) as unknown as Record<string, unknown>;
      const arch = info["general.architecture"];
      const fromInfo = Number(info[`${arch}.context_length`]);
      const fromParameters = Number(/num_ctx\s+(\d+)/.exec(shown.parameters ?? "")?.[1]);
      const contextLength = Number.isFinite(fromParameters) && fromParameters > 0 ? fromParameters : Number.isFinite(fromInfo) && fromInfo > 0 ? fromInfo : DEFAULT_CONTEXT;
      return { state: "ok", model, contextLength: Math.min(contextLength, MAX_CONTEXT) };
    } catch (e) {
      return { state: "unavailable", model, reason: describeFailure(e, url, model) };
    }
  };

  const status = async (model = defaultModel): Promise<LlmStatus> => {
    const hit = cache.get(model);
    if (hit && clock.now() - hit.at < STATUS_TTL_MS) return hit.status;
    const fresh = await probe(model);
    cache.set(model, { at: clock.now(), status: fresh });
    return fresh;
  };

  return {
    url,
    defaultModel,
    status,

    /** Forgets what is known of a model, so the next status probes again (after a failure). */
    forget: (model = defaultModel) => void cache.delete(model),

    /** Streams the answer to `messages` piece by piece; ends with a `done` piece carrying token counts. */
    async *stream(request: { model: string; messages: Message[]; contextLength: number; maxAnswerTokens: number; signal: AbortSignal; format?: "json" }): AsyncGenerator<LlmPiece> {
      const answer = await clientFor(request.signal).chat({
        model: request.model,
        messages: request.messages,
        stream: true,
        ...(request.format ? { format: request.format } : {}),
        options: { num_ctx: request.contextLength, num_predict: request.maxAnswerTokens },
      });
      const stop = () => answer.abort();
      request.signal.addEventListener("abort", stop, { once: true });
      try {
        for await (const part of answer) {
          if (part.message?.content) yield { delta: part.message.content };
          if (part.done) {
            yield { done: true, promptTokens: part.prompt_eval_count, completionTokens: part.eval_count };
            return;
          }
        }
        throw new Error("the answer ended before the model said it was done");
      } finally {
        request.signal.removeEventListener("abort", stop);
      }
    },

    /** One short answer, not streamed (query rewriting); gives up after `timeoutMs`. */
    async complete(request: { model: string; messages: Message[]; contextLength: number; maxAnswerTokens: number; timeoutMs: number; signal: AbortSignal }): Promise<string> {
      const signal = AbortSignal.any([request.signal, AbortSignal.timeout(request.timeoutMs)]);
      const res = await clientFor(signal).chat({
        model: request.model,
        messages: request.messages,
        stream: false,
        options: { num_ctx: request.contextLength, num_predict: request.maxAnswerTokens, temperature: 0 },
      });
      return res.message?.content ?? "";
    },
  };
}

export type Llm = ReturnType<typeof createLlm>;
