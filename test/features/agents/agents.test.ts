// Agents end to end through the real clients: the catalog, install, invoke with the tool loop
// against the Ollama-protocol fake (tool calls), every call recorded, limits, failing and unknown
// tools, no model, roles and tenancy, uninstall; the OpenAI-compatible provider.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHarness, defaultWorkspaceId, secondTenant, type Harness } from "../../support/harness";
import { startOllamaFake, type FakeChatRequest, type FakeReply, type OllamaFake } from "../../support/ollama-fake";
import { startOpenAiFake } from "../../support/openai-fake";

let h: Harness;
let fake: OllamaFake;
let jwt: string;
let ws: string;
let userToken: string;
let systemToken: string;

const toolResults = (r: FakeChatRequest) => r.messages.filter((m) => m.role === "tool");

/** Searches once, then answers citing the first passage. */
const searchThenAnswer = (r: FakeChatRequest): FakeReply => {
  if (!r.tools?.length || toolResults(r).length > 0) return `Backups run every night [1]. (${toolResults(r).length} tool result)`;
  return { tool_calls: [{ function: { name: "search_knowledge", arguments: { query: "how often do backups run", top_k: 3 } } }] };
};

beforeAll(async () => {
  fake = startOllamaFake({ respond: searchThenAnswer });
  h = await createHarness({ HEARTH_OLLAMA_URL: fake.url });
  jwt = await h.login();
  ws = await defaultWorkspaceId(h, jwt);
  h.services.start();
  userToken = (await h.call("POST", "/api/api-tokens", { token: jwt, body: { product_id: ws, token_name: "user" } })).body.data.token;
  systemToken = (await h.call("POST", "/api/api-tokens", { token: jwt, body: { product_id: ws, token_name: "system", role: "SYSTEM" } })).body.data.token;
  const md = new FormData();
  md.append("file", new File(["# Backups\n\nThe backup command runs every night at 02:00 and writes a consistent copy of the database.\n\n# Holidays\n\nThe office closes between Christmas and New Year.\n"], "ops.md"));
  md.append("product_id", ws);
  expect((await h.call("POST", "/api/knowledge-base/storage/upload", { token: jwt, raw: md })).status).toBe(202);
  await h.services.jobs.idle();
});
afterAll(async () => {
  await h.close();
  await fake.stop();
});

const install = async (template: string, settings: Record<string, unknown> = {}, token = jwt) => h.call("POST", "/api/agent-base/install", { token, body: { product_id: ws, template, settings } });

describe("catalog and install", () => {
  test("the catalog lists the five templates with their settings and triggers", async () => {
    const r = await h.call("GET", "/api/agent-base/catalog", { token: userToken });
    expect(r.status).toBe(200);
    const ids = r.body.data.map((t: any) => t.id);
    for (const id of ["knowledge-assistant", "document-summarizer", "meeting-notes", "ticket-triage", "daily-digest"]) expect(ids).toContain(id);
    const digest = r.body.data.find((t: any) => t.id === "daily-digest");
    expect(digest.triggers).toContain("schedule");
    expect(digest.settings_schema.properties.cron).toBeDefined();
  });

  test("every template installs as a real workflow with its triggers", async () => {
    for (const id of ["knowledge-assistant", "document-summarizer", "meeting-notes", "ticket-triage", "daily-digest"]) {
      const r = await install(id, id === "daily-digest" ? { cron: "0 7 * * *", timezone: "Europe/Berlin" } : {});
      expect(r.status).toBe(201);
      const w = (await h.call("GET", `/api/workflow-base/${r.body.data.workflow_id}`, { token: jwt })).body.data;
      expect(w.agent_id).toBe(r.body.data.id);
      expect(w.graph.nodes.some((n: any) => n.type === "agent" && n.config.agent_id === r.body.data.id)).toBe(true);
      expect(w.graph.nodes.some((n: any) => n.type.startsWith("trigger."))).toBe(true);
    }
    const bad = await install("daily-digest", { cron: "99 * * * *" });
    expect(bad.status).toBe(422);
    expect(bad.body.message).toMatch(/cron/);
    expect((await install("no-such-template")).status).toBe(422);
    expect((await install("knowledge-assistant", { knowledge_base_ids: [crypto.randomUUID()] })).status).toBe(404);
  });

  test("installing needs an owner/admin session or a SYSTEM token; a USER token may invoke and read", async () => {
    expect((await install("knowledge-assistant", {}, userToken)).status).toBe(403);
    const bySystem = await install("knowledge-assistant", {}, systemToken);
    expect(bySystem.status).toBe(201);
    const id = bySystem.body.data.id;
    expect((await h.call("GET", `/api/agent-base/${id}`, { token: userToken })).status).toBe(200);
    expect((await h.call("PUT", `/api/agent-base/${id}`, { token: userToken, body: { name: "mine" } })).status).toBe(403);
    expect((await h.call("DELETE", `/api/agent-base?id=${id}`, { token: userToken })).status).toBe(403);
    expect((await h.call("POST", `/api/agent-base/${id}/invoke`, { token: userToken, body: { input: { query: "backups?" }, wait: true } })).status).toBe(200);
    const listed = await h.call("GET", `/api/agent-base/product/${ws}`, { token: userToken });
    expect(listed.body.data.some((a: any) => a.id === id)).toBe(true);
    expect((await h.call("GET", `/api/agent-base?product_id=${ws}`, { token: jwt })).body.pagination.total).toBeGreaterThan(1);
  });
});

