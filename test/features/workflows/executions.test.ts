// Executions end to end: branches, condition skips, outputs, version pinning, approvals, pause,
// continue, stop (aborting a slow http call), delays and retries on a moved clock, single nodes,
// the SSE stream with Last-Event-ID replay, and the outbound address rule.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { BASE, createHarness, defaultWorkspaceId, type Harness } from "../../support/harness";
import { allEvents, readSse } from "../../support/sse";
import { linear } from "./support";

let h: Harness;
let jwt: string;
let ws: string;
let server: ReturnType<typeof Bun.serve>;
const hits: { path: string; idempotencyKey: string | null; at: number }[] = [];
let flaky = 0;

beforeAll(async () => {
  // A local API: /ok answers JSON, /flaky fails twice with 503 (Retry-After 2), /slow hangs until aborted.
  server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      const url = new URL(req.url);
      hits.push({ path: url.pathname, idempotencyKey: req.headers.get("idempotency-key"), at: Date.now() });
      if (url.pathname === "/ok") return Response.json({ echo: req.method === "POST" ? await req.json() : null, greeting: "hello" });
      if (url.pathname === "/flaky") return ++flaky <= 2 ? new Response("busy", { status: 503, headers: { "retry-after": "2" } }) : Response.json({ ok: true });
      if (url.pathname === "/wait") return Bun.sleep(300).then(() => Response.json({ waited: true }));
      if (url.pathname === "/teapot") return new Response("short and stout", { status: 418 });
      if (url.pathname === "/slow") return new Promise<Response>((resolve) => req.signal.addEventListener("abort", () => resolve(new Response("late"))));
      if (url.pathname === "/to-loopback") return Response.redirect("http://127.0.0.2:9/", 302);
      return new Response("no", { status: 404 });
    },
  });
  h = await createHarness({ HEARTH_HTTP_ALLOW: "127.0.0.1" });
  (h as Harness & { jwt: string }).jwt = jwt = await h.login();
  ws = await defaultWorkspaceId(h, jwt);
  h.services.start();
});
afterAll(async () => {
  await h.close();
  server.stop(true);
});

const run = async (graph: unknown, input: Record<string, unknown> = {}) => {
  const r = await h.call("POST", "/api/workflow/execute", { token: jwt, body: { graph, product_id: ws, input } });
  expect(r.status).toBe(202);
  return r.body.data.id as string;
};
const status = async (id: string) => (await h.call("GET", `/api/workflow/${id}/status`, { token: jwt })).body.data;
const settle = (id: string, statuses: any[] = ["succeeded", "failed", "stopped"]) => h.services.workflow.engine.until(id, statuses, 20_000).then(() => status(id));

