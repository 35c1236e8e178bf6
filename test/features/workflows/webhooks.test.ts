// Inbound webhooks (spec §4.7): stored then answered 200 with the delivery and execution ids, run
// afterwards with {body, headers, event}; the events filter; 404/400/413 bodies; 503 with
// Retry-After when storage fails; the per-path rate limit with its headers.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { createHarness, defaultWorkspaceId, type Harness } from "../../support/harness";
import { webhookDeliveries, workflowExecutions } from "../../../src/features/workflows/table";

let h: Harness;
let jwt: string;
let ws: string;

/** A workflow "webhook → transform" listening on `path`. */
async function hookOn(harness: Harness, token: string, product: string, path: string, config: Record<string, unknown> = {}) {
  const graph = {
    nodes: [
      { id: "hook", type: "trigger.webhook", config: { path, ...config } },
      { id: "shape", type: "transform", config: { expression: "{ 'n': input.body.n, 'event': input.event, 'ua': input.headers.`user-agent` }" } },
    ],
    edges: [{ from: "hook", to: "shape" }],
  };
  const r = await harness.call("POST", "/api/workflow-base", { token, body: { product_id: product, name: `hook ${path}`, graph } });
  expect(r.status).toBe(201);
  return r.body.data;
}

const deliver = (harness: Harness, path: string, body: unknown, headers: Record<string, string> = {}) =>
  harness.call("POST", `/api/webhook/${path}`, typeof body === "string" ? { raw: body, headers: { "content-type": "application/json", ...headers } } : { body, headers });

beforeAll(async () => {
  h = await createHarness({ HEARTH_WEBHOOK_RATE_LIMIT: "1000" });
  jwt = await h.login();
  ws = await defaultWorkspaceId(h, jwt);
  h.services.workflow.start(); // the engine and scheduler only: no model loading for these tests
});
afterAll(() => h.close());