describe("invoke input and waiting", () => {
  test("the catalog gives each template's input_schema; an invoke missing a required field fails at once with 422 naming it", async () => {
    const catalog = (await h.call("GET", "/api/agent-base/catalog", { token: userToken })).body.data;
    const notes = catalog.find((t: any) => t.id === "meeting-notes");
    expect(notes.input_schema.anyOf).toEqual([{ required: ["audio_url"] }, { required: ["transcript"] }]);
    expect(notes.input_schema.properties.audio_url.type).toBe("string");
    expect(catalog.find((t: any) => t.id === "knowledge-assistant").input_schema.required).toEqual(["query"]);
    const a = (await install("meeting-notes")).body.data;
    const r = await h.call("POST", `/api/agent-base/${a.id}/invoke`, { token: userToken, body: { input: { query: "notes please" }, wait: true } });
    expect(r.status).toBe(422);
    expect(r.body.message).toMatch(/^input\.audio_url or input\.transcript is required/);
    // Spaces only are no URL either (before: it ran, and failed in the transcribe node "Invalid URL").
    const blank = await h.call("POST", `/api/agent-base/${a.id}/invoke`, { token: userToken, body: { input: { audio_url: "   " }, wait: true } });
    expect([blank.status, blank.body.message]).toEqual([422, expect.stringMatching(/^input\.audio_url or input\.transcript is required/)]);
    expect((await h.call("GET", `/api/agent-base/${a.id}/executions`, { token: jwt })).body.data).toEqual([]);
  });

  test("wait: true that runs out of time answers 202 saying the execution is still going and where to follow it", async () => {
    const a = (await h.call("POST", "/api/agent-base", {
      token: jwt,
      body: { product_id: ws, name: "slow", system_prompt: "x", graph: { nodes: [{ id: "s", type: "trigger.manual" }, { id: "ask", type: "approval", config: { message: "ok?" } }], edges: [{ from: "s", to: "ask" }] } },
    })).body.data;
    const pending = h.call("POST", `/api/agent-base/${a.id}/invoke`, { token: jwt, body: { input: { query: "x" }, wait: true } });
    let e: any;
    for (let i = 0; i < 200 && !e; i++) {
      e = (await h.call("GET", `/api/agent-base/${a.id}/executions`, { token: jwt })).body.data[0];
      if (!e) await Bun.sleep(10);
    }
    await h.services.workflow.engine.until(e.id, ["waiting"], 5000);
    h.clock.advance(120_000);
    const r = await pending;
    expect(r.status).toBe(202);
    expect(r.body.data.status).toBe("waiting");
    expect(r.body.message).toBe(`Execution still waiting after 120 s; follow it at GET /api/workflow/${e.id}/status or /events`);
    await h.call("POST", `/api/workflow/${e.id}/stop`, { token: jwt });
  });
});