describe("running graphs", () => {
  test("branches run in parallel, a condition skips the other branch, output is the output node's value", async () => {
    const graph = {
      nodes: [
        { id: "start", type: "trigger.manual" },
        { id: "big", type: "condition", config: { expression: "input.amount > 100" } },
        { id: "approve", type: "transform", config: { expression: "'manager'" } },
        { id: "auto", type: "transform", config: { expression: "'auto'" } },
        { id: "audit", type: "transform", config: { expression: "$string(input.amount)" } },
        { id: "result", type: "output", config: { value: "{{ { 'route': nodes.approve.output, 'audit': nodes.audit.output } }}" } },
      ],
      edges: [
        { from: "start", to: "big" },
        { from: "start", to: "audit" },
        { from: "big", to: "approve", when: "true" },
        { from: "big", to: "auto", when: "false" },
        { from: "approve", to: "result" },
        { from: "auto", to: "result" },
        { from: "audit", to: "result" },
      ],
    };
    const done = await settle(await run(graph, { amount: 250 }));
    expect(done.status).toBe("succeeded");
    expect(done.output).toEqual({ route: "manager", audit: "250" });
    const byNode = Object.fromEntries(done.nodes.map((n: any) => [n.node_id, n]));
    expect(byNode.auto.status).toBe("skipped");
    expect(byNode.approve.status).toBe("succeeded");
    expect(byNode.big.output).toEqual({ result: true });
    expect(byNode.start.output).toEqual({ amount: 250 });
    expect(done.trigger).toEqual({ type: "api" });
  });

  test("a template keeps its type when it is the whole string, and becomes text inside one", async () => {
    const graph = linear({ id: "start", type: "trigger.manual" }, { id: "out", type: "output", config: { value: { n: "{{ input.n + 1 }}", text: "n is {{ input.n }}", obj: "{{ input }}" } } });
    const done = await settle(await run(graph, { n: 41 }));
    expect(done.output).toEqual({ n: 42, text: "n is 41", obj: { n: 41 } });
  });

  test("an execution keeps its version after a newer save", async () => {
    const w = (await h.call("POST", "/api/workflow-base", {
      token: jwt,
      body: { product_id: ws, name: "pinned", graph: linear({ id: "start", type: "trigger.manual" }, { id: "gate", type: "approval", config: { message: "ok?" } }, { id: "v", type: "transform", config: { expression: "'one'" } }) },
    })).body.data;
    const id = (await h.call("POST", "/api/workflow/execute", { token: jwt, body: { workflow_id: w.id } })).body.data.id;
    await settle(id, ["waiting"]);
    await h.call("PUT", `/api/workflow-base/${w.id}`, { token: jwt, body: { graph: linear({ id: "start", type: "trigger.manual" }, { id: "v", type: "transform", config: { expression: "'two'" } }) } });
    await h.call("POST", `/api/workflow/${id}/continue`, { token: jwt, body: { input: { ok: true } } });
    const done = await settle(id);
    expect(done.version_id).toBe(w.active_version_id);
    expect(done.output).toBe("one");
    const fresh = await settle((await h.call("POST", "/api/workflow/execute", { token: jwt, body: { workflow_id: w.id } })).body.data.id);
    expect(fresh.output).toBe("two");
  });

  test("a broken node fails its execution with a readable error, not the server", async () => {
    const done = await settle(await run(linear({ id: "start", type: "trigger.manual" }, { id: "boom", type: "transform", config: { expression: "$error('the ledger is closed')" } }, { id: "never", type: "output" })));
    expect(done.status).toBe("failed");
    expect(done.error).toMatch(/node "boom".*the ledger is closed/);
    expect(done.nodes.find((n: any) => n.node_id === "never").status).toBe("skipped");
  });

  test("a config whose template finds nothing says which template, not only what the field must be", async () => {
    const done = await settle(await run(linear({ id: "start", type: "trigger.manual" }, { id: "get", type: "http", config: { url: "{{ input.nope }}" } })));
    expect(done.status).toBe("failed");
    expect(done.error).toBe('node "get" (http) failed: config.url must be a string of 1 to 8192 characters; url came out null from "{{ input.nope }}"');
  });

  test("a runaway expression is cut off by its time budget", async () => {
    const done = await settle(await run(linear({ id: "start", type: "trigger.manual" }, { id: "spin", type: "transform", config: { expression: "$count([1..5000000].($ * 2)[$ > 3].($ + 1))" } })));
    expect(done.status).toBe("failed");
    expect(done.error).toMatch(/node "spin".*stopped after 1000 ms of work/);
  });

  test("a long expression lets the event loop run while it works: timers and requests are not held until it ends", async () => {
    let worst = 0;
    let last = performance.now();
    const ticker = setInterval(() => {
      const now = performance.now();
      worst = Math.max(worst, now - last);
      last = now;
    }, 1);
    try {
      const done = await settle(await run(linear({ id: "start", type: "trigger.manual" }, { id: "work", type: "transform", config: { expression: "$count($map([1..100000], function($x) { $x * 2 }))" } })));
      expect(done.output).toBe(100000);
    } finally {
      clearInterval(ticker);
    }
    // Before: one gap as long as the whole evaluation (~300 ms here), every request waiting.
    expect(worst).toBeLessThan(100);
  });

  test("a long chain of transforms lets the event loop run between nodes (timers, sockets, other requests)", async () => {
    const chain = linear({ id: "start", type: "trigger.manual" }, ...Array.from({ length: 300 }, (_, i) => ({ id: `t${i}`, type: "transform", config: { expression: `${i} + 1` } })));
    const id = await run(chain);
    await settle(id, ["running"]);
    // A timer due at once: it fires between two nodes, not after the whole chain has run.
    await Bun.sleep(0);
    const mid = await status(id);
    expect(mid.status).toBe("running");
    expect(mid.nodes.filter((n: any) => n.status === "succeeded").length).toBeLessThan(300);
    expect((await settle(id)).output).toBe(300);
  });

  test("parallel nodes that finish together commit together: a 300-node fan-out does not hold the event loop for 300 fsyncs", async () => {
    const middle = Array.from({ length: 300 }, (_, i) => ({ id: `f${i}`, type: "transform", config: { expression: `{ "i": ${i} }` } }));
    const graph = {
      nodes: [{ id: "start", type: "trigger.manual" }, ...middle, { id: "join", type: "transform", config: { expression: "$sum(nodes.*.output.i)" } }],
      edges: [...middle.map((m) => ({ from: "start", to: m.id })), ...middle.map((m) => ({ from: m.id, to: "join" }))],
    };
    // The longest the event loop goes without running a timer while the execution runs.
    let longest = 0;
    let last = performance.now();
    let watching = true;
    const watch = () => {
      const now = performance.now();
      longest = Math.max(longest, now - last);
      last = now;
      if (watching) setTimeout(watch, 1);
    };
    setTimeout(watch, 1);
    const done = await settle(await run(graph));
    watching = false;
    // One fsync'd commit per node in one go would stall it for about 300 of them (over a second on a disk).
    expect(longest).toBeLessThan(250);
    expect(done.output).toBe((299 * 300) / 2);
    expect(done.nodes.every((n: any) => n.status === "succeeded")).toBe(true);
  });

  test("executions are listed newest first without a status filter, and filtered by one", async () => {
    h.clock.advance(1000); // the test clock stands still otherwise: "newest" needs a later time
    const id = await run(linear({ id: "only", type: "transform", config: { expression: "1" } }));
    await settle(id);
    const all = await h.call("GET", `/api/workflow/executions?product_id=${ws}`, { token: jwt });
    expect(all.body.pagination.total).toBeGreaterThan(0);
    expect(all.body.data[0].id).toBe(id);
    const done = await h.call("GET", `/api/workflow/executions?product_id=${ws}&status=succeeded`, { token: jwt });
    expect(done.body.data.every((e: any) => e.status === "succeeded")).toBe(true);
    expect((await h.call("GET", `/api/workflow/executions?product_id=${ws}&status=bogus`, { token: jwt })).status).toBe(400);
  });

  test("huge and malformed inputs are 4xx", async () => {
    const big = { blob: "x".repeat(300 * 1024) };
    expect((await h.call("POST", "/api/workflow/execute", { token: jwt, body: { graph: linear({ id: "o", type: "output" }), product_id: ws, input: big } })).status).toBe(413);
    expect((await h.call("POST", "/api/workflow/execute", { token: jwt, body: { product_id: ws } })).status).toBe(400);
    expect((await h.call("POST", "/api/workflow/execute", { token: jwt, body: { graph: { nodes: [{ id: "x", type: "nope" }] }, product_id: ws } })).status).toBe(422);
  });
});

