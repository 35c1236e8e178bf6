// A small server that speaks Ollama's HTTP protocol on loopback, for tests and benchmarks: Ollama
// itself cannot run on these machines. It streams NDJSON chat answers word by word, serves
// /api/tags, /api/show and /api/version, records what it was asked, notices when a caller hangs
// up, and can be told to be slow, to lose the model, to fail mid-answer or to refuse outright.

export interface FakeChatRequest {
  model: string;
  messages: { role: string; content: string; tool_calls?: FakeToolCall[]; tool_name?: string }[];
  stream?: boolean;
  options?: Record<string, unknown>;
  tools?: { type: string; function: { name: string; description?: string; parameters?: unknown } }[];
  format?: unknown;
}

export interface FakeToolCall {
  function: { name: string; arguments: Record<string, unknown> };
}

/** What the fake model says: text, or (as Ollama streams them) tool calls with optional text. */
export type FakeReply = string | { content?: string; tool_calls: FakeToolCall[] };

export type FakeMode =
  /** Answers normally. */
  | "ok"
  /** Every request is answered 500 with an Ollama error body. */
  | "error"
  /** The model is not pulled: tags are empty, show and chat answer 404. */
  | "missing-model"
  /** Streams `failAfter` pieces, then an `{"error": ...}` line, as Ollama does when a runner dies. */
  | "fail-midstream";

export interface OllamaFake {
  url: string;
  port: number;
  mode: FakeMode;
  /** Delay before each streamed piece (ms). */
  pieceDelayMs: number;
  /** Delay before the response headers (ms): a model being loaded. */
  firstByteDelayMs: number;
  failAfter: number;
  contextLength: number;
  /** The answer to a chat request; the default cites passage [1] and echoes the question. */
  respond: (request: FakeChatRequest) => FakeReply;
  /** Every chat request received, in order. */
  readonly requests: FakeChatRequest[];
  /** Streams whose caller hung up before the answer was complete. */
  readonly hangUps: number;
  stop(): Promise<void>;
}

const MODEL = "llama3.2";
const known = (model: string) => model === MODEL || model === `${MODEL}:latest`;

/** The default answer: cites [1] and names the question, so tests can see both arrived. */
export function defaultAnswer(request: FakeChatRequest): string {
  const last = request.messages.at(-1)?.content ?? "";
  if (/standalone/i.test(request.messages[0]?.content ?? "")) {
    // A query-rewrite request: the fake "resolves" the follow-up by naming the earlier question.
    const earlier = /User: (.+)/.exec(last)?.[1] ?? "";
    const followUp = /Follow-up: (.+)/.exec(last)?.[1] ?? last;
    return `${followUp} (about: ${earlier})`;
  }
  const question = /Question: (.+)/.exec(last)?.[1] ?? last;
  return `The passages answer "${question}": see [1].`;
}

/** Splits an answer into pieces like a model's tokens: words with their leading space. */
const pieces = (text: string) => text.match(/\s*\S+/g) ?? [text];