describe("the tool loop", () => {
  test("the model searches, the answer cites the passage, the call is recorded with its result", async () => {
    const a = (await install("knowledge-assistant")).body.data;
    const r = await h.call("POST", `/api/agent-base/${a.id}/invoke`, { token: jwt, body: { input: { query: "How often do backups run?" }, wait: true } });
    expect(r.status).toBe(200);
    expect(r.body.data.status).toBe("succeeded");
    expect(r.body.data.output.text).toContain("[1]");
    expect(r.body.data.output.sources[0]).toMatchObject({ index: 1, file_name: "ops.md" });
    expect(r.body.data.output.sources[0].excerpt).toContain("every night");
    const ex = await h.call("GET", `/api/agent-base/${a.id}/executions`, { token: userToken });
    const e = ex.body.data[0];
    expect(e.id).toBe(r.body.data.id);
    expect(e.trigger).toEqual({ type: "api" });
    expect(e.tool_calls).toHaveLength(1);
    expect(e.tool_calls[0]).toMatchObject({ tool: "search_knowledge", arguments: { query: "how often do backups run", top_k: 3 }, step: 1 });
    expect(e.tool_calls[0].result).toContain("every night");
    expect(e.usage.prompt_tokens).toBeGreaterThan(0);
    expect(e.duration_ms).toBeGreaterThanOrEqual(0);
    // The model saw the system prompt, the question and the tool list.
    const first = fake.requests.find((q) => q.messages.some((m) => m.content === "How often do backups run?"))!;
    expect(first.messages[0]!.role).toBe("system");
    expect(first.tools!.map((t) => t.function.name)).toEqual(["search_knowledge"]);
    // Tokens of the answer were streamed as workflow events.
    const events = h.services.workflow.events.since(r.body.data.id, 0);
    expect(events.filter((x) => x.event === "token").map((x) => x.data.delta).join("")).toContain("Backups run every night");
  });

  const custom = async (body: Record<string, unknown>) => (await h.call("POST", "/api/agent-base", { token: jwt, body: { product_id: ws, name: "custom", system_prompt: "Be useful.", ...body } })).body.data;
  const invoke = async (id: string, query = "go") => (await h.call("POST", `/api/agent-base/${id}/invoke`, { token: jwt, body: { input: { query }, wait: true } })).body.data;
  const calls = async (agentId: string, executionId: string) => (await h.call("GET", `/api/agent-base/${agentId}/executions/${executionId}`, { token: jwt })).body.data.tool_calls;

  test("max_steps: a model that only calls tools gets no tools on the last turn and must answer", async () => {
    const before = fake.requests.length;
    fake.respond = (r) => (r.tools?.length ? { tool_calls: [{ function: { name: "search_knowledge", arguments: { query: `again ${toolResults(r).length}` } } }] } : "Enough searching: the answer.");
    try {
      const a = await custom({ tools: ["search_knowledge"] });
      await h.call("PUT", `/api/workflow-base/${a.workflow_id}`, { token: jwt, body: { graph: { nodes: [{ id: "s", type: "trigger.manual" }, { id: "agent", type: "agent", config: { agent_id: a.id, input: "{{ input.query }}", max_steps: 3 } }], edges: [{ from: "s", to: "agent" }] } } });
      const e = await invoke(a.id);
      expect(e.status).toBe("succeeded");
      expect(e.output).toMatchObject({ text: "Enough searching: the answer.", steps: 3 });
      const asked = fake.requests.slice(before);
      expect(asked).toHaveLength(3);
      expect(asked[2]!.tools ?? []).toHaveLength(0);
      expect(await calls(a.id, e.id)).toHaveLength(2);
    } finally {
      fake.respond = searchThenAnswer;
    }
  });

  test("a failing tool and an unknown tool are reported to the model, not thrown", async () => {
    fake.respond = (r) =>
      toolResults(r).length
        ? `I saw: ${toolResults(r).map((m) => m.content).join(" | ")}`
        : { tool_calls: [{ function: { name: "http_get", arguments: { url: "http://169.254.169.254/latest/meta-data/" } } }, { function: { name: "format_disk", arguments: {} } }] };
    try {
      const a = await custom({ tools: ["http_get"] });
      const e = await invoke(a.id);
      expect(e.status).toBe("succeeded");
      expect(e.output.text).toContain("The tool failed");
      const recorded = await calls(a.id, e.id);
      expect(recorded[0]).toMatchObject({ tool: "http_get" });
      expect(recorded[0].error).toMatch(/loopback, link-local or metadata/);
      expect(recorded[1].error).toMatch(/there is no tool "format_disk"/);
    } finally {
      fake.respond = searchThenAnswer;
    }
  });

  test("a model that never calls tools answers in one turn", async () => {
    fake.respond = () => "Straight answer.";
    try {
      const a = await custom({ tools: [] });
      const e = await invoke(a.id);
      expect(e.output).toMatchObject({ text: "Straight answer.", steps: 1 });
    } finally {
      fake.respond = searchThenAnswer;
    }
  });

  test("stop aborts an agent mid-loop", async () => {
    fake.pieceDelayMs = 200;
    fake.respond = () => "a b c d e f g h i j k l m n o p";
    try {
      const a = await custom({ tools: [] });
      const started = await h.call("POST", `/api/agent-base/${a.id}/invoke`, { token: jwt, body: { input: { query: "slow" } } });
      expect(started.status).toBe(202);
      const id = started.body.data.id;
      await h.services.workflow.engine.until(id, ["running"]);
      await Bun.sleep(300);
      const stop = await h.call("POST", `/api/workflow/${id}/stop`, { token: jwt });
      expect(stop.body.data.status).toBe("stopped");
      await Bun.sleep(100);
      expect(fake.hangUps).toBeGreaterThan(0);
    } finally {
      fake.pieceDelayMs = 0;
      fake.respond = searchThenAnswer;
    }
  });

  test("a name of spaces only is refused on create and PUT: 422 name must not be blank", async () => {
    const blank = await h.call("POST", "/api/agent-base", { token: jwt, body: { product_id: ws, name: "   ", system_prompt: "y" } });
    expect(blank.status).toBe(422);
    expect(blank.body.message).toBe("name must not be blank");
    const a = (await h.call("POST", "/api/agent-base", { token: jwt, body: { product_id: ws, name: "  Named  ", system_prompt: "y" } })).body.data;
    expect(a.name).toBe("Named");
    const put = await h.call("PUT", `/api/agent-base/${a.id}`, { token: jwt, body: { name: " \t " } });
    expect(put.status).toBe(422);
    expect(put.body.message).toBe("name must not be blank");
    expect((await h.call("GET", `/api/agent-base/${a.id}`, { token: jwt })).body.data.name).toBe("Named");
  });

  test("unknown tools and foreign knowledge bases are refused when creating a custom agent", async () => {
    const r = await h.call("POST", "/api/agent-base", { token: jwt, body: { product_id: ws, name: "x", system_prompt: "y", tools: ["rm_rf"] } });
    expect(r.status).toBe(422);
    expect(r.body.message).toContain("rm_rf");
  });
});

