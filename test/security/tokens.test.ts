// What Hearth defends against around API tokens: a member reaching a SYSTEM credential, audit
// history erased by deleting a token, and a rejected token flooding the audit log.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHarness, defaultWorkspaceId, type Harness } from "../support/harness";

let h: Harness;
let admin: string;
let member: string;
let memberWs: string;
let defaultWs: string;

beforeAll(async () => {
  h = await createHarness();
  admin = await h.login();
  defaultWs = await defaultWorkspaceId(h, admin);
  const me = await h.call("GET", "/api/auth/me", { token: admin });
  const orgId = me.body.data.user.organization_id as string;
  const add = await h.call("POST", `/api/organizations/${orgId}/users`, { token: admin, body: { email: "member@example.test", password: "member-pass", role: "member" } });
  expect(add.status).toBe(201);
  member = await h.login("member@example.test", "member-pass");
  // The member created this workspace, so it may manage the workspace's USER tokens.
  memberWs = (await h.call("POST", "/api/products", { token: member, body: { name: "Member's workspace" } })).body.data.id;
});
afterAll(() => h.close());

const createToken = async (jwt: string, body: Record<string, unknown>) => {
  const r = await h.call("POST", "/api/api-tokens", { token: jwt, body: { token_name: "t", ...body } });
  expect(r.status).toBe(201);
  return r.body.data as { id: string; token: string };
};
const validate = (secret: string) => h.call("GET", "/api/api-token/auth/validate", { headers: { "x-api-token": secret } });
const auditRows = (id: string) => {
  h.services.tokenAudit.flush();
  return h.services.storage.sqlite.query("SELECT action, count FROM api_token_audit_logs WHERE token_id = ? ORDER BY id").all(id) as { action: string; count: number }[];
};
const future = (ms: number) => new Date(h.clock.now() + ms).toISOString();

describe("a member cannot act on a SYSTEM token of a workspace it manages", () => {
  test("regenerate, update, renew, revoke, delete and the audit log answer 403; the token is untouched", async () => {
    const sys = await createToken(admin, { product_id: memberWs, role: "SYSTEM", expires_at: future(86_400_000) });
    const attempts: [string, string, unknown?][] = [
      ["POST", `/api/api-tokens/${sys.id}/regenerate`],
      ["PUT", `/api/api-tokens/${sys.id}`, { expires_at: null }],
      ["PUT", `/api/api-tokens/${sys.id}`, { is_active: false }],
      ["PUT", `/api/api-tokens/${sys.id}`, { token_name: "mine now" }],
      ["POST", `/api/api-tokens/${sys.id}/renew`, { expires_at: future(10 * 86_400_000) }],
      ["POST", `/api/api-tokens/${sys.id}/revoke`],
      ["DELETE", `/api/api-tokens/${sys.id}`],
      ["GET", `/api/api-tokens/${sys.id}/audit-logs`],
    ];
    for (const [method, path, body] of attempts) {
      const r = await h.call(method, path, { token: member, body });
      expect({ method, path, status: r.status }).toEqual({ method, path, status: 403 });
      expect(r.body.success).toBe(false);
      expect(r.text).not.toContain("svc_");
    }
    // Nothing changed: same secret, same expiry, still active, still SYSTEM.
    const ok = await validate(sys.token);
    expect(ok.status).toBe(200);
    expect(ok.body.role).toBe("SYSTEM");
    const seen = await h.call("GET", `/api/api-tokens/${sys.id}`, { token: admin });
    expect(seen.body.data).toMatchObject({ token_name: "t", is_active: true, status: "active", role: "SYSTEM" });
    expect(auditRows(sys.id).map((r) => r.action)).toEqual(["created", "used"]);
  });

  test("the member still sees that the SYSTEM token exists in its workspace, without its history", async () => {
    const sys = await createToken(admin, { product_id: memberWs, role: "SYSTEM" });
    expect((await h.call("GET", `/api/api-tokens/${sys.id}`, { token: member })).body.data).toMatchObject({ id: sys.id, role: "SYSTEM" });
    const list = await h.call("GET", `/api/api-tokens/product/${memberWs}`, { token: member });
    expect(list.body.data.map((t: { id: string }) => t.id)).toContain(sys.id);
  });

  test("owners and admins keep every operation; the member keeps its USER tokens", async () => {
    const sys = await createToken(admin, { product_id: memberWs, role: "SYSTEM", expires_at: future(86_400_000) });
    expect((await h.call("PUT", `/api/api-tokens/${sys.id}`, { token: admin, body: { token_name: "ops" } })).status).toBe(200);
    expect((await h.call("POST", `/api/api-tokens/${sys.id}/renew`, { token: admin, body: { expires_at: future(2 * 86_400_000) } })).status).toBe(200);
    const regen = await h.call("POST", `/api/api-tokens/${sys.id}/regenerate`, { token: admin });
    expect(regen.status).toBe(200);
    expect(regen.body.data.role).toBe("SYSTEM");
    expect((await h.call("GET", `/api/api-tokens/${sys.id}/audit-logs`, { token: admin })).status).toBe(200);
    expect((await h.call("POST", `/api/api-tokens/${sys.id}/revoke`, { token: admin })).status).toBe(200);

    const mine = await createToken(member, { product_id: memberWs });
    expect((await h.call("POST", `/api/api-tokens/${mine.id}/regenerate`, { token: member })).status).toBe(200);
    expect((await h.call("GET", `/api/api-tokens/${mine.id}/audit-logs`, { token: member })).status).toBe(200);
    expect((await h.call("DELETE", `/api/api-tokens/${mine.id}`, { token: member })).status).toBe(200);
  });
});

