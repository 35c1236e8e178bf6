// Picks the model server Hearth talks to (HEARTH_LLM_PROVIDER): Ollama, or an OpenAI-compatible one.
// The chosen client library is imported at the first call, so the other one is never loaded and an
// idle Hearth holds neither (the `openai` package alone is several MB).
import type { Clock } from "../clock";
import { LlmSilenceError, type Llm, type LlmPiece, type LlmRequest } from "./llm";
import type { Part } from "../parts";

export interface LlmConfig {
  provider: "ollama" | "openai";
  ollamaUrl: string;
  llmUrl: string | undefined;
  llmApiKey: string | undefined;
  model: string;
  /** How long the server may say nothing: before an answer's first piece, or between two (HEARTH_LLM_TIMEOUT_S). */
  silenceMs: number;
  clock: Clock;
}

export function createLlm(c: LlmConfig): Llm {
  // Configuration refuses the openai provider without HEARTH_LLM_URL (config.ts).
  const url = c.provider === "openai" ? c.llmUrl! : c.ollamaUrl;
  let loaded: Llm | undefined;
  let loading: Promise<Llm> | undefined;
  const client = async () =>
    (loaded ??= await (loading ??=
      c.provider === "openai"
        ? import("./openai").then((m) => m.createOpenAiLlm({ url, apiKey: c.llmApiKey, model: c.model, clock: c.clock }))
        : import("./ollama").then((m) => m.createOllamaLlm({ url, model: c.model, clock: c.clock }))));

  return {
    provider: c.provider,
    url,
    defaultModel: c.model,
    status: async (model) => (await client()).status(model),
    knownStatus: (model) => loaded?.knownStatus(model),
    forget: (model) => loaded?.forget(model),
    async *stream(request) {
      yield* withinSilence(await client(), request, c.silenceMs);
    },
    complete: async (request) => (await client()).complete(request),
    // A failure comes from a call above, so the client is loaded by then.
    describeFailure: (e, model) => loaded?.describeFailure(e, model) ?? `${e instanceof Error ? e.message : String(e)}`,
  };
}

/**
 * The answer's pieces, ended with an LlmSilenceError once the server has said nothing for
 * `silenceMs` (a server that accepts and never answers held a chat or an agent's execution slot
 * for Bun's fetch timeout, ~5 min, with a bare "The operation timed out"). The clock stops while
 * the caller works on a piece.
 */
async function* withinSilence(llm: Llm, request: LlmRequest, silenceMs: number): AsyncGenerator<LlmPiece> {
  const quiet = new AbortController();
  const server = `${llm.provider === "ollama" ? "Ollama" : "The OpenAI-compatible server"} at ${llm.url}`;
  let started = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const arm = () => {
    timer = setTimeout(() => {
      const seconds = Math.round(silenceMs / 1000);
      quiet.abort(new LlmSilenceError(`${server} said nothing for ${seconds} s ${started ? "in the middle of an answer" : "before starting to answer"} (HEARTH_LLM_TIMEOUT_S)`));
    }, silenceMs);
  };
  arm();
  try {
    for await (const piece of llm.stream({ ...request, signal: AbortSignal.any([request.signal, quiet.signal]) })) {
      clearTimeout(timer);
      started = true;
      yield piece;
      arm();
    }
  } catch (e) {
    throw quiet.signal.aborted && !request.signal.aborted ? quiet.signal.reason : e;
  } finally {
    clearTimeout(timer);
  }
}

/** How long /health waits for the model server's status before it says "loading" (the probe goes on). */
const HEALTH_PROBE_WAIT_MS = 250;

/** The model server as a part of Hearth (platform/parts.ts): /health reports whether it answers. */
export function llmPart(llm: Llm): Part {
  const server = `${llm.provider === "ollama" ? "Ollama" : "an OpenAI-compatible server"} at ${llm.url}`;
  return {
    name: "llm",
    checks: {
      async llm() {
        // /health answers at once: a model server that is slow to answer (the first probe, or one that
        // hangs) shows as loading while the probe goes on; its answer is cached for the next call.
        // A known answer is taken as it is: racing every call against a timer kept one 250 ms timer
        // per /health request alive (34-37 µs of CPU per request under load, more than a token request).
        const s = llm.knownStatus() ?? (await Promise.race([llm.status(), Bun.sleep(HEALTH_PROBE_WAIT_MS).then(() => undefined)]));
        if (!s) return { status: "loading", detail: `asking ${server}` };
        return s.state === "ok" ? { status: "ok", detail: `${s.model} via ${server} (context ${s.contextLength})` } : { status: "unavailable", reason: s.reason };
      },
    },
  };
}