describe("invoke_workflow chains", () => {
  /** An agent whose model runs the workflow named in its system prompt ("next:<id>") once, then answers with what it got. */
  const chained = (r: FakeChatRequest): FakeReply => {
    const next = /next:([0-9a-f-]{36})/.exec(String(r.messages[0]?.content))?.[1];
    const results = toolResults(r);
    if (next && r.tools?.length && results.length === 0) return { tool_calls: [{ function: { name: "invoke_workflow", arguments: { workflow_id: next, input: { query: "go on" } } } }] };
    return `done (${results.map((m) => m.content).join(" | ")})`;
  };
  const agent = async (systemPrompt: string) => (await h.call("POST", "/api/agent-base", { token: jwt, body: { product_id: ws, name: "chain", system_prompt: systemPrompt, tools: ["invoke_workflow"] } })).body.data;
  const toolCallsOf = async (agentId: string, executionId: string) => (await h.call("GET", `/api/agent-base/${agentId}/executions/${executionId}`, { token: jwt })).body.data.tool_calls;

  test("an agent cannot run its own workflow (or one of its calling chain): the call is refused and the model told", async () => {
    fake.respond = chained;
    try {
      const a = await agent("x");
      await h.call("PUT", `/api/agent-base/${a.id}`, { token: jwt, body: { system_prompt: `next:${a.workflow_id}` } });
      const e = (await h.call("POST", `/api/agent-base/${a.id}/invoke`, { token: jwt, body: { input: { query: "loop" }, wait: true } })).body.data;
      expect(e.status).toBe("succeeded");
      const [call] = await toolCallsOf(a.id, e.id);
      expect(call.tool).toBe("invoke_workflow");
      expect(call.error).toMatch(/already running in this chain/);
      // A → B → A: B's call is the one refused.
      const b = await agent("x");
      const a2 = await agent(`next:${b.workflow_id}`);
      await h.call("PUT", `/api/agent-base/${b.id}`, { token: jwt, body: { system_prompt: `next:${a2.workflow_id}` } });
      const e2 = (await h.call("POST", `/api/agent-base/${a2.id}/invoke`, { token: jwt, body: { input: { query: "loop" }, wait: true } })).body.data;
      expect(e2.status).toBe("succeeded");
      const child = (await h.call("GET", `/api/agent-base/${b.id}/executions`, { token: jwt })).body.data[0];
      expect(child.trigger).toEqual({ type: "api", id: e2.id });
      expect(child.tool_calls[0].error).toMatch(/already running in this chain/);
    } finally {
      fake.respond = searchThenAnswer;
    }
  }, 15_000);

  test("invoke_workflow nests at most 3 deep", async () => {
    fake.respond = chained;
    try {
      let next = "last";
      const made = [];
      for (let i = 0; i < 5; i++) {
        const a = await agent(next === "last" ? "last" : `next:${next}`);
        made.unshift(a);
        next = a.workflow_id;
      }
      const e = (await h.call("POST", `/api/agent-base/${made[0].id}/invoke`, { token: jwt, body: { input: { query: "deep" }, wait: true } })).body.data;
      expect(e.status).toBe("succeeded");
      // The fourth agent (three calls below the first) may not start the fifth.
      const fourth = (await h.call("GET", `/api/agent-base/${made[3].id}/executions`, { token: jwt })).body.data[0];
      expect(fourth.tool_calls[0].error).toMatch(/nests at most 3 deep/);
      expect((await h.call("GET", `/api/agent-base/${made[4].id}/executions`, { token: jwt })).body.data).toEqual([]);
    } finally {
      fake.respond = searchThenAnswer;
    }
  }, 15_000);

  test("stopping an execution stops the workflow its agent is waiting for", async () => {
    fake.respond = chained;
    try {
      const gated = (await h.call("POST", "/api/workflow-base", { token: jwt, body: { product_id: ws, name: "gated child", graph: { nodes: [{ id: "s", type: "trigger.manual" }, { id: "ask", type: "approval", config: { message: "ok?" } }], edges: [{ from: "s", to: "ask" }] } } })).body.data;
      const a = await agent(`next:${gated.id}`);
      const parent = (await h.call("POST", `/api/agent-base/${a.id}/invoke`, { token: jwt, body: { input: { query: "wait" } } })).body.data;
      let child: any;
      for (let i = 0; i < 200 && !child; i++) {
        child = (await h.call("GET", `/api/workflow/executions?workflow_id=${gated.id}`, { token: jwt })).body.data[0];
        if (!child) await Bun.sleep(10);
      }
      expect(child.trigger).toEqual({ type: "api", id: parent.id });
      await h.services.workflow.engine.until(child.id, ["waiting"], 5000);
      expect((await h.call("POST", `/api/workflow/${parent.id}/stop`, { token: jwt })).body.data.status).toBe("stopped");
      expect((await h.services.workflow.engine.until(child.id, ["stopped"], 5000)).status).toBe("stopped");
    } finally {
      fake.respond = searchThenAnswer;
    }
  });
});