describe("approvals, pause, continue, stop", () => {
  test("an approval waits; continue with input makes it the node's output", async () => {
    const id = await run(linear({ id: "start", type: "trigger.manual" }, { id: "ask", type: "approval", config: { message: "Ship {{ input.release }}?" } }, { id: "out", type: "output", config: { value: "{{ nodes.ask.output }}" } }), { release: "1.2" });
    const waiting = await settle(id, ["waiting"]);
    expect(waiting.status).toBe("waiting");
    const ask = waiting.nodes.find((n: any) => n.node_id === "ask");
    expect(ask.status).toBe("waiting");
    expect(ask.output).toEqual({ message: "Ship 1.2?" });
    expect((await h.call("POST", `/api/workflow/${id}/pause`, { token: jwt })).status).toBe(409);
    const cont = await h.call("POST", `/api/workflow/${id}/continue`, { token: jwt, body: { input: { approved: true, by: "ops" } } });
    expect(cont.status).toBe(200);
    const done = await settle(id);
    expect(done.output).toEqual({ approved: true, by: "ops" });
    const again = await h.call("POST", `/api/workflow/${id}/continue`, { token: jwt, body: {} });
    expect(again.status).toBe(409);
    expect(again.body.message).toContain("succeeded");
  });

  test("pause lets the running node finish and starts nothing new; continue goes on", async () => {
    const id = await run(linear({ id: "start", type: "trigger.manual" }, { id: "slow", type: "http", config: { url: `${server.url}wait` } }, { id: "after", type: "transform", config: { expression: "'went on'" } }));
    await settle(id, ["running"]);
    for (let i = 0; i < 100 && !(await status(id)).nodes.some((n: any) => n.node_id === "slow" && n.status === "running"); i++) await Bun.sleep(5);
    const paused = await h.call("POST", `/api/workflow/${id}/pause`, { token: jwt });
    expect(paused.status).toBe(200);
    expect(paused.body.data.status).toBe("paused");
    await Bun.sleep(600);
    const held = await status(id);
    expect(held.status).toBe("paused");
    expect(held.nodes.find((n: any) => n.node_id === "slow")).toMatchObject({ status: "succeeded", output: { status: 200, body: { waited: true } } });
    expect(held.nodes.find((n: any) => n.node_id === "after").status).toBe("pending");
    expect((await h.call("POST", `/api/workflow/${id}/continue`, { token: jwt })).body.data.status).toBe("running");
    const done = await settle(id);
    expect(done.output).toBe("went on");
  });

  test("pause between nodes, then continue", async () => {
    const id = await run(linear({ id: "start", type: "trigger.manual" }, { id: "gate", type: "approval", config: { message: "go" } }, { id: "a", type: "transform", config: { expression: "1" } }, { id: "b", type: "transform", config: { expression: "2" } }));
    await settle(id, ["waiting"]);
    expect((await h.call("POST", `/api/workflow/${id}/continue`, { token: jwt, body: { input: {} } })).status).toBe(200);
    const done = await settle(id);
    expect(done.status).toBe("succeeded");
    expect((await h.call("POST", `/api/workflow/${id}/pause`, { token: jwt })).status).toBe(409);
    expect((await h.call("POST", `/api/workflow/${id}/stop`, { token: jwt })).status).toBe(409);
  });

  test("stop aborts a running http call to a slow server", async () => {
    const before = hits.filter((x) => x.path === "/slow").length;
    const id = await run(linear({ id: "start", type: "trigger.manual" }, { id: "slow", type: "http", config: { url: `${server.url}slow` } }, { id: "after", type: "output" }));
    for (let i = 0; i < 100 && hits.filter((x) => x.path === "/slow").length === before; i++) await Bun.sleep(10);
    const stopped = await h.call("POST", `/api/workflow/${id}/stop`, { token: jwt });
    expect(stopped.status).toBe(200);
    expect(stopped.body.data.status).toBe("stopped");
    const s = await status(id);
    expect(s.nodes.find((n: any) => n.node_id === "slow")).toMatchObject({ status: "failed", error: "the execution was stopped" });
    expect(s.nodes.find((n: any) => n.node_id === "after").status).toBe("skipped");
  });

  test("deleting a workspace stops its executions in progress: a follower gets done, and Hearth goes on", async () => {
    const other = (await h.call("POST", "/api/products", { token: jwt, body: { name: "Short-lived" } })).body.data.id as string;
    const started = await h.call("POST", "/api/workflow/execute", { token: jwt, body: { graph: linear({ id: "start", type: "trigger.manual" }, { id: "slow", type: "http", config: { url: `${server.url}wait` } }), product_id: other, input: {} } });
    const id = started.body.data.id as string;
    for (let i = 0; i < 100 && !(await status(id)).nodes.some((n: any) => n.node_id === "slow" && n.status === "running"); i++) await Bun.sleep(5);
    const follower = readSse(await h.app.handle(new Request(`${BASE}/api/workflow/${id}/events`, { headers: { authorization: `Bearer ${jwt}` } })));
    // Before: the node's answer came after its rows were gone, and writing it failed outside any
    // request, which ended the process.
    const stray: unknown[] = [];
    const onStray = (e: unknown) => void stray.push(e);
    process.on("unhandledRejection", onStray);
    try {
      expect((await h.call("DELETE", `/api/products/${other}`, { token: jwt })).status).toBe(200);
      expect((await follower.until("done"))?.data).toMatchObject({ status: "stopped" });
      await follower.ended;
      await Bun.sleep(500); // past the slow server's answer
      expect(stray).toEqual([]);
    } finally {
      process.off("unhandledRejection", onStray);
    }
    expect((await h.call("GET", `/api/workflow/${id}/status`, { token: jwt })).status).toBe(404);
    expect((await settle(await run(linear({ id: "after", type: "transform", config: { expression: "'still here'" } })))).output).toBe("still here");
  });

  test("stop ends a waiting execution; pause and continue in the wrong state are 409 with the status", async () => {
    const id = await run(linear({ id: "start", type: "trigger.manual" }, { id: "ask", type: "approval", config: { message: "?" } }));
    await settle(id, ["waiting"]);
    const stop = await h.call("POST", `/api/workflow/${id}/stop`, { token: jwt });
    expect(stop.body.data.status).toBe("stopped");
    const pause = await h.call("POST", `/api/workflow/${id}/pause`, { token: jwt });
    expect(pause.status).toBe(409);
    expect(pause.body.message).toContain("stopped");
  });
});