export function startOllamaFake(options: Partial<Pick<OllamaFake, "mode" | "pieceDelayMs" | "firstByteDelayMs" | "failAfter" | "contextLength" | "respond">> = {}): OllamaFake {
  const requests: FakeChatRequest[] = [];
  let hangUps = 0;
  const encoder = new TextEncoder();
  const line = (o: unknown) => encoder.encode(`${JSON.stringify(o)}\n`);
  const json = (status: number, body: unknown) => Response.json(body, { status });
  const missing = (model: string) => json(404, { error: `model "${model}" not found, try pulling it first` });

  const fake: OllamaFake = {
    url: "",
    port: 0,
    mode: options.mode ?? "ok",
    pieceDelayMs: options.pieceDelayMs ?? 0,
    firstByteDelayMs: options.firstByteDelayMs ?? 0,
    failAfter: options.failAfter ?? 3,
    contextLength: options.contextLength ?? 8192,
    respond: options.respond ?? defaultAnswer,
    requests,
    get hangUps() {
      return hangUps;
    },
    stop: async () => void (await server.stop(true)),
  };

  const chat = async (request: FakeChatRequest) => {
    requests.push(request);
    if (fake.mode === "missing-model" || !known(request.model)) return missing(request.model);
    if (fake.firstByteDelayMs) await Bun.sleep(fake.firstByteDelayMs);
    const reply = fake.respond(request);
    const answer = typeof reply === "string" ? reply : (reply.content ?? "");
    const toolCalls = typeof reply === "string" ? undefined : reply.tool_calls;
    const started = Date.now();
    const base = { model: request.model, created_at: new Date().toISOString() };
    const promptTokens = Math.ceil(request.messages.reduce((n, m) => n + m.content.length, 0) / 4);
    const final = (count: number) => ({
      ...base,
      message: { role: "assistant", content: "" },
      done: true,
      done_reason: "stop",
      total_duration: (Date.now() - started) * 1e6,
      load_duration: 0,
      prompt_eval_count: promptTokens,
      prompt_eval_duration: 1e6,
      eval_count: count,
      eval_duration: 1e6,
    });
    if (request.stream === false) {
      return json(200, { ...final(pieces(answer).length), message: { role: "assistant", content: answer, ...(toolCalls ? { tool_calls: toolCalls } : {}) } });
    }
    const parts = answer ? pieces(answer) : [];
    let cancelled = false;
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        for (let i = 0; i < parts.length; i++) {
          if (fake.pieceDelayMs) await Bun.sleep(fake.pieceDelayMs);
          if (cancelled) return;
          if (fake.mode === "fail-midstream" && i === fake.failAfter) {
            controller.enqueue(line({ error: "llama runner process has terminated: signal: killed" }));
            controller.close();
            return;
          }
          controller.enqueue(line({ ...base, message: { role: "assistant", content: parts[i] }, done: false }));
        }
        if (toolCalls) controller.enqueue(line({ ...base, message: { role: "assistant", content: "", tool_calls: toolCalls }, done: false }));
        controller.enqueue(line(final(parts.length)));
        controller.close();
      },
      cancel() {
        cancelled = true;
        hangUps++;
      },
    });
    return new Response(body, { headers: { "content-type": "application/x-ndjson" } });
  };

  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    idleTimeout: 0,
    async fetch(req) {
      const path = new URL(req.url).pathname;
      if (fake.mode === "error") return json(500, { error: "something went wrong in the runner" });
      if (path === "/api/version") return json(200, { version: "0.12.6" });
      if (path === "/api/tags") {
        const models = fake.mode === "missing-model" ? [] : [{ name: `${MODEL}:latest`, model: `${MODEL}:latest`, modified_at: new Date().toISOString(), size: 2_019_393_189, digest: "a80c4f17acd5", details: { family: "llama", parameter_size: "3.2B", quantization_level: "Q4_K_M" } }];
        return json(200, { models });
      }
      if (path === "/api/show" && req.method === "POST") {
        const { model } = (await req.json()) as { model: string };
        if (fake.mode === "missing-model" || !known(model)) return missing(model);
        return json(200, {
          license: "",
          modelfile: "",
          parameters: "stop \"<|eot_id|>\"",
          template: "",
          details: { family: "llama", parameter_size: "3.2B", quantization_level: "Q4_K_M" },
          model_info: { "general.architecture": "llama", "llama.context_length": fake.contextLength },
          capabilities: ["completion"],
        });
      }
      if (path === "/api/chat" && req.method === "POST") return chat((await req.json()) as FakeChatRequest);
      return json(404, { error: "not found" });
    },
  });
  fake.port = server.port!;
  fake.url = `http://127.0.0.1:${server.port}`;
  return fake;
}

export const FAKE_MODEL = MODEL;