describe("document summarizer", () => {
  test("finds the named document with search_knowledge and summarizes it with its sources", async () => {
    fake.respond = (r) => (toolResults(r).length ? `Purpose: operations. Key points: backups nightly [1]. (${r.messages[1]!.content})` : { tool_calls: [{ function: { name: "search_knowledge", arguments: { query: "ops handbook" } } }] });
    try {
      const a = (await install("document-summarizer")).body.data;
      const e = (await h.call("POST", `/api/agent-base/${a.id}/invoke`, { token: jwt, body: { input: { query: "the ops handbook" }, wait: true } })).body.data;
      expect(e.status).toBe("succeeded");
      expect(e.output.text).toContain("Summarize: the ops handbook");
      expect(e.output.sources[0].file_name).toBe("ops.md");
    } finally {
      fake.respond = searchThenAnswer;
    }
  });
});

describe("without a model", () => {
  test("the knowledge assistant answers with cited passages; a custom agent fails with the reason", async () => {
    fake.mode = "missing-model";
    h.services.llm.forget();
    try {
      const ka = (await install("knowledge-assistant")).body.data;
      const e = (await h.call("POST", `/api/agent-base/${ka.id}/invoke`, { token: jwt, body: { input: { query: "backup schedule" }, wait: true } })).body.data;
      expect(e.status).toBe("succeeded");
      expect(e.output.mode).toBe("retrieval-only");
      expect(e.output.text).toContain("ops.md");
      const c = (await h.call("POST", "/api/agent-base", { token: jwt, body: { product_id: ws, name: "c", system_prompt: "x" } })).body.data;
      const f = (await h.call("POST", `/api/agent-base/${c.id}/invoke`, { token: jwt, body: { input: { query: "hi" }, wait: true } })).body.data;
      expect(f.status).toBe("failed");
      expect(f.error).toMatch(/no language model answers: .*llama3.2/);
    } finally {
      fake.mode = "ok";
      h.services.llm.forget();
    }
  });
});

