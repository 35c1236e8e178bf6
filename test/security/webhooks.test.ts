// What Hearth defends against at POST /api/webhook/{path}: forged deliveries (Standard Webhooks and
// GitHub signatures, checked against their published test vectors), replays (timestamp window,
// repeated delivery ids, also raced), credentials leaking into workflow input or trigger views,
// and fast probing of unknown paths.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHmac } from "node:crypto";
import { eq } from "drizzle-orm";
import { createHarness, defaultWorkspaceId, type Harness } from "../support/harness";
import { githubProblem, standardWebhooksProblem } from "../../src/features/workflows/signatures";
import { webhookDeliveries, workflowExecutions } from "../../src/features/workflows/table";

// Standard Webhooks: the "sign function works" vector of the reference JavaScript library
// (standard-webhooks/standard-webhooks, libraries/javascript/src/webhook.test.ts).
const SW = {
  secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
  id: "msg_p5jXN8AQM9LWM0D4loKWxJek",
  timestamp: 1614265330,
  payload: '{"test": 2432232314}',
  signature: "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
};
// GitHub: "Validating webhook deliveries", the test values of its docs.
const GH = { secret: "It's a Secret to Everybody", payload: "Hello, World!", signature: "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17" };

const bytes = (s: string) => new TextEncoder().encode(s);
let h: Harness;
let jwt: string;
let ws: string;

async function hookOn(path: string, config: Record<string, unknown>) {
  const graph = { nodes: [{ id: "hook", type: "trigger.webhook", config: { path, ...config } }], edges: [] };
  const r = await h.call("POST", "/api/workflow-base", { token: jwt, body: { product_id: ws, name: path, graph } });
  expect(r.status).toBe(201);
  return r.body.data;
}

const post = (path: string, raw: string, headers: Record<string, string>) => h.call("POST", `/api/webhook/${path}`, { raw, headers: { "content-type": "application/json", ...headers } });
const executionsOf = (workflowId: string) => h.services.storage.db.select().from(workflowExecutions).where(eq(workflowExecutions.workflowId, workflowId)).all();

beforeAll(async () => {
  h = await createHarness({ HEARTH_WEBHOOK_RATE_LIMIT: "1000" });
  jwt = await h.login();
  ws = await defaultWorkspaceId(h, jwt);
});
afterAll(() => h.close());

describe("published test vectors", () => {
  test("Standard Webhooks: the reference library's signature verifies; a flipped byte does not", () => {
    const now = SW.timestamp * 1000;
    expect(standardWebhooksProblem(SW.secret, SW.id, String(SW.timestamp), SW.signature, bytes(SW.payload), now)).toBeUndefined();
    expect(standardWebhooksProblem(SW.secret, SW.id, String(SW.timestamp), SW.signature, bytes(SW.payload.replace("2", "3")), now)).toBe("webhook-signature does not match");
    expect(standardWebhooksProblem(SW.secret, "msg_other", String(SW.timestamp), SW.signature, bytes(SW.payload), now)).toBe("webhook-signature does not match");
  });

  test("GitHub: the docs' X-Hub-Signature-256 verifies; another secret or payload does not", () => {
    expect(githubProblem(GH.secret, GH.signature, bytes(GH.payload))).toBeUndefined();
    expect(githubProblem(GH.secret, GH.signature, bytes("Hello, World?"))).toBe("X-Hub-Signature-256 does not match");
    expect(githubProblem("It's a Secret to Nobody", GH.signature, bytes(GH.payload))).toBe("X-Hub-Signature-256 does not match");
    expect(githubProblem(GH.secret, GH.signature.replace("sha256=", "sha1="), bytes(GH.payload))).toContain("must be sha256=");
  });

  test("a secret without the whsec_ prefix is used as its UTF-8 bytes", () => {
    const secret = "plain-secret-0123456789";
    const sig = createHmac("sha256", Buffer.from(secret, "utf8")).update(`m1.100.{}`).digest("base64");
    expect(standardWebhooksProblem(secret, "m1", "100", `v1,${sig}`, bytes("{}"), 100_000)).toBeUndefined();
  });
});