describe("timers and retries on a moved clock", () => {
  test("a delay waits for the clock, not the wall", async () => {
    const id = await run(linear({ id: "start", type: "trigger.manual" }, { id: "nap", type: "delay", config: { ms: 3_600_000 } }, { id: "out", type: "output", config: { value: "woke" } }));
    const waiting = await settle(id, ["waiting"]);
    expect(waiting.nodes.find((n: any) => n.node_id === "nap").wake_at).toBeDefined();
    h.clock.advance(3_599_000);
    h.services.workflow.engine.tick();
    expect((await status(id)).status).toBe("waiting");
    h.clock.advance(2_000);
    h.services.workflow.engine.tick();
    const done = await settle(id);
    expect(done.output).toBe("woke");
  });

  test("retries back off exponentially, honour Retry-After, and keep one idempotency key", async () => {
    flaky = 0;
    const id = await run(linear({ id: "start", type: "trigger.manual" }, { id: "call", type: "http", config: { url: `${server.url}flaky` }, retry: { max_attempts: 4, backoff_ms: 100, max_backoff_ms: 1000 } }));
    const events: any[] = [];
    const off = h.services.workflow.events.subscribe(id, (e) => events.push(e));
    for (let i = 0; i < 50; i++) {
      await Bun.sleep(20);
      h.clock.advance(2_500);
      h.services.workflow.engine.tick();
      if ((await status(id)).status === "succeeded") break;
    }
    off();
    const done = await status(id);
    expect(done.status).toBe("succeeded");
    expect(done.nodes.find((n: any) => n.node_id === "call").attempt).toBe(3);
    const retries = events.filter((e) => e.event === "node_retry").map((e) => e.data);
    expect(retries).toHaveLength(2);
    // Retry-After: 2 s is longer than the 100/200 ms backoff, so it is what is waited.
    expect(retries.every((r) => r.delay_ms >= 2000)).toBe(true);
    expect(retries[0].error).toContain("503");
    const keys = new Set(hits.filter((x) => x.path === "/flaky").map((x) => x.idempotencyKey));
    expect([...keys]).toEqual([`${id}:call`]);
  });

  test("a 4xx fails at once without retry", async () => {
    const done = await settle(await run(linear({ id: "start", type: "trigger.manual" }, { id: "tea", type: "http", config: { url: `${server.url}teapot` }, retry: { max_attempts: 5 } })));
    expect(done.status).toBe("failed");
    expect(done.error).toContain("418");
    expect(done.nodes.find((n: any) => n.node_id === "tea").attempt).toBe(1);
  });
});