describe("tenancy and uninstall", () => {
  test("another workspace's agents and executions are 404", async () => {
    const other = await secondTenant(h, jwt, "Agent Other");
    const theirs = (await h.call("POST", "/api/agent-base/install", { token: other.jwt, body: { product_id: other.workspaceId, template: "knowledge-assistant" } })).body.data;
    expect((await h.call("GET", `/api/agent-base/${theirs.id}`, { token: jwt })).status).toBe(404);
    expect((await h.call("GET", `/api/agent-base/${theirs.id}/executions`, { token: userToken })).status).toBe(404);
    expect((await h.call("POST", `/api/agent-base/${theirs.id}/invoke`, { token: userToken, body: { input: { query: "x" } } })).status).toBe(404);
    expect((await h.call("DELETE", `/api/agent-base?id=${theirs.id}`, { token: jwt })).status).toBe(404);
    expect((await h.call("GET", `/api/agent-base/product/${other.workspaceId}`, { token: userToken })).status).toBe(404);
  });

  test("a knowledge base of another workspace (one the session also sees) cannot be given to an agent: 422 naming knowledge_base_ids", async () => {
    const second = (await h.call("POST", "/api/products", { token: jwt, body: { name: "Agents second workspace" } })).body.data.id as string;
    const theirs = (await h.call("POST", "/api/knowledge-base", { token: jwt, body: { product_id: second, name: "Private" } })).body.data.id as string;
    const ours = (await h.call("POST", "/api/knowledge-base", { token: jwt, body: { product_id: ws, name: "Ours" } })).body.data.id as string;
    const installed = await install("knowledge-assistant", { knowledge_base_ids: [theirs] });
    expect(installed.status).toBe(422);
    expect(installed.body.message).toBe(`settings.knowledge_base_ids: ${theirs} is not a knowledge base of the agent's workspace`);
    const created = await h.call("POST", "/api/agent-base", { token: jwt, body: { product_id: ws, name: "kb", system_prompt: "x", knowledge_base_ids: [ours, theirs] } });
    expect(created.status).toBe(422);
    expect(created.body.message).toContain("knowledge_base_ids");
    const a = (await h.call("POST", "/api/agent-base", { token: jwt, body: { product_id: ws, name: "kb", system_prompt: "x", knowledge_base_ids: [ours] } })).body.data;
    const put = await h.call("PUT", `/api/agent-base/${a.id}`, { token: jwt, body: { knowledge_base_ids: [theirs] } });
    expect(put.status).toBe(422);
    expect(put.body.message).toContain("knowledge_base_ids");
    expect((await h.call("GET", `/api/agent-base/${a.id}`, { token: jwt })).body.data.knowledge_base_ids).toEqual([ours]);
  });

  test("uninstall stops the agent's running executions and removes its workflow; other agents are untouched", async () => {
    const keep = (await install("knowledge-assistant")).body.data;
    const gone = (await h.call("POST", "/api/agent-base", {
      token: jwt,
      body: { product_id: ws, name: "gated", system_prompt: "x", graph: { nodes: [{ id: "s", type: "trigger.manual" }, { id: "ask", type: "approval", config: { message: "ok?" } }], edges: [{ from: "s", to: "ask" }] } },
    })).body.data;
    const e = (await h.call("POST", `/api/agent-base/${gone.id}/invoke`, { token: jwt, body: { input: { query: "x" } } })).body.data;
    await h.services.workflow.engine.until(e.id, ["waiting"]);
    const del = await h.call("DELETE", `/api/agent-base?id=${gone.id}`, { token: jwt });
    expect(del.status).toBe(200);
    expect(del.body.message).toContain("1 execution");
    expect((await h.call("GET", `/api/workflow-base/${gone.workflow_id}`, { token: jwt })).status).toBe(404);
    expect((await h.call("GET", `/api/agent-base/${gone.id}`, { token: jwt })).status).toBe(404);
    expect((await h.call("GET", `/api/agent-base/${keep.id}`, { token: jwt })).status).toBe(200);
    expect((await h.call("GET", `/api/workflow-base/${keep.workflow_id}`, { token: jwt })).status).toBe(200);
  });
});

