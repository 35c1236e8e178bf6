// Authentication remembers usable tokens (no query per request); every way a token stops working
// must reach the very next request, also while other requests with it are in flight.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHarness, defaultWorkspaceId, type Harness } from "../support/harness";

let h: Harness;
let jwt: string;
let productId: string;

beforeAll(async () => {
  h = await createHarness({ HEARTH_RATE_LIMIT: "100000" });
  jwt = await h.login();
  productId = await defaultWorkspaceId(h, jwt);
});
afterAll(() => h.close());

const create = async (body: Record<string, unknown> = {}, workspace = productId) => {
  const r = await h.call("POST", "/api/api-tokens", { token: jwt, body: { product_id: workspace, token_name: "cached", ...body } });
  expect(r.status).toBe(201);
  return r.body.data as { id: string; token: string };
};
const validate = (secret: string) => h.call("GET", "/api/api-token/auth/validate", { headers: { "x-api-token": secret } });
const product = (secret: string, id = productId) => h.call("GET", `/api/products/${id}`, { headers: { "x-api-token": secret } });

/** A token whose principal is remembered: it has authenticated a request. */
const warm = async (body: Record<string, unknown> = {}, workspace = productId) => {
  const t = await create(body, workspace);
  expect((await validate(t.token)).status).toBe(200);
  return t;
};

describe("a remembered token stops working on the very next request", () => {
  test("revoke, while 64 requests with the token are in flight", async () => {
    const t = await warm();
    const inFlight = Array.from({ length: 64 }, (_, i) => (i % 2 ? validate(t.token) : product(t.token)));
    const revoked = await h.call("POST", `/api/api-tokens/${t.id}/revoke`, { token: jwt });
    expect(revoked.status).toBe(200);
    const next = await validate(t.token);
    expect(next.status).toBe(401);
    expect(next.body.message).toBe("Invalid API token");
    // The requests sent before the revoke were each answered (200 before it, 401 after), none failed otherwise.
    for (const r of await Promise.all(inFlight)) expect([200, 401]).toContain(r.status);
    expect((await product(t.token)).status).toBe(401);
  });

  test("revoke between two requests sent back to back without awaiting", async () => {
    const t = await warm();
    const before = validate(t.token);
    const revoke = h.call("POST", `/api/api-tokens/${t.id}/revoke`, { token: jwt });
    await revoke;
    const after = validate(t.token);
    expect((await before).status).toBe(200);
    expect((await after).status).toBe(401);
  });

  test("deactivate, and activate again", async () => {
    const t = await warm();
    expect((await h.call("PUT", `/api/api-tokens/${t.id}`, { token: jwt, body: { is_active: false } })).status).toBe(200);
    expect((await validate(t.token)).status).toBe(401);
    expect((await h.call("PUT", `/api/api-tokens/${t.id}`, { token: jwt, body: { is_active: true } })).status).toBe(200);
    expect((await validate(t.token)).status).toBe(200);
  });

  test("regenerate: the old secret fails, the new one works", async () => {
    const t = await warm();
    const r = await h.call("POST", `/api/api-tokens/${t.id}/regenerate`, { token: jwt });
    expect(r.status).toBe(200);
    expect((await validate(t.token)).status).toBe(401);
    expect((await validate(r.body.data.token)).status).toBe(200);
  });

  test("delete", async () => {
    const t = await warm();
    expect((await h.call("DELETE", `/api/api-tokens/${t.id}`, { token: jwt })).status).toBe(200);
    expect((await validate(t.token)).status).toBe(401);
  });

  test("expiry, with no request in between to notice it", async () => {
    const t = await warm({ expires_at: new Date(h.clock.now() + 60_000).toISOString() });
    h.clock.advance(59_000);
    expect((await validate(t.token)).status).toBe(200);
    h.clock.advance(1_000);
    expect((await validate(t.token)).status).toBe(401);
  });

  test("renewing a remembered token moves its expiry", async () => {
    const t = await warm({ expires_at: new Date(h.clock.now() + 60_000).toISOString() });
    const r = await h.call("POST", `/api/api-tokens/${t.id}/renew`, { token: jwt, body: { expires_at: new Date(h.clock.now() + 3_600_000).toISOString() } });
    expect(r.status).toBe(200);
    h.clock.advance(120_000);
    expect((await validate(t.token)).status).toBe(200);
  });

  test("deleting the token's workspace", async () => {
    const ws = await h.call("POST", "/api/products", { token: jwt, body: { name: `doomed ${crypto.randomUUID()}` } });
    expect(ws.status).toBe(201);
    const t = await warm({}, ws.body.data.id);
    expect((await product(t.token, ws.body.data.id)).status).toBe(200);
    expect((await h.call("DELETE", `/api/products/${ws.body.data.id}`, { token: jwt })).status).toBe(200);
    expect((await validate(t.token)).status).toBe(401);
  });
});

describe("every use of a remembered token is still audited", () => {
  test("100 requests, 100 `used` rows", async () => {
    const t = await warm();
    await Promise.all(Array.from({ length: 99 }, () => validate(t.token)));
    const r = await h.call("GET", `/api/api-tokens/${t.id}/audit-logs?limit=500`, { token: jwt });
    expect(r.status).toBe(200);
    expect((r.body.data as { action: string }[]).filter((e) => e.action === "used")).toHaveLength(100);
  });
});
