// Login, workspaces, organizations and users, the tenant matrix and the super-admin header.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ADMIN_EMAIL, createHarness, defaultWorkspaceId, secondTenant, type Harness } from "../support/harness";

let h: Harness;
let admin: string;
let defaultWs: string;
let other: Awaited<ReturnType<typeof secondTenant>>;

beforeAll(async () => {
  h = await createHarness();
  admin = await h.login();
  defaultWs = await defaultWorkspaceId(h, admin);
  other = await secondTenant(h, admin);
});
afterAll(() => h.close());

describe("bootstrap and login", () => {
  test("an empty database gets the Default organization, workspace and a super-admin owner", async () => {
    const me = await h.call("GET", "/api/auth/me", { token: admin });
    expect(me.status).toBe(200);
    expect(me.body.data.user).toMatchObject({ email: ADMIN_EMAIL, role: "owner", is_super_admin: true });
    expect(me.body.data.auth_type).toBe("jwt");
    const ws = await h.call("GET", "/api/products", { token: admin });
    expect(ws.body.data.map((w: { name: string }) => w.name)).toContain("Default");
  });

  test("login returns the DESIGN.md shape", async () => {
    const r = await h.call("POST", "/api/auth/login", { body: { email: ADMIN_EMAIL.toUpperCase(), password: "correct horse battery" } });
    expect(r.status).toBe(200);
    expect(r.body.success).toBe(true);
    expect(r.body.data.token.split(".").length).toBe(3);
    expect(Date.parse(r.body.data.expires_at)).toBeGreaterThan(Date.now());
    expect(Object.keys(r.body.data.user).sort()).toEqual(expect.arrayContaining(["email", "id", "name", "organization_id"]));
    expect(r.body.data.user.password_hash).toBeUndefined();
  });

  test("wrong credentials are 401 and are on the security trail", async () => {
    for (const body of [{ email: ADMIN_EMAIL, password: "nope" }, { email: "ghost@example.test", password: "nope" }]) {
      const r = await h.call("POST", "/api/auth/login", { body });
      expect(r.status).toBe(401);
      expect(r.body).toMatchObject({ success: false, error: "Unauthorized" });
    }
    const trail = h.services.activity.list(other.orgId, "login_failed", 10);
    expect(trail).toEqual([]); // failures are not filed under an unrelated organization
  });

  test("a tampered or foreign-signed JWT is 401", async () => {
    const [head, payload] = admin.split(".");
    const forged = `${head}.${payload}.${"A".repeat(43)}`;
    expect((await h.call("GET", "/api/auth/me", { token: forged })).status).toBe(401);
    expect((await h.call("GET", "/api/auth/me", { token: "not.a.jwt" })).status).toBe(401);
    expect((await h.call("GET", "/api/auth/me")).status).toBe(401);
  });
});

describe("workspaces", () => {
  test("create, read, rename, delete", async () => {
    const c = await h.call("POST", "/api/products", { token: admin, body: { name: "Research", description: "papers" } });
    expect(c.status).toBe(201);
    expect(c.body.data).toMatchObject({ name: "Research", description: "papers" });
    const id = c.body.data.id;
    expect((await h.call("GET", `/api/products/${id}`, { token: admin })).body.data.name).toBe("Research");
    const u = await h.call("PUT", `/api/products/${id}`, { token: admin, body: { name: "Research 2" } });
    expect(u.body.data.name).toBe("Research 2");
    // A read after the change shows it (the view made for the old row is not reused).
    const again = await h.call("GET", `/api/products/${id}`, { token: admin });
    expect(again.body.data).toEqual(u.body.data);
    expect((await h.call("DELETE", `/api/products/${id}`, { token: admin })).status).toBe(200);
    expect((await h.call("GET", `/api/products/${id}`, { token: admin })).status).toBe(404);
  });

  test("what a GET returns can be sent back: description null is accepted on create, as on update", async () => {
    // Before: every GET said "description": null, and a create with it was 422.
    const ws = await h.call("POST", "/api/products", { token: admin, body: { name: "From a copy", description: null } });
    expect([ws.status, ws.body.data?.description]).toEqual([201, null]);
    const kb = await h.call("POST", "/api/knowledge-base", { token: admin, body: { product_id: ws.body.data.id, name: "Copied", description: null } });
    expect([kb.status, kb.body.data?.description]).toEqual([201, null]);
    const graph = { nodes: [{ id: "t", type: "trigger.manual" }] };
    const wf = await h.call("POST", "/api/workflow-base", { token: admin, body: { product_id: ws.body.data.id, name: "Copied", description: null, graph } });
    expect([wf.status, wf.body.data?.description]).toEqual([201, null]);
  });

  test("a name of spaces only is refused on create and rename, for workspaces and organizations", async () => {
    const blank = { success: false, error: "ValidationError", message: "name must not be blank" };
    const c = await h.call("POST", "/api/products", { token: admin, body: { name: "   " } });
    expect(c.status).toBe(422);
    expect(c.body).toMatchObject(blank);
    const ws = await h.call("POST", "/api/products", { token: admin, body: { name: " Kept " } });
    expect(ws.body.data.name).toBe("Kept");
    const u = await h.call("PUT", `/api/products/${ws.body.data.id}`, { token: admin, body: { name: "\t " } });
    expect(u.status).toBe(422);
    expect(u.body).toMatchObject(blank);
    expect((await h.call("GET", `/api/products/${ws.body.data.id}`, { token: admin })).body.data.name).toBe("Kept");
    const org = await h.call("POST", "/api/organizations", { token: admin, body: { name: "   " } });
    expect(org.status).toBe(422);
    expect(org.body).toMatchObject(blank);
  });

  test("deleting a workspace deletes its tokens", async () => {
    const ws = await h.call("POST", "/api/products", { token: admin, body: { name: "Temp" } });
    const t = await h.call("POST", "/api/api-tokens", { token: admin, body: { product_id: ws.body.data.id, token_name: "t" } });
    await h.call("DELETE", `/api/products/${ws.body.data.id}`, { token: admin });
    expect((await h.call("GET", "/api/api-token/auth/validate", { headers: { "x-api-token": t.body.data.token } })).status).toBe(401);
  });

  test("an API token sees only its own workspace and cannot change workspaces", async () => {
    const t = await h.call("POST", "/api/api-tokens", { token: admin, body: { product_id: defaultWs, token_name: "reader" } });
    const token = t.body.data.token;
    const list = await h.call("GET", "/api/products", { token });
    expect(list.body.data.map((w: { id: string }) => w.id)).toEqual([defaultWs]);
    expect((await h.call("POST", "/api/products", { token, body: { name: "x" } })).status).toBe(403);
    const me = await h.call("GET", "/api/auth/me", { token });
    expect(me.body.data).toMatchObject({ auth_type: "api_token", product_id: defaultWs });
  });
});