describe("http node and the address rule", () => {
  test("posts JSON with an idempotency key and parses the JSON answer", async () => {
    const done = await settle(await run(linear({ id: "start", type: "trigger.manual" }, { id: "post", type: "http", config: { method: "POST", url: `${server.url}ok`, body: { hi: "{{ input.name }}" } } }), { name: "Ada" }));
    expect(done.output.status).toBe(200);
    expect(done.output.body).toEqual({ echo: { hi: "Ada" }, greeting: "hello" });
  });

  test("loopback, metadata and a redirect to loopback are refused without HEARTH_HTTP_ALLOW", async () => {
    const strict = await createHarness();
    const sjwt = await strict.login();
    const sws = await defaultWorkspaceId(strict, sjwt);
    strict.services.start();
    try {
      for (const url of [`${server.url}ok`, "http://localhost:9/", "http://169.254.169.254/latest/meta-data/", "http://[::1]:9/", "http://[::ffff:127.0.0.1]:9/"]) {
        const r = await strict.call("POST", "/api/workflow/execute", { token: sjwt, body: { product_id: sws, graph: linear({ id: "get", type: "http", config: { url } }) } });
        await strict.services.workflow.engine.until(r.body.data.id, ["failed", "succeeded"], 10_000);
        const s = (await strict.call("GET", `/api/workflow/${r.body.data.id}/status`, { token: sjwt })).body.data;
        expect(s.status).toBe("failed");
        expect(s.error).toMatch(/loopback, link-local or metadata/);
      }
    } finally {
      await strict.close();
    }
    // Allowed to reach 127.0.0.1 but not 127.0.0.2: the redirect's target is checked too.
    const done = await settle(await run(linear({ id: "get", type: "http", config: { url: `${server.url}to-loopback` } })));
    expect(done.status).toBe("failed");
    expect(done.error).toMatch(/127\.0\.0\.2.*loopback/);
  });
});

