// Picks the model server Hearth talks to (HEARTH_LLM_PROVIDER): Ollama, or an OpenAI-compatible one.
// The chosen client library is imported at the first call, so the other one is never loaded and an
// idle Hearth holds neither (the `openai` package alone is several MB).
import type { Clock } from "../clock";
import type { Llm } from "./llm";

export interface LlmConfig {
  provider: "ollama" | "openai";
  ollamaUrl: string;
  llmUrl: string | undefined;
  llmApiKey: string | undefined;
  model: string;
  clock: Clock;
}

export function createLlm(c: LlmConfig): Llm {
  const url = c.provider === "openai" ? (c.llmUrl ?? "http://127.0.0.1:8000/v1") : c.ollamaUrl;
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
      yield* (await client()).stream(request);
    },
    complete: async (request) => (await client()).complete(request),
    // A failure comes from a call above, so the client is loaded by then.
    describeFailure: (e, model) => loaded?.describeFailure(e, model) ?? `${e instanceof Error ? e.message : String(e)}`,
  };
}