describe("intake", () => {
  test("stored, answered 200 with the ids, then run with {body, headers (a safe subset), event}", async () => {
    const w = await hookOn(h, jwt, ws, "intake-path-0001");
    const r = await deliver(h, "intake-path-0001", { n: 7, event: "order.created" }, { "user-agent": "shop/1.0", cookie: "session=abc", "x-api-token": "svc_nope" });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ success: true, message: "Delivery accepted", data: { delivery_id: expect.any(String), execution_id: expect.any(String) } });
    expect(r.headers.get("ratelimit-limit")).toBe("1000");
    const stored = h.services.storage.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, r.body.data.delivery_id)).get()!;
    expect(stored).toMatchObject({ status: "accepted", executionId: r.body.data.execution_id, event: "order.created" });

    const done = await h.services.workflow.engine.until(r.body.data.execution_id, ["succeeded", "failed"], 10_000);
    expect(done.status).toBe("succeeded");
    expect(done).toMatchObject({ workflowId: w.id, versionId: w.active_version_id, triggerType: "webhook" });
    expect(done.output).toEqual({ n: 7, event: "order.created", ua: "shop/1.0" });
    const input = done.input as { headers: Record<string, string> };
    expect(Object.keys(input.headers).sort()).toEqual(["content-type", "user-agent"]);
  });

  test("events: others answer 200 ignored, recorded, nothing runs; body.event or X-GitHub-Event", async () => {
    await hookOn(h, jwt, ws, "filtered-path-01", { events: ["push"] });
    const ignored = await deliver(h, "filtered-path-01", { n: 1 }, { "x-github-event": "issues" });
    expect(ignored.status).toBe(200);
    expect(ignored.body).toEqual({ success: true, message: "ignored", data: { delivery_id: expect.any(String), execution_id: null } });
    const row = h.services.storage.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, ignored.body.data.delivery_id)).get()!;
    expect(row).toMatchObject({ status: "ignored", event: "issues", executionId: null });
    expect((await deliver(h, "filtered-path-01", { n: 2 })).body.message).toBe("ignored"); // no event at all
    const byHeader = await deliver(h, "filtered-path-01", { n: 3 }, { "x-github-event": "push" });
    const byBody = await deliver(h, "filtered-path-01", { n: 4, event: "push" });
    for (const r of [byHeader, byBody]) {
      expect(r.body.message).toBe("Delivery accepted");
      expect((await h.services.workflow.engine.until(r.body.data.execution_id, ["succeeded"], 10_000)).output).toMatchObject({ event: "push" });
    }
  });

  test("unknown path 404, not JSON or not an object 400, over 1 MB 413: the spec's body, never a 500", async () => {
    await hookOn(h, jwt, ws, "limits-path-0001");
    const unknown = await deliver(h, "no-such-path-123", { n: 1 });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ success: false, message: "Webhook not found" });
    const cases: [string, Record<string, string>, number][] = [
      ["not json", {}, 400],
      ["[1, 2]", {}, 400],
      ['"text"', {}, 400],
      ["", {}, 400],
      ["a=1&b=2", { "content-type": "application/x-www-form-urlencoded" }, 400],
      ["{}", { "content-type": "text/plain" }, 400],
      [`{"big": "${"x".repeat(1024 * 1024)}"}`, {}, 413],
      ["[".repeat(100_000), {}, 400],
    ];
    for (const [raw, headers, status] of cases) {
      const r = await deliver(h, "limits-path-0001", raw, headers);
      expect(`${raw.slice(0, 20)} ${r.status}`).toBe(`${raw.slice(0, 20)} ${status}`);
      expect(r.body.success).toBe(false);
      expect(typeof r.body.message).toBe("string");
    }
    // No body at all (no Content-Length): before, accepted with the string "" as its body.
    const bodiless = await h.call("POST", "/api/webhook/limits-path-0001", { headers: { "content-type": "application/json" } });
    expect(bodiless.status).toBe(400);
    expect(bodiless.body.message).toBe("A webhook delivery must be a JSON object; the request had no body");
    expect((await deliver(h, "limits-path-0001", `{"ok": "${"x".repeat(1000 * 1000)}"}`)).status).toBe(200);
  });

  test("a delivery that cannot be stored: 503 with Retry-After, and nothing half-written", async () => {
    await hookOn(h, jwt, ws, "storage-path-001");
    const before = h.services.storage.db.select().from(webhookDeliveries).all().length;
    // Let earlier executions end first, so only the delivery meets the read-only store.
    for (const e of h.services.storage.db.select().from(workflowExecutions).all()) await h.services.workflow.engine.until(e.id, ["succeeded", "failed", "stopped"], 10_000);
    h.services.storage.sqlite.exec("PRAGMA query_only = ON");
    let r;
    try {
      r = await deliver(h, "storage-path-001", { n: 1 });
    } finally {
      h.services.storage.sqlite.exec("PRAGMA query_only = OFF");
    }
    expect(r.status).toBe(503);
    expect(r.headers.get("retry-after")).toBe("5");
    expect(r.body).toMatchObject({ success: false, message: expect.stringContaining("could not be stored") });
    expect(h.services.storage.db.select().from(webhookDeliveries).all().length).toBe(before);
    expect((await deliver(h, "storage-path-001", { n: 1 })).status).toBe(200);
  });
});

describe("rate limit per path", () => {
  test("HEARTH_WEBHOOK_RATE_LIMIT a minute per path: RateLimit headers, then 429 with Retry-After; other paths keep their budget", async () => {
    const small = await createHarness({ HEARTH_WEBHOOK_RATE_LIMIT: "3" });
    try {
      const token = await small.login();
      const product = await defaultWorkspaceId(small, token);
      await hookOn(small, token, product, "busy-path-000001");
      await hookOn(small, token, product, "calm-path-000001");
      const remaining: string[] = [];
      for (let i = 0; i < 3; i++) {
        const r = await deliver(small, "busy-path-000001", { i });
        expect(r.status).toBe(200);
        remaining.push(r.headers.get("ratelimit-remaining")!);
      }
      expect(remaining).toEqual(["2", "1", "0"]);
      const limited = await deliver(small, "busy-path-000001", { i: 4 });
      expect(limited.status).toBe(429);
      expect(limited.body).toMatchObject({ success: false, error: "TooManyRequests" });
      expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
      expect(limited.headers.get("ratelimit-limit")).toBe("3");
      expect((await deliver(small, "calm-path-000001", { i: 1 })).status).toBe(200);
      small.clock.advance(61_000);
      expect((await deliver(small, "busy-path-000001", { i: 5 })).status).toBe(200);
    } finally {
      await small.close();
    }
  });
});
