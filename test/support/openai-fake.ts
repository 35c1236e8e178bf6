// A small server that speaks the OpenAI chat-completions protocol on loopback (as vLLM, llama.cpp's
// server, LM Studio and LocalAI do): /v1/models, and /v1/chat/completions streaming SSE chunks with
// content deltas, tool-call deltas split across chunks, a finish reason and a usage chunk.

export interface OpenAiFakeRequest {
  model: string;
  messages: { role: string; content: string | null; tool_calls?: { id: string; function: { name: string; arguments: string } }[]; tool_call_id?: string }[];
  tools?: { type: string; function: { name: string; description?: string; parameters?: unknown } }[];
  stream?: boolean;
  max_tokens?: number;
}

export type OpenAiReply = string | { content?: string; tool_calls: { name: string; arguments: Record<string, unknown> }[] };

export interface OpenAiFake {
  url: string;
  model: string;
  requests: OpenAiFakeRequest[];
  respond: (r: OpenAiFakeRequest) => OpenAiReply;
  /** Bearer key the server requires (undefined: none). */
  apiKey?: string;
  stop(): Promise<void>;
}

export function startOpenAiFake(options: Partial<Pick<OpenAiFake, "model" | "respond" | "apiKey">> = {}): OpenAiFake {
  const requests: OpenAiFakeRequest[] = [];
  const fake: OpenAiFake = {
    url: "",
    model: options.model ?? "qwen2.5-7b-instruct",
    requests,
    respond: options.respond ?? ((r) => `You asked: ${String(r.messages.at(-1)?.content ?? "")}`),
    apiKey: options.apiKey,
    stop: async () => void (await server.stop(true)),
  };
  const enc = new TextEncoder();
  const sse = (o: unknown) => enc.encode(`data: ${JSON.stringify(o)}\n\n`);

  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    idleTimeout: 0,
    async fetch(req) {
      const path = new URL(req.url).pathname;
      if (fake.apiKey && req.headers.get("authorization") !== `Bearer ${fake.apiKey}`) return Response.json({ error: { message: "Invalid API key", type: "invalid_request_error" } }, { status: 401 });
      if (path === "/v1/models") return Response.json({ object: "list", data: [{ id: fake.model, object: "model", created: 1, owned_by: "vllm", max_model_len: 32768 }] });
      if (path !== "/v1/chat/completions" || req.method !== "POST") return Response.json({ error: { message: "not found" } }, { status: 404 });
      const body = (await req.json()) as OpenAiFakeRequest;
      requests.push(body);
      if (body.model !== fake.model) return Response.json({ error: { message: `The model \`${body.model}\` does not exist.`, type: "NotFoundError", code: 404 } }, { status: 404 });
      const reply = fake.respond(body);
      const text = typeof reply === "string" ? reply : (reply.content ?? "");
      const calls = typeof reply === "string" ? [] : reply.tool_calls;
      const base = { id: "chatcmpl-1", object: "chat.completion.chunk", created: 1, model: fake.model };
      if (!body.stream) {
        return Response.json({ ...base, object: "chat.completion", choices: [{ index: 0, message: { role: "assistant", content: text }, finish_reason: "stop" }], usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } });
      }
      const stream = new ReadableStream<Uint8Array>({
        start(c) {
          c.enqueue(sse({ ...base, choices: [{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }] }));
          for (const piece of text.match(/\s*\S+/g) ?? []) c.enqueue(sse({ ...base, choices: [{ index: 0, delta: { content: piece }, finish_reason: null }] }));
          calls.forEach((call, i) => {
            const args = JSON.stringify(call.arguments);
            const half = Math.floor(args.length / 2);
            // As real servers do: the id and name first, the arguments in pieces after.
            c.enqueue(sse({ ...base, choices: [{ index: 0, delta: { tool_calls: [{ index: i, id: `call_${i}`, type: "function", function: { name: call.name, arguments: "" } }] }, finish_reason: null }] }));
            c.enqueue(sse({ ...base, choices: [{ index: 0, delta: { tool_calls: [{ index: i, function: { arguments: args.slice(0, half) } }] }, finish_reason: null }] }));
            c.enqueue(sse({ ...base, choices: [{ index: 0, delta: { tool_calls: [{ index: i, function: { arguments: args.slice(half) } }] }, finish_reason: null }] }));
          });
          c.enqueue(sse({ ...base, choices: [{ index: 0, delta: {}, finish_reason: calls.length ? "tool_calls" : "stop" }] }));
          c.enqueue(sse({ ...base, choices: [], usage: { prompt_tokens: 42, completion_tokens: 7, total_tokens: 49 } }));
          c.enqueue(enc.encode("data: [DONE]\n\n"));
          c.close();
        },
      });
      return new Response(stream, { headers: { "content-type": "text/event-stream" } });
    },
  });
  fake.url = `http://127.0.0.1:${server.port}/v1`;
  return fake;
}