describe("organizations and users", () => {
  test("owners add users; members cannot manage users or others' workspace tokens", async () => {
    const orgId = (await h.call("GET", "/api/auth/me", { token: admin })).body.data.user.organization_id;
    const add = await h.call("POST", `/api/organizations/${orgId}/users`, { token: admin, body: { email: "member@example.test", password: "member-pass", role: "member" } });
    expect(add.status).toBe(201);
    expect(add.body.data.password_hash).toBeUndefined();
    const dup = await h.call("POST", `/api/organizations/${orgId}/users`, { token: admin, body: { email: "MEMBER@example.test", password: "member-pass", role: "member" } });
    expect(dup.status).toBe(409);

    const member = await h.login("member@example.test", "member-pass");
    expect((await h.call("POST", `/api/organizations/${orgId}/users`, { token: member, body: { email: "x@example.test", password: "xxxxxxxx", role: "admin" } })).status).toBe(403);
    expect((await h.call("POST", "/api/organizations", { token: member, body: { name: "mine" } })).status).toBe(403);
    // The member may use the Default workspace but not manage its tokens...
    expect((await h.call("GET", `/api/products/${defaultWs}`, { token: member })).status).toBe(200);
    expect((await h.call("POST", "/api/api-tokens", { token: member, body: { product_id: defaultWs, token_name: "m" } })).status).toBe(403);
    // ...while a workspace the member created is theirs to manage.
    const own = await h.call("POST", "/api/products", { token: member, body: { name: "Member's" } });
    const tok = await h.call("POST", "/api/api-tokens", { token: member, body: { product_id: own.body.data.id, token_name: "m" } });
    expect(tok.status).toBe(201);
    expect((await h.call("POST", "/api/api-tokens", { token: member, body: { product_id: own.body.data.id, token_name: "s", role: "SYSTEM" } })).status).toBe(403);
    const users = await h.call("GET", `/api/organizations/${orgId}/users`, { token: admin });
    expect(users.body.pagination.total).toBeGreaterThanOrEqual(2);
  });

  test("user creation validates its body", async () => {
    const orgId = other.orgId;
    for (const body of [{ email: "bad", password: "longenough", role: "member" }, { email: "a@b.test", password: "short", role: "member" }, { email: "a@b.test", password: "longenough", role: "king" }]) {
      const r = await h.call("POST", `/api/organizations/${orgId}/users`, { token: admin, body });
      expect(r.status).toBe(422);
      expect(r.body.error).toBe("ValidationError");
    }
  });
});