describe("a member cannot take over another user's token", () => {
  test("regenerating a USER token an admin created in the member's workspace is 403: its secret would act as the admin", async () => {
    const admins = await createToken(admin, { product_id: memberWs });
    const r = await h.call("POST", `/api/api-tokens/${admins.id}/regenerate`, { token: member });
    expect(r.status).toBe(403);
    expect(r.text).not.toContain("svc_");
    expect((await validate(admins.token)).status).toBe(200);
    // Managing the workspace's tokens otherwise stays the member's: it may still revoke it.
    expect((await h.call("POST", `/api/api-tokens/${admins.id}/revoke`, { token: member })).status).toBe(200);
  });
});

describe("audit history outlives the token", () => {
  test("a deleted token is gone from lists and use, its audit log stays readable with a `deleted` entry", async () => {
    const t = await createToken(admin, { product_id: defaultWs, token_name: "short-lived" });
    expect((await validate(t.token)).status).toBe(200);
    await h.settle();
    const before = (await h.call("GET", `/api/api-tokens/product/${defaultWs}?pageSize=100`, { token: admin })).body.pagination.total;

    const del = await h.call("DELETE", `/api/api-tokens/${t.id}`, { token: admin, headers: { "user-agent": "cleanup/1.0" } });
    expect(del.status).toBe(200);

    const log = await h.call("GET", `/api/api-tokens/${t.id}/audit-logs`, { token: admin });
    expect(log.status).toBe(200);
    expect(log.body.data.map((e: { action: string }) => e.action)).toEqual(["deleted", "used", "created"]);
    expect(log.body.data[0]).toMatchObject({ user_agent: "cleanup/1.0", endpoint: `/api/api-tokens/${t.id}`, status_code: 200 });

    expect((await validate(t.token)).status).toBe(401);
    expect((await h.call("GET", `/api/api-tokens/${t.id}`, { token: admin })).status).toBe(404);
    for (const [method, path, body] of [
      ["PUT", `/api/api-tokens/${t.id}`, { is_active: true }],
      ["POST", `/api/api-tokens/${t.id}/revoke`, undefined],
      ["POST", `/api/api-tokens/${t.id}/renew`, { expires_at: future(86_400_000) }],
      ["POST", `/api/api-tokens/${t.id}/regenerate`, undefined],
      ["DELETE", `/api/api-tokens/${t.id}`, undefined],
    ] as const) {
      expect((await h.call(method, path, { token: admin, body })).status).toBe(404);
    }
    const list = await h.call("GET", `/api/api-tokens/product/${defaultWs}?pageSize=100`, { token: admin });
    expect(list.body.data.map((x: { id: string }) => x.id)).not.toContain(t.id);
    expect(list.body.pagination.total).toBe(before - 1);
  });

  test("a member may not read the history of a deleted SYSTEM token either", async () => {
    const sys = await createToken(admin, { product_id: memberWs, role: "SYSTEM" });
    expect((await h.call("DELETE", `/api/api-tokens/${sys.id}`, { token: admin })).status).toBe(200);
    expect((await h.call("GET", `/api/api-tokens/${sys.id}/audit-logs`, { token: member })).status).toBe(403);
    expect((await h.call("GET", `/api/api-tokens/${sys.id}/audit-logs`, { token: admin })).status).toBe(200);
  });
});