describe("single nodes", () => {
  test("POST /api/nodes/execute runs one node; its status is at /api/nodes/status/{id}", async () => {
    const r = await h.call("POST", "/api/nodes/execute", { token: jwt, body: { type: "transform", config: { expression: "input.a & '-' & input.b" }, input: { a: "x", b: "y" }, product_id: ws } });
    expect(r.status).toBe(202);
    await h.services.workflow.engine.until(r.body.data.execution_id);
    const s = await h.call("GET", `/api/nodes/status/${r.body.data.id}`, { token: jwt });
    expect(s.body.data).toMatchObject({ id: r.body.data.id, type: "transform", status: "succeeded", output: "x-y", attempt: 1 });
    const bad = await h.call("POST", "/api/nodes/execute", { token: jwt, body: { type: "http", config: { url: "ftp://x" }, product_id: ws } });
    expect(bad.status).toBe(422);
    // Node runs inside executions answer there too.
    const id = await run(linear({ id: "only", type: "transform", config: { expression: "7" } }));
    const done = await settle(id);
    expect((await h.call("GET", `/api/nodes/status/${done.nodes[0].id}`, { token: jwt })).body.data.output).toBe(7);
    expect((await h.call("GET", `/api/nodes/status/${crypto.randomUUID()}`, { token: jwt })).status).toBe(404);
  });

  test("node types are listed with their schemas", async () => {
    const r = await h.call("GET", "/api/nodes/types", { token: jwt });
    const types = r.body.data.map((t: any) => t.type);
    for (const t of ["trigger.manual", "trigger.schedule", "trigger.webhook", "llm", "knowledge.search", "http", "transform", "condition", "delay", "approval", "transcribe", "output"]) expect(types).toContain(t);
  });
});