describe("signed webhooks over HTTP", () => {
  test("Standard Webhooks: the vector's delivery is accepted at its time; forged, partial, stale, future or unsigned ones are 401", async () => {
    const w = await hookOn("sw-signed-path-01", { secret: SW.secret });
    h.clock.set(SW.timestamp * 1000);
    const headers = { "webhook-id": SW.id, "webhook-timestamp": String(SW.timestamp), "webhook-signature": SW.signature };
    const refused: [string, Record<string, string>, string][] = [
      ["unsigned", {}, SW.payload],
      ["forged", { ...headers, "webhook-signature": "v1,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc=" }, SW.payload],
      ["partial", { ...headers, "webhook-signature": SW.signature.slice(0, 8) }, SW.payload],
      ["empty v1", { ...headers, "webhook-signature": "v1," }, SW.payload],
      ["v2 only", { ...headers, "webhook-signature": SW.signature.replace("v1,", "v2,") }, SW.payload],
      ["no id", { "webhook-timestamp": headers["webhook-timestamp"], "webhook-signature": SW.signature }, SW.payload],
      ["bad timestamp", { ...headers, "webhook-timestamp": "hello" }, SW.payload],
      ["body changed", headers, '{"test": 2432232315}'],
    ];
    for (const [what, hdrs, body] of refused) {
      const r = await post("sw-signed-path-01", body, hdrs);
      expect(`${what}: ${r.status}`).toBe(`${what}: 401`);
      expect(r.body).toMatchObject({ success: false, error: "Unauthorized" });
    }
    // Outside ±5 minutes of Hearth's clock: a replay of a captured delivery (or a skewed sender).
    for (const skew of [-301_000, 301_000]) {
      h.clock.set(SW.timestamp * 1000 + skew);
      const r = await post("sw-signed-path-01", SW.payload, headers);
      expect(r.status).toBe(401);
      expect(r.body.message).toContain("5 minutes");
    }
    expect(executionsOf(w.id)).toHaveLength(0);

    h.clock.set(SW.timestamp * 1000 + 299_000);
    const ok = await post("sw-signed-path-01", SW.payload, headers);
    expect(ok.status).toBe(200);
    expect(ok.body.message).toBe("Delivery accepted");
    // Several signatures (key rotation): one valid v1 among others is enough; same webhook-id → the first delivery.
    const multi = await post("sw-signed-path-01", SW.payload, { ...headers, "webhook-signature": `v1,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc= v2,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc= ${SW.signature}` });
    expect(multi.status).toBe(200);
    expect(multi.body.data).toEqual(ok.body.data);
    expect(multi.body.message).toContain("duplicate");
    expect(executionsOf(w.id)).toHaveLength(1);
  });

  test("GitHub: X-Hub-Signature-256 over the raw bytes (whitespace included); wrong secret 401; redelivery starts nothing", async () => {
    const w = await hookOn("gh-signed-path-01", { secret: GH.secret, events: ["push"] });
    const raw = '{ "ref": "refs/heads/main",  "head_commit": {"message": "Fix"} }';
    const sign = (secret: string, body: string) => `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`;
    const hdrs = { "x-github-event": "push", "x-github-delivery": "72d3162e-cc78-11e3-81ab-4c9367dc0958" };
    expect((await post("gh-signed-path-01", raw, { ...hdrs, "x-hub-signature-256": sign("wrong secret 0123456", raw) })).status).toBe(401);
    expect((await post("gh-signed-path-01", raw, { ...hdrs, "x-hub-signature-256": sign(GH.secret, JSON.stringify(JSON.parse(raw))) })).status).toBe(401);
    const first = await post("gh-signed-path-01", raw, { ...hdrs, "x-hub-signature-256": sign(GH.secret, raw) });
    expect(first.status).toBe(200);
    expect(first.body.data.execution_id).toEqual(expect.any(String));
    const again = await post("gh-signed-path-01", raw, { ...hdrs, "x-hub-signature-256": sign(GH.secret, raw) });
    expect(again.body.data).toEqual(first.body.data);
    expect(executionsOf(w.id)).toHaveLength(1);
    // A signature is checked before the events filter: an unsigned event of another kind is still 401.
    expect((await post("gh-signed-path-01", raw, { "x-github-event": "issues" })).status).toBe(401);
  });
});