describe("tenant matrix", () => {
  test("a user of another organization gets 404 on every id of the first", async () => {
    const t = await h.call("POST", "/api/api-tokens", { token: admin, body: { product_id: defaultWs, token_name: "private" } });
    const tokenId = t.body.data.id;
    const orgId = (await h.call("GET", "/api/auth/me", { token: admin })).body.data.user.organization_id;
    const probes: [string, string, unknown?][] = [
      ["GET", `/api/products/${defaultWs}`],
      ["PUT", `/api/products/${defaultWs}`, { name: "pwned" }],
      ["DELETE", `/api/products/${defaultWs}`],
      ["GET", `/api/api-tokens/product/${defaultWs}`],
      ["POST", "/api/api-tokens", { product_id: defaultWs, token_name: "x" }],
      ["GET", `/api/api-tokens/${tokenId}`],
      ["PUT", `/api/api-tokens/${tokenId}`, { is_active: false }],
      ["POST", `/api/api-tokens/${tokenId}/revoke`],
      ["POST", `/api/api-tokens/${tokenId}/renew`, { expires_at: new Date(Date.now() + 1e9).toISOString() }],
      ["POST", `/api/api-tokens/${tokenId}/regenerate`],
      ["DELETE", `/api/api-tokens/${tokenId}`],
      ["GET", `/api/api-tokens/${tokenId}/audit-logs`],
      ["GET", `/api/organizations/${orgId}/users`],
      ["POST", `/api/organizations/${orgId}/users`, { email: "spy@x.test", password: "spy-password", role: "owner" }],
      ["GET", `/api/organizations/${orgId}/activity`],
    ];
    for (const [method, path, body] of probes) {
      const r = await h.call(method, path, { token: other.jwt, body });
      expect({ method, path, status: r.status }).toEqual({ method, path, status: 404 });
      expect(r.body.error).toBe("NotFound");
    }
    // Nothing changed.
    expect((await h.call("GET", `/api/products/${defaultWs}`, { token: admin })).body.data.name).toBe("Default");
    expect((await h.call("GET", `/api/api-tokens/${tokenId}`, { token: admin })).body.data.status).toBe("active");
  });

  test("an API token of another workspace gets 404 on the first's workspace", async () => {
    const t = await h.call("POST", "/api/api-tokens", { token: other.jwt, body: { product_id: other.workspaceId, token_name: "o" } });
    const r = await h.call("GET", `/api/products/${defaultWs}`, { headers: { "x-api-token": t.body.data.token } });
    expect(r.status).toBe(404);
  });

  test("the list of workspaces shows only the caller's organization", async () => {
    const mine = await h.call("GET", "/api/products", { token: other.jwt });
    expect(mine.body.data.every((w: { organization_id: string }) => w.organization_id === other.orgId)).toBe(true);
  });
});

describe("X-Organization-Id", () => {
  test("a super admin acts in another organization, and each use is audited", async () => {
    const r = await h.call("GET", "/api/products", { token: admin, headers: { "x-organization-id": other.orgId } });
    expect(r.status).toBe(200);
    expect(r.body.data.map((w: { id: string }) => w.id)).toEqual([other.workspaceId]);
    const me = await h.call("GET", "/api/auth/me", { token: admin, headers: { "x-organization-id": other.orgId } });
    expect(me.body.data.acting_organization_id).toBe(other.orgId);
    await h.settle();
    const trail = await h.call("GET", `/api/organizations/${other.orgId}/activity?action=organization_override`, { token: other.jwt });
    expect(trail.status).toBe(200);
    expect(trail.body.data.length).toBe(2);
    expect(trail.body.data[1]).toMatchObject({ endpoint: "/api/products", method: "GET", status_code: 200 });
  });

  test("refused for everyone else (403), malformed (400), unknown organization (404)", async () => {
    const orgId = (await h.call("GET", "/api/auth/me", { token: admin })).body.data.user.organization_id;
    const r = await h.call("GET", "/api/products", { token: other.jwt, headers: { "x-organization-id": orgId } });
    expect(r.status).toBe(403);
    expect(r.body.error).toBe("Forbidden");
    // The refused attempt is on the actor's own organization's trail, whose admins should know; the
    // target's trail learns nothing of another tenant's users (before: filed there, not at home).
    const trail = h.services.activity.list(other.orgId, "organization_override", 5);
    expect(trail[0]).toMatchObject({ actorUserId: other.userId, statusCode: 403, targetOrganizationId: orgId });
    expect(h.services.activity.list(orgId, "organization_override", 5).some((e) => e.actorUserId === other.userId)).toBe(false);
    expect((await h.call("GET", "/api/products", { token: admin, headers: { "x-organization-id": "nope" } })).status).toBe(400);
    expect((await h.call("GET", "/api/products", { token: admin, headers: { "x-organization-id": crypto.randomUUID() } })).status).toBe(404);
    const t = await h.call("POST", "/api/api-tokens", { token: admin, body: { product_id: defaultWs, token_name: "hdr" } });
    expect((await h.call("GET", "/api/products", { headers: { "x-api-token": t.body.data.token, "x-organization-id": other.orgId } })).status).toBe(403);
  });
});