describe("an OpenAI-compatible model server", () => {
  test("the same agent runs against /v1/chat/completions with streamed tool-call deltas", async () => {
    const oa = startOpenAiFake({
      apiKey: "sk-local",
      respond: (r) => (r.messages.some((m) => m.role === "tool") ? "From the documents: nightly [1]." : { tool_calls: [{ name: "search_knowledge", arguments: { query: "backup" } }] }),
    });
    const h2 = await createHarness({ HEARTH_LLM_PROVIDER: "openai", HEARTH_LLM_URL: oa.url, HEARTH_LLM_API_KEY: "sk-local", HEARTH_LLM_MODEL: oa.model });
    try {
      const j = await h2.login();
      const w = await defaultWorkspaceId(h2, j);
      h2.services.start();
      const md = new FormData();
      md.append("file", new File(["# Backups\n\nBackups run nightly.\n"], "b.md"));
      md.append("product_id", w);
      await h2.call("POST", "/api/knowledge-base/storage/upload", { token: j, raw: md });
      await h2.services.jobs.idle();
      const a = (await h2.call("POST", "/api/agent-base/install", { token: j, body: { product_id: w, template: "knowledge-assistant" } })).body.data;
      const e = (await h2.call("POST", `/api/agent-base/${a.id}/invoke`, { token: j, body: { input: { query: "backups?" }, wait: true } })).body.data;
      expect(e.status).toBe("succeeded");
      expect(e.output.text).toBe("From the documents: nightly [1].");
      const ex = (await h2.call("GET", `/api/agent-base/${a.id}/executions`, { token: j })).body.data[0];
      expect(ex.tool_calls[0]).toMatchObject({ tool: "search_knowledge", arguments: { query: "backup" } });
      expect(ex.usage).toEqual({ prompt_tokens: 84, completion_tokens: 14 });
      expect(oa.requests[0]!.tools![0]!.function.name).toBe("search_knowledge");
      const tool = oa.requests[1]!.messages.find((m) => m.role === "tool")!;
      expect(tool.tool_call_id).toBe("call_0");
      const health = (await h2.call("GET", "/health", {})).body;
      expect(JSON.stringify(health)).toMatch(/OpenAI-compatible|ok/);
    } finally {
      await h2.close();
      await oa.stop();
    }
  });
});