describe("duplicates and leaks", () => {
  test("20 concurrent deliveries with one Idempotency-Key: one delivery, one execution, every answer the same ids", async () => {
    const w = await hookOn("dup-race-path-01", {});
    const answers = await Promise.all(Array.from({ length: 20 }, () => post("dup-race-path-01", '{"n": 1}', { "idempotency-key": "order-42" })));
    expect(answers.every((a) => a.status === 200)).toBe(true);
    expect(new Set(answers.map((a) => JSON.stringify(a.body.data))).size).toBe(1);
    expect(executionsOf(w.id)).toHaveLength(1);
    const rows = h.services.storage.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.deliveryKey, "order-42")).all();
    expect(rows).toHaveLength(1);
    // The key is per path: the same key on another path is another delivery.
    await hookOn("dup-race-path-02", {});
    const other = await post("dup-race-path-02", '{"n": 1}', { "idempotency-key": "order-42" });
    expect(other.body.data.delivery_id).not.toBe(answers[0]!.body.data.delivery_id);
  });

  test("credentials never reach the workflow's input; the secret never appears in trigger views", async () => {
    const w = await hookOn("leak-check-path1", { secret: "a-very-secret-value-123" });
    const raw = '{"n": 1}';
    const sig = `sha256=${createHmac("sha256", "a-very-secret-value-123").update(raw).digest("hex")}`;
    const r = await post("leak-check-path1", raw, { "x-hub-signature-256": sig, authorization: "Bearer svc_x", cookie: "a=b", "x-api-token": "svc_y" });
    expect(r.status).toBe(200);
    const exec = executionsOf(w.id)[0]!;
    expect(JSON.stringify(exec.input)).not.toMatch(/svc_|a=b|sha256=/);
    const views = await h.call("GET", `/api/agent-base/triggers?product_id=${ws}`, { token: jwt });
    expect(views.text).not.toContain("a-very-secret-value-123");
    // Nor in the workflow's own views (before: its graph showed the secret to every user and token
    // of the workspace); saving the graph as read keeps it.
    const read = await h.call("GET", `/api/workflow-base/${w.id}`, { token: jwt });
    const versions = await h.call("GET", `/api/workflow-base/${w.id}/versions`, { token: jwt });
    for (const r of [read, versions]) expect(r.text).not.toContain("a-very-secret-value-123");
    expect(read.body.data.graph.nodes[0].config.secret).toBe("(kept)");
    const saved = await h.call("PUT", `/api/workflow-base/${w.id}`, { token: jwt, body: { graph: read.body.data.graph } });
    expect(saved.status).toBe(200);
    const again = await post("leak-check-path1", raw, { "x-hub-signature-256": sig });
    expect(again.status).toBe(200);
    const stray = { nodes: [...read.body.data.graph.nodes, { id: "hook2", type: "trigger.webhook", config: { path: "leak-check-path2", secret: "(kept)" } }], edges: [] };
    const refused = await h.call("PUT", `/api/workflow-base/${w.id}`, { token: jwt, body: { graph: stray } });
    expect([refused.status, refused.body.message]).toEqual([422, 'Node "hook2": config.secret is (kept), but the node has no secret to keep; send the secret itself']);
  });

  test("probing unknown paths is budgeted per client address", async () => {
    const small = await createHarness({ HEARTH_WEBHOOK_RATE_LIMIT: "5" });
    try {
      const codes: number[] = [];
      for (let i = 0; i < 7; i++) codes.push((await small.call("POST", `/api/webhook/guess-${i}-0000000`, { body: {} })).status);
      expect(codes).toEqual([404, 404, 404, 404, 404, 429, 429]);
    } finally {
      await small.close();
    }
  });

  test("unsigned requests to a signed path are paid from their address's budget, not the path's: the real sender still gets through", async () => {
    const small = await createHarness({ HEARTH_WEBHOOK_RATE_LIMIT: "3" });
    try {
      const token = await small.login();
      const product = await defaultWorkspaceId(small, token);
      const graph = { nodes: [{ id: "hook", type: "trigger.webhook", config: { path: "signed-budget-01", secret: GH.secret } }], edges: [] };
      expect((await small.call("POST", "/api/workflow-base", { token, body: { product_id: product, name: "signed", graph } })).status).toBe(201);
      const send = (headers: Record<string, string>) => small.call("POST", "/api/webhook/signed-budget-01", { raw: '{"n": 1}', headers: { "content-type": "application/json", ...headers } });
      const codes: number[] = [];
      for (let i = 0; i < 5; i++) codes.push((await send({ "x-hub-signature-256": `sha256=${"0".repeat(64)}` })).status);
      expect(codes).toEqual([401, 401, 401, 429, 429]);
      // Before, the forgeries spent the path's budget and this answered 429.
      const real = await send({ "x-hub-signature-256": `sha256=${createHmac("sha256", GH.secret).update('{"n": 1}').digest("hex")}` });
      expect(real.status).toBe(200);
      expect(real.headers.get("ratelimit-remaining")).toBe("2");
    } finally {
      await small.close();
    }
  });
});
