// The Llm interface over any OpenAI-compatible server (vLLM, llama.cpp's server, LM Studio,
// LocalAI), through the official `openai` client: streaming with tool-call deltas, usage, abort.
import OpenAI from "openai";
import type { Clock } from "../clock";
import { MAX_CONTEXT, networkFailure, PROBE_TIMEOUT_MS, statusCache, type Llm, type LlmMessage, type LlmRequest, type LlmStatus, type ToolCall } from "./llm";

/** Assumed when the server does not say (vLLM reports max_model_len; others often nothing). */
const DEFAULT_CONTEXT = 4096;

type ChatMessage = OpenAI.Chat.Completions.ChatCompletionMessageParam;

const toOpenAi = (m: LlmMessage): ChatMessage => {
  if (m.role === "assistant") {
    return {
      role: "assistant",
      content: m.content,
      ...(m.toolCalls?.length ? { tool_calls: m.toolCalls.map((c) => ({ id: c.id, type: "function" as const, function: { name: c.name, arguments: JSON.stringify(c.arguments) } })) } : {}),
    };
  }
  if (m.role === "tool") return { role: "tool", tool_call_id: m.toolCallId, content: m.content };
  return { role: m.role, content: m.content };
};

const parseArguments = (raw: string): Record<string, unknown> => {
  if (!raw.trim()) return {};
  try {
    const v = JSON.parse(raw);
    return v && typeof v === "object" && !Array.isArray(v) ? v : { value: v };
  } catch {
    // A model that wrote broken JSON: the tool gets it as text and can say what is wrong.
    return { _raw: raw };
  }
};

export function createOpenAiLlm({ url, apiKey, model: defaultModel, clock }: { url: string; apiKey: string | undefined; model: string; clock: Clock }): Llm {
  const client = new OpenAI({ baseURL: url, apiKey: apiKey ?? "no-key", maxRetries: 0 });

  const describeFailure = (e: unknown, model: string): string => {
    const err = e as Error & { status?: number };
    if (err?.status === 404) return `the model "${model}" is not served by the OpenAI-compatible server at ${url}`;
    if (err?.status === 401 || err?.status === 403) return `the OpenAI-compatible server at ${url} refused the key (HEARTH_LLM_API_KEY)`;
    return networkFailure(e, url, "The OpenAI-compatible server") ?? `the OpenAI-compatible server failed: ${err?.message ?? String(e)}`;
  };

  const probe = async (model: string): Promise<LlmStatus> => {
    try {
      const list = await client.models.list({ signal: AbortSignal.timeout(PROBE_TIMEOUT_MS) });
      const served = list.data as (OpenAI.Models.Model & { max_model_len?: number })[];
      const entry = served.find((m) => m.id === model);
      if (!entry) return { state: "unavailable", model, reason: `the model "${model}" is not served at ${url} (served: ${served.map((m) => m.id).join(", ") || "none"})` };
      const window = Number(entry.max_model_len);
      return { state: "ok", model, contextLength: Math.min(Number.isFinite(window) && window > 0 ? window : DEFAULT_CONTEXT, MAX_CONTEXT) };
    } catch (e) {
      return { state: "unavailable", model, reason: describeFailure(e, model) };
    }
  };
  const statuses = statusCache(clock, probe);

  const body = (r: LlmRequest) => ({
    model: r.model,
    messages: r.messages.map(toOpenAi),
    max_tokens: r.maxAnswerTokens,
    ...(r.temperature !== undefined ? { temperature: r.temperature } : {}),
    ...(r.format === "json" ? { response_format: { type: "json_object" as const } } : {}),
    ...(r.tools?.length ? { tools: r.tools.map((t) => ({ type: "function" as const, function: { name: t.name, description: t.description, parameters: t.parameters } })) } : {}),
  });

  return {
    provider: "openai",
    url,
    defaultModel,
    status: (model = defaultModel) => statuses.get(model),
    knownStatus: (model = defaultModel) => statuses.peek(model),
    forget: (model = defaultModel) => statuses.forget(model),
    describeFailure,

    async *stream(request) {
      const stream = await client.chat.completions.create({ ...body(request), stream: true, stream_options: { include_usage: true } }, { signal: request.signal });
      const calls = new Map<number, { id: string; name: string; args: string }>();
      let usage: { prompt_tokens?: number; completion_tokens?: number } | undefined;
      let finished = false;
      for await (const chunk of stream) {
        if (chunk.usage) usage = chunk.usage;
        const choice = chunk.choices?.[0];
        if (!choice) continue;
        if (choice.delta?.content) yield { delta: choice.delta.content };
        for (const d of choice.delta?.tool_calls ?? []) {
          const c = calls.get(d.index) ?? { id: d.id ?? `call_${d.index + 1}`, name: "", args: "" };
          if (d.id) c.id = d.id;
          if (d.function?.name) c.name += d.function.name;
          if (d.function?.arguments) c.args += d.function.arguments;
          calls.set(d.index, c);
        }
        if (choice.finish_reason) finished = true;
      }
      if (!finished) throw new Error("the answer ended before the model said it was done");
      if (calls.size) yield { toolCalls: [...calls.values()].map((c): ToolCall => ({ id: c.id, name: c.name, arguments: parseArguments(c.args) })) };
      yield { done: true, promptTokens: usage?.prompt_tokens, completionTokens: usage?.completion_tokens };
    },

    async complete(request) {
      const signal = AbortSignal.any([request.signal, AbortSignal.timeout(request.timeoutMs)]);
      const res = await client.chat.completions.create({ ...body(request), temperature: request.temperature ?? 0, stream: false }, { signal });
      return res.choices[0]?.message?.content ?? "";
    },
  };
}