describe("live events", () => {
  test("the stream carries ids; Last-Event-ID replays exactly what was missed; a finished stream replays and closes", async () => {
    const id = await run(linear({ id: "start", type: "trigger.manual" }, { id: "ask", type: "approval", config: { message: "?" } }, { id: "x", type: "transform", config: { expression: "1" } }, { id: "out", type: "output", config: { value: "fin" } }));
    await settle(id, ["waiting"]);
    const first = await h.app.handle(new Request(`${BASE}/api/workflow/${id}/events`, { headers: { authorization: `Bearer ${jwt}` } }));
    expect(first.headers.get("content-type")).toContain("text/event-stream");
    const reader = readSse(first);
    await reader.until("node_waiting");
    const seen = reader.events;
    const lastId = Number(seen.at(-1)!.id);
    await h.call("POST", `/api/workflow/${id}/continue`, { token: jwt, body: { input: {} } });
    await settle(id);
    const rest = await allEvents(await h.app.handle(new Request(`${BASE}/api/workflow/${id}/events`, { headers: { authorization: `Bearer ${jwt}`, "last-event-id": String(lastId) } })));
    const ids = rest.map((e: any) => Number(e.id));
    expect(ids[0]).toBe(lastId + 1);
    expect(new Set(ids).size).toBe(ids.length);
    expect(rest.at(-1)).toMatchObject({ event: "done" });
    expect(rest.at(-1)!.data).toEqual({ status: "succeeded", output: "fin" });
    const all = await allEvents(await h.app.handle(new Request(`${BASE}/api/workflow/${id}/events`, { headers: { authorization: `Bearer ${jwt}` } })));
    expect(all.map((e: any) => Number(e.id))).toEqual(all.map((_: unknown, i: number) => i + 1));
    expect(all.map((e: any) => e.event)).toContain("node_started");
  });

  test("a client reconnecting after done gets a stream that closes at once; an id past the latest follows from the latest", async () => {
    const id = await run(linear({ id: "start", type: "trigger.manual" }, { id: "ask", type: "approval", config: { message: "?" } }, { id: "out", type: "output", config: { value: "fin" } }));
    await settle(id, ["waiting"]);
    const events = (lastEventId?: string) =>
      h.app.handle(new Request(`${BASE}/api/workflow/${id}/events`, { headers: { authorization: `Bearer ${jwt}`, ...(lastEventId ? { "last-event-id": lastEventId } : {}) } }));
    const ahead = readSse(await events("9999"));
    await h.call("POST", `/api/workflow/${id}/continue`, { token: jwt, body: { input: {} } });
    expect((await ahead.until("done"))?.data).toEqual({ status: "succeeded", output: "fin" });
    await ahead.ended;
    const doneId = (await allEvents(await events())).at(-1)!.id!;
    // EventSource reconnects after the server closes; before, such a stream stayed open for ever.
    for (const after of [doneId, "9999"]) expect(await allEvents(await events(after))).toEqual([]);
  });
});
