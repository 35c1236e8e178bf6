// The node types that reach Hearth's own services: llm (tokens streamed as events, JSON format),
// knowledge.search; and the per-node timeout and the per-workspace concurrency cap.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHarness, defaultWorkspaceId, type Harness } from "../../support/harness";
import { startOllamaFake, type OllamaFake } from "../../support/ollama-fake";
import { linear } from "./support";

let h: Harness;
let fake: OllamaFake;
let jwt: string;
let ws: string;
let slow: ReturnType<typeof Bun.serve>;

beforeAll(async () => {
  // /soon answers after 300 ms; anything else hangs until the caller gives up.
  slow = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch: (req) =>
      new URL(req.url).pathname === "/soon" ? Bun.sleep(300).then(() => Response.json({ soon: true })) : new Promise<Response>((resolve) => req.signal.addEventListener("abort", () => resolve(new Response("late")))),
  });
  fake = startOllamaFake({ respond: (r) => (r.format === "json" ? '{"priority": "high", "labels": ["db"]}' : `Summary of: ${r.messages.at(-1)?.content}`) });
  h = await createHarness({ HEARTH_OLLAMA_URL: fake.url, HEARTH_HTTP_ALLOW: "127.0.0.1", HEARTH_WORKFLOW_CONCURRENCY: "1" });
  jwt = await h.login();
  ws = await defaultWorkspaceId(h, jwt);
  h.services.start();
  const md = new FormData();
  md.append("file", new File(["# Rotation\n\nThe signing key is rotated every 90 days by the security team.\n"], "keys.md"));
  md.append("product_id", ws);
  await h.call("POST", "/api/knowledge-base/storage/upload", { token: jwt, raw: md });
  await h.services.jobs.idle();
});
afterAll(async () => {
  await h.close();
  await fake.stop();
  slow.stop(true);
});

const run = async (graph: unknown, input: Record<string, unknown> = {}) => (await h.call("POST", "/api/workflow/execute", { token: jwt, body: { graph, product_id: ws, input } })).body.data.id as string;
const status = async (id: string) => (await h.call("GET", `/api/workflow/${id}/status`, { token: jwt })).body.data;
const settle = async (id: string, statuses: any[] = ["succeeded", "failed", "stopped"]) => (await h.services.workflow.engine.until(id, statuses, 20_000), status(id));

describe("nodes on Hearth's services", () => {
  test("llm: the answer streams as token events; format json gives {json}", async () => {
    const id = await run(linear({ id: "start", type: "trigger.manual" }, { id: "sum", type: "llm", config: { prompt: "{{ input.text }}", system: "Be brief." } }), { text: "the release notes" });
    const done = await settle(id);
    expect(done.output).toEqual({ text: "Summary of: the release notes" });
    const tokens = h.services.workflow.events.since(id, 0).filter((e) => e.event === "token");
    expect(tokens.length).toBeGreaterThan(2);
    expect(tokens.map((e) => e.data.delta).join("")).toBe("Summary of: the release notes");
    expect(tokens[0]!.data.node_id).toBe("sum");
    expect(fake.requests.at(-1)!.messages[0]).toMatchObject({ role: "system", content: "Be brief." });
    const json = await settle(await run(linear({ id: "classify", type: "llm", config: { prompt: "classify", format: "json" } })));
    expect(json.output).toEqual({ json: { priority: "high", labels: ["db"] } });
  });

  test("llm without a model fails with the reason (retryable, so a retry policy would wait for it)", async () => {
    fake.mode = "missing-model";
    h.services.llm.forget();
    try {
      const done = await settle(await run(linear({ id: "sum", type: "llm", config: { prompt: "x" } })));
      expect(done.status).toBe("failed");
      expect(done.error).toMatch(/language model is unavailable.*llama3\.2/);
    } finally {
      fake.mode = "ok";
      h.services.llm.forget();
    }
  });

  test("knowledge.search finds the workspace's passages", async () => {
    const done = await settle(await run(linear({ id: "find", type: "knowledge.search", config: { query: "{{ input.q }}", top_k: 2 } }), { q: "how often is the signing key rotated" }));
    expect(done.status).toBe("succeeded");
    expect(done.output.results[0]).toMatchObject({ file_name: "keys.md" });
    expect(done.output.results[0].text).toContain("90 days");
  });
});

describe("timeouts and the concurrency cap", () => {
  test("timeout_ms aborts a node that takes too long", async () => {
    const done = await settle(await run(linear({ id: "wait", type: "http", config: { url: `${slow.url}x` }, timeout_ms: 200 })));
    expect(done.status).toBe("failed");
    expect(done.error).toContain("timed out after 200 ms");
  });

  test("with HEARTH_WORKFLOW_CONCURRENCY=1 a second execution waits queued until the first ends, then runs", async () => {
    const first = await run(linear({ id: "wait", type: "http", config: { url: `${slow.url}y` }, timeout_ms: 1500 }));
    await h.services.workflow.engine.until(first, ["running"]);
    const second = await run(linear({ id: "quick", type: "transform", config: { expression: "1" } }));
    await Bun.sleep(300);
    expect((await status(second)).status).toBe("queued");
    await settle(first);
    expect((await settle(second)).status).toBe("succeeded");
  });

  test("a paused execution continued, or an approval granted, while the cap is taken waits queued, then runs", async () => {
    const paused = await run(linear({ id: "start", type: "trigger.manual" }, { id: "call", type: "http", config: { url: `${slow.url}soon` } }, { id: "after", type: "transform", config: { expression: "'continued ran'" } }));
    await h.services.workflow.engine.until(paused, ["running"]);
    const startedAt = (await status(paused)).started_at;
    h.clock.advance(60_000);
    expect((await h.call("POST", `/api/workflow/${paused}/pause`, { token: jwt })).body.data.status).toBe("paused");
    const gated = await run(linear({ id: "start", type: "trigger.manual" }, { id: "ask", type: "approval", config: { message: "?" } }, { id: "after", type: "transform", config: { expression: "'approved ran'" } }));
    await settle(gated, ["waiting"]);
    const busy = await run(linear({ id: "hang", type: "http", config: { url: `${slow.url}hang` } }));
    await h.services.workflow.engine.until(busy, ["running"]);
    // Before: both went back to running beside `busy`, three at once under a cap of one.
    expect((await h.call("POST", `/api/workflow/${paused}/continue`, { token: jwt })).body.data.status).toBe("queued");
    expect((await h.call("POST", `/api/workflow/${gated}/continue`, { token: jwt, body: { input: {} } })).body.data.status).toBe("queued");
    await Bun.sleep(400);
    expect([(await status(paused)).status, (await status(gated)).status, (await status(busy)).status]).toEqual(["queued", "queued", "running"]);
    expect((await status(gated)).nodes.find((n: any) => n.node_id === "ask").status).toBe("succeeded");
    await h.call("POST", `/api/workflow/${busy}/stop`, { token: jwt });
    const [p, g] = [await settle(paused), await settle(gated)];
    expect([p.output, g.output]).toEqual(["continued ran", "approved ran"]);
    expect(p.started_at).toBe(startedAt); // queued again, it keeps when it first started
  });
});
