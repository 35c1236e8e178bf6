// Picks the model server Hearth talks to (HEARTH_LLM_PROVIDER): Ollama, or an OpenAI-compatible one.
import type { Clock } from "../clock";
import type { Llm } from "./llm";
import { createOllamaLlm } from "./ollama";
import { createOpenAiLlm } from "./openai";

export interface LlmConfig {
  provider: "ollama" | "openai";
  ollamaUrl: string;
  llmUrl: string | undefined;
  llmApiKey: string | undefined;
  model: string;
  clock: Clock;
}

export function createLlm(c: LlmConfig): Llm {
  if (c.provider === "openai") return createOpenAiLlm({ url: c.llmUrl ?? "http://127.0.0.1:8000/v1", apiKey: c.llmApiKey, model: c.model, clock: c.clock });
  return createOllamaLlm({ url: c.ollamaUrl, model: c.model, clock: c.clock });
}

