// The Llm interface over Ollama, through its official client: knows (briefly cached) whether the
// server answers and has the model and the model's context window; streams answers and tool calls
// that stop the moment the caller's signal aborts.
import { Ollama, type Message } from "ollama";
import type { Clock } from "../clock";
import { MAX_CONTEXT, networkFailure, PROBE_TIMEOUT_MS, statusCache, type Llm, type LlmMessage, type LlmRequest, type LlmStatus, type ToolCall } from "./llm";

/** Ollama's own default window, assumed when a model does not say. */
const DEFAULT_CONTEXT = 2048;

const toOllama = (m: LlmMessage): Message => {
  if (m.role === "assistant") return { role: "assistant", content: m.content, ...(m.toolCalls?.length ? { tool_calls: m.toolCalls.map((c) => ({ function: { name: c.name, arguments: c.arguments } })) } : {}) };
  if (m.role === "tool") return { role: "tool", content: m.content, tool_name: m.name };
  return { role: m.role, content: m.content };
};

export function createOllamaLlm({ url, model: defaultModel, clock }: { url: string; model: string; clock: Clock }): Llm {
  /** A client whose every request also ends when `signal` aborts (the ollama client takes no per-call signal). */
  const clientFor = (signal: AbortSignal) =>
    new Ollama({
      host: url,
      fetch: ((input: string | URL | Request, init?: RequestInit) =>
        fetch(input, { ...init, signal: init?.signal ? AbortSignal.any([init.signal, signal]) : signal })) as typeof fetch,
    });

  const describeFailure = (e: unknown, model: string): string => {
    const err = e as Error & { status_code?: number };
    const message = err?.message ?? String(e);
    if (err?.status_code === 404 || /not found/i.test(message)) return `the model "${model}" is not available in Ollama (run: ollama pull ${model})`;
    return networkFailure(e, url, "Ollama") ?? `Ollama failed: ${message}`;
  };

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
      return { state: "unavailable", model, reason: describeFailure(e, model) };
    }
  };
  const statuses = statusCache(clock, probe);

  const options = (r: LlmRequest) => ({ num_ctx: r.contextLength, num_predict: r.maxAnswerTokens, ...(r.temperature !== undefined ? { temperature: r.temperature } : {}) });
  const tools = (r: LlmRequest) => (r.tools?.length ? { tools: r.tools.map((t) => ({ type: "function", function: { name: t.name, description: t.description, parameters: t.parameters as never } })) } : {});

  return {
    provider: "ollama",
    url,
    defaultModel,
    status: (model = defaultModel) => statuses.get(model),
    knownStatus: (model = defaultModel) => statuses.peek(model),
    forget: (model = defaultModel) => statuses.forget(model),
    describeFailure,

    async *stream(request) {
      const answer = await clientFor(request.signal).chat({
        model: request.model,
        messages: request.messages.map(toOllama),
        stream: true,
        ...(request.format ? { format: request.format } : {}),
        ...tools(request),
        options: options(request),
      });
      const stop = () => answer.abort();
      request.signal.addEventListener("abort", stop, { once: true });
      try {
        let n = 0;
        for await (const part of answer) {
          if (part.message?.content) yield { delta: part.message.content };
          if (part.message?.tool_calls?.length) {
            const calls: ToolCall[] = part.message.tool_calls.map((c) => ({ id: `call_${++n}`, name: c.function.name, arguments: (c.function.arguments ?? {}) as Record<string, unknown> }));
            yield { toolCalls: calls };
          }
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

    async complete(request) {
      const signal = AbortSignal.any([request.signal, AbortSignal.timeout(request.timeoutMs)]);
      const res = await clientFor(signal).chat({
        model: request.model,
        messages: request.messages.map(toOllama),
        stream: false,
        ...(request.format ? { format: request.format } : {}),
        options: { ...options(request), temperature: request.temperature ?? 0 },
      });
      return res.message?.content ?? "";
    },
  };
}