describe("a rejected token cannot flood the audit log", () => {
  const hammer = async (secret: string, n: number) => {
    for (let i = 0; i < n; i++) expect((await validate(secret)).status).toBe(401);
    await h.settle();
  };

  test("300 uses of a revoked token write one row per minute, carrying the count", async () => {
    const t = await createToken(admin, { product_id: defaultWs });
    expect((await h.call("POST", `/api/api-tokens/${t.id}/revoke`, { token: admin })).status).toBe(200);
    await hammer(t.token, 300);
    const log = await h.call("GET", `/api/api-tokens/${t.id}/audit-logs`, { token: admin });
    expect(log.body.data.map((e: { action: string; count: number }) => [e.action, e.count])).toEqual([
      ["used", 300],
      ["revoked", 1],
      ["created", 1],
    ]);
    expect(log.body.data[0]).toMatchObject({ status_code: 401, endpoint: "/api/api-token/auth/validate" });

    h.clock.advance(61_000);
    await hammer(t.token, 2);
    expect(auditRows(t.id)).toEqual([
      { action: "created", count: 1 },
      { action: "revoked", count: 1 },
      { action: "used", count: 300 },
      { action: "used", count: 2 },
    ]);
  });

  test("an inactive or deleted token is bounded the same way; an expired one logs `expired` once", async () => {
    const inactive = await createToken(admin, { product_id: defaultWs });
    await h.call("PUT", `/api/api-tokens/${inactive.id}`, { token: admin, body: { is_active: false } });
    await hammer(inactive.token, 50);
    expect(auditRows(inactive.id)).toEqual([
      { action: "created", count: 1 },
      { action: "deactivated", count: 1 },
      { action: "used", count: 50 },
    ]);

    const deleted = await createToken(admin, { product_id: defaultWs });
    await h.call("DELETE", `/api/api-tokens/${deleted.id}`, { token: admin });
    await hammer(deleted.token, 50);
    expect(auditRows(deleted.id)).toEqual([
      { action: "created", count: 1 },
      { action: "deleted", count: 1 },
      { action: "used", count: 50 },
    ]);

    const expiring = await createToken(admin, { product_id: defaultWs, expires_at: future(1000) });
    h.clock.advance(2000);
    await hammer(expiring.token, 50);
    expect(auditRows(expiring.id)).toEqual([
      { action: "created", count: 1 },
      { action: "expired", count: 1 },
      { action: "used", count: 49 },
    ]);
  });

  test("a valid token still writes one `used` row per request", async () => {
    const t = await createToken(admin, { product_id: defaultWs });
    for (let i = 0; i < 20; i++) expect((await validate(t.token)).status).toBe(200);
    await h.settle();
    expect(auditRows(t.id).filter((r) => r.action === "used")).toEqual(Array.from({ length: 20 }, () => ({ action: "used", count: 1 })));
  });
});
