// Every step of the API token lifecycle (spec §4.9) and every audit action, over HTTP in-process.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Database } from "bun:sqlite";
import { createHarness, defaultWorkspaceId, type Harness } from "../support/harness";

let h: Harness;
let jwt: string;
let productId: string;

beforeAll(async () => {
  h = await createHarness();
  jwt = await h.login();
  productId = await defaultWorkspaceId(h, jwt);
});
afterAll(() => h.close());

const create = async (body: Record<string, unknown> = {}) => {
  const r = await h.call("POST", "/api/api-tokens", { token: jwt, body: { product_id: productId, token_name: "ci", ...body } });
  expect(r.status).toBe(201);
  return r.body.data as { id: string; token: string; token_prefix: string };
};

const auditActions = async (id: string) => {
  await h.settle();
  const r = await h.call("GET", `/api/api-tokens/${id}/audit-logs`, { token: jwt });
  expect(r.status).toBe(200);
  return (r.body.data as { action: string }[]).map((e) => e.action);
};

const INVALID = { success: false, error: "Unauthorized", message: "Invalid API token" };

describe("create", () => {
  test("returns the secret once, with the spec's envelope and fields", async () => {
    const r = await h.call("POST", "/api/api-tokens", {
      token: jwt,
      body: { product_id: productId, token_name: "deploy bot", expires_at: new Date(h.clock.now() + 86_400_000).toISOString() },
    });
    expect(r.status).toBe(201);
    expect(r.body.success).toBe(true);
    expect(typeof r.body.message).toBe("string");
    const d = r.body.data;
    expect(d.token).toMatch(/^svc_[0-9A-Za-z]{38}$/);
    expect(d.token_prefix).toBe(d.token.slice(0, 12));
    expect(d.token_name).toBe("deploy bot");
    expect(d.product_id).toBe(productId);
    expect(d.role).toBe("USER");
    expect(Date.parse(d.expires_at)).toBeGreaterThan(h.clock.now());
    expect(Date.parse(d.created_at)).toBeGreaterThan(0);

    const got = await h.call("GET", `/api/api-tokens/${d.id}`, { token: jwt });
    expect(got.status).toBe(200);
    expect(got.body.data.token).toBeUndefined();
    expect(got.body.data.token_prefix).toBe(d.token_prefix);
    expect(await auditActions(d.id)).toEqual(["created"]);
  });

  test("list shows the workspace's tokens without secrets, paginated", async () => {
    await create({ token_name: "one" });
    await create({ token_name: "two" });
    const r = await h.call("GET", `/api/api-tokens/product/${productId}?page=1&pageSize=2`, { token: jwt });
    expect(r.status).toBe(200);
    expect(r.body.data.length).toBe(2);
    expect(r.body.pagination.pageSize).toBe(2);
    expect(r.body.pagination.total).toBeGreaterThanOrEqual(3);
    for (const t of r.body.data) expect(t.token).toBeUndefined();
  });

  test("an expiry in the past or not a date is refused", async () => {
    const past = await h.call("POST", "/api/api-tokens", { token: jwt, body: { product_id: productId, token_name: "x", expires_at: "2001-01-01T00:00:00Z" } });
    expect(past.status).toBe(422);
    const junk = await h.call("POST", "/api/api-tokens", { token: jwt, body: { product_id: productId, token_name: "x", expires_at: "tomorrow" } });
    expect([400, 422]).toContain(junk.status);
    expect(junk.body.error).toBe("ValidationError");
  });

  test("a name of spaces only is refused on create and on update (name required, spec §5 rule 9)", async () => {
    for (const token_name of ["   ", "\t\n "]) {
      const r = await h.call("POST", "/api/api-tokens", { token: jwt, body: { product_id: productId, token_name } });
      expect(r.status).toBe(422);
      expect(r.body).toMatchObject({ success: false, error: "ValidationError", message: "token_name must not be blank" });
    }
    const t = await create({ token_name: "  padded  " });
    expect((await h.call("GET", `/api/api-tokens/${t.id}`, { token: jwt })).body.data.token_name).toBe("padded");
    const u = await h.call("PUT", `/api/api-tokens/${t.id}`, { token: jwt, body: { token_name: "   " } });
    expect(u.status).toBe(422);
    expect(u.body.message).toBe("token_name must not be blank");
    expect((await h.call("GET", `/api/api-tokens/${t.id}`, { token: jwt })).body.data.token_name).toBe("padded");
  });
});

describe("use", () => {
  test("both header forms authenticate and each use is audited with caller details", async () => {
    const t = await create();
    const a = await h.call("GET", "/api/api-token/auth/validate", { headers: { "x-api-token": t.token, "user-agent": "probe/1.0" } });
    expect(a.status).toBe(200);
    expect(a.body).toMatchObject({ success: true, authType: "api_token", productId, apiTokenId: t.id });
    expect(a.body.data).toBeUndefined();
    expect(typeof a.body.userId).toBe("string");
    expect(typeof a.body.organizationId).toBe("string");
    const b = await h.call("GET", "/api/api-token/auth/validate", { headers: { authorization: `Bearer ${t.token}` } });
    expect(b.status).toBe(200);

    await h.settle();
    const log = await h.call("GET", `/api/api-tokens/${t.id}/audit-logs`, { token: jwt });
    const used = log.body.data.filter((e: { action: string }) => e.action === "used");
    expect(used.length).toBe(2);
    expect(used[1]).toMatchObject({ endpoint: "/api/api-token/auth/validate", status_code: 200, user_agent: "probe/1.0" });
    expect(used[0].created_at).toBeString();
  });

  test("a used row records the status code of a failed call too", async () => {
    const t = await create();
    const r = await h.call("GET", "/api/products/not-a-uuid", { token: t.token });
    expect(r.status).toBe(400);
    await h.settle();
    const log = await h.call("GET", `/api/api-tokens/${t.id}/audit-logs?limit=1`, { token: jwt });
    expect(log.body.data).toEqual([expect.objectContaining({ action: "used", status_code: 400, endpoint: "/api/products/not-a-uuid" })]);
  });

  test("last_used_at is each token's last successful use, in the list and for one token", async () => {
    const [a, b, unused] = [await create({ token_name: "used twice" }), await create({ token_name: "used once, then refused" }), await create({ token_name: "never used" })];
    const validate = (token: string) => h.call("GET", "/api/api-token/auth/validate", { headers: { "x-api-token": token } });
    expect((await validate(b.token)).status).toBe(200);
    const bUsedAt = h.clock.now();
    h.clock.advance(5_000);
    expect((await validate(a.token)).status).toBe(200);
    h.clock.advance(5_000);
    expect((await validate(a.token)).status).toBe(200);
    const aUsedAt = h.clock.now();
    h.clock.advance(5_000);
    // A failed call with a valid token and a refused one (revoked) are not successful uses.
    expect((await h.call("GET", "/api/products/not-a-uuid", { token: a.token })).status).toBe(400);
    expect((await h.call("POST", `/api/api-tokens/${b.id}/revoke`, { token: jwt })).status).toBe(200);
    expect((await validate(b.token)).status).toBe(401);

    const list = await h.call("GET", `/api/api-tokens/product/${productId}?pageSize=100`, { token: jwt });
    expect(list.status).toBe(200);
    const lastUsed = (id: string) => (list.body.data as { id: string; last_used_at: string | null }[]).find((t) => t.id === id)?.last_used_at;
    expect(lastUsed(a.id)).toBe(new Date(aUsedAt).toISOString());
    expect(lastUsed(b.id)).toBe(new Date(bUsedAt).toISOString());
    expect(lastUsed(unused.id)).toBeNull();
    expect((await h.call("GET", `/api/api-tokens/${a.id}`, { token: jwt })).body.data.last_used_at).toBe(new Date(aUsedAt).toISOString());
    expect((await h.call("GET", `/api/api-tokens/${unused.id}`, { token: jwt })).body.data.last_used_at).toBeNull();
  });

  test("a token in the query string never authenticates", async () => {
    const t = await create();
    for (const q of ["token", "api_token", "access_token", "apiToken"]) {
      const r = await h.call("GET", `/api/api-token/auth/validate?${q}=${t.token}`);
      expect(r.status).toBe(401);
    }
  });

  test("garbage, typos and unknown tokens get exactly the spec's 401 body", async () => {
    const t = await create();
    const typo = t.token.slice(0, -1) + (t.token.endsWith("a") ? "b" : "a");
    for (const token of ["svc_nope", typo, "svc_" + "A".repeat(38), t.token + "x"]) {
      const r = await h.call("GET", "/api/api-token/auth/validate", { headers: { "x-api-token": token } });
      expect(r.status).toBe(401);
      expect(r.body).toEqual(INVALID);
    }
  });

  test("management endpoints refuse API tokens", async () => {
    const t = await create();
    const r = await h.call("GET", `/api/api-tokens/product/${productId}`, { token: t.token });
    expect(r.status).toBe(403);
    const c = await h.call("POST", "/api/api-tokens", { token: t.token, body: { product_id: productId, token_name: "escalate" } });
    expect(c.status).toBe(403);
  });

  test("the validate endpoint refuses a session JWT", async () => {
    const r = await h.call("GET", "/api/api-token/auth/validate", { token: jwt });
    expect(r.status).toBe(401);
    expect(r.body.error).toBe("Unauthorized");
  });
});

describe("lifecycle", () => {
  test("update renames, deactivates and reactivates", async () => {
    const t = await create();
    const renamed = await h.call("PUT", `/api/api-tokens/${t.id}`, { token: jwt, body: { token_name: "renamed" } });
    expect(renamed.status).toBe(200);
    expect(renamed.body.data.token_name).toBe("renamed");

    const off = await h.call("PUT", `/api/api-tokens/${t.id}`, { token: jwt, body: { is_active: false } });
    expect(off.body.data).toMatchObject({ is_active: false, status: "inactive" });
    const refused = await h.call("GET", "/api/api-token/auth/validate", { headers: { "x-api-token": t.token } });
    expect(refused.status).toBe(401);
    expect(refused.body).toEqual(INVALID);

    await h.call("PUT", `/api/api-tokens/${t.id}`, { token: jwt, body: { is_active: true } });
    const back = await h.call("GET", "/api/api-token/auth/validate", { headers: { "x-api-token": t.token } });
    expect(back.status).toBe(200);
  });

  test("every change by update is audited: a later or no expiry is `renewed`, an earlier one or a rename `updated`, the flag `activated`/`deactivated`", async () => {
    const in_ = (ms: number) => new Date(h.clock.now() + ms).toISOString();
    const put = async (body: Record<string, unknown>) => {
      const r = await h.call("PUT", `/api/api-tokens/${t.id}`, { token: jwt, body });
      expect(r.status).toBe(200);
      return r.body.data;
    };
    const t = await create({ expires_at: in_(60_000) });
    await put({ is_active: false });
    await put({ is_active: false }); // no change, no row
    await put({ is_active: true });
    await put({ token_name: "renamed" });
    await put({ expires_at: in_(30_000) }); // earlier: not a renewal
    expect(await auditActions(t.id)).toEqual(["updated", "updated", "activated", "deactivated", "created"]);

    // Expired and unused: reviving it by PUT is a renewal, after the expiry it ends.
    h.clock.advance(31_000);
    expect((await put({ expires_at: in_(3_600_000) })).status).toBe("active");
    expect((await h.call("GET", "/api/api-token/auth/validate", { headers: { "x-api-token": t.token } })).status).toBe(200);
    await put({ expires_at: null }); // never expires: later than any date
    await put({ expires_at: in_(600_000) }); // an expiry where there was none: earlier
    expect((await auditActions(t.id)).slice(0, 5)).toEqual(["updated", "renewed", "used", "renewed", "expired"]);

    await h.settle();
    const rows = (await h.call("GET", `/api/api-tokens/${t.id}/audit-logs`, { token: jwt })).body.data;
    expect(rows[0]).toMatchObject({ action: "updated", endpoint: `/api/api-tokens/${t.id}`, status_code: 200 });

    // A revoked token's expiry cannot be moved, as renew refuses it too.
    await h.call("POST", `/api/api-tokens/${t.id}/revoke`, { token: jwt });
    expect((await h.call("PUT", `/api/api-tokens/${t.id}`, { token: jwt, body: { expires_at: in_(7_200_000) } })).status).toBe(409);
  });

  test("renew of an expired token nobody used since writes `expired` before `renewed`", async () => {
    const t = await create({ expires_at: new Date(h.clock.now() + 1000).toISOString() });
    h.clock.advance(2000);
    const r = await h.call("POST", `/api/api-tokens/${t.id}/renew`, { token: jwt, body: { expires_at: new Date(h.clock.now() + 60_000).toISOString() } });
    expect(r.status).toBe(200);
    expect(await auditActions(t.id)).toEqual(["renewed", "expired", "created"]);
  });

  test("update rejects an empty body, unknown fields and wrong types", async () => {
    const t = await create();
    for (const body of [{}, { bogus: 1 }, { is_active: "yes" }, { token_name: "" }, { expires_at: 5 }]) {
      const r = await h.call("PUT", `/api/api-tokens/${t.id}`, { token: jwt, body });
      expect([400, 422]).toContain(r.status);
      expect(r.body.success).toBe(false);
    }
  });

  test("revoke kills the token for good and is audited", async () => {
    const t = await create();
    const r = await h.call("POST", `/api/api-tokens/${t.id}/revoke`, { token: jwt });
    expect(r.status).toBe(200);
    expect(r.body.data.status).toBe("revoked");
    const use = await h.call("GET", "/api/api-token/auth/validate", { headers: { "x-api-token": t.token } });
    expect(use.status).toBe(401);
    expect(use.body).toEqual(INVALID);
    const again = await h.call("PUT", `/api/api-tokens/${t.id}`, { token: jwt, body: { is_active: true } });
    expect(again.status).toBe(409);
    expect((await h.call("POST", `/api/api-tokens/${t.id}/renew`, { token: jwt, body: { expires_at: new Date(h.clock.now() + 1e9).toISOString() } })).status).toBe(409);
    expect((await h.call("POST", `/api/api-tokens/${t.id}/regenerate`, { token: jwt })).status).toBe(409);
    const actions = await auditActions(t.id);
    expect(actions).toContain("revoked");
    expect(actions[0]).toBe("used"); // the refused attempt is on record, newest first
  });

  test("expiry: the token stops working on time, `expired` is logged once, renew revives it", async () => {
    const t = await create({ expires_at: new Date(h.clock.now() + 60_000).toISOString() });
    expect((await h.call("GET", "/api/api-token/auth/validate", { headers: { "x-api-token": t.token } })).status).toBe(200);
    h.clock.advance(61_000);
    const first = await h.call("GET", "/api/api-token/auth/validate", { headers: { "x-api-token": t.token } });
    expect(first.status).toBe(401);
    expect(first.body).toEqual(INVALID);
    await h.call("GET", "/api/api-token/auth/validate", { headers: { "x-api-token": t.token } });
    let actions = await auditActions(t.id);
    expect(actions.filter((a) => a === "expired").length).toBe(1);

    const current = Date.parse((await h.call("GET", `/api/api-tokens/${t.id}`, { token: jwt })).body.data.expires_at);
    const earlier = await h.call("POST", `/api/api-tokens/${t.id}/renew`, { token: jwt, body: { expires_at: new Date(current - 1000).toISOString() } });
    expect(earlier.status).toBe(422);
    const notDate = await h.call("POST", `/api/api-tokens/${t.id}/renew`, { token: jwt, body: { expires_at: "soon" } });
    expect([400, 422]).toContain(notDate.status);
    const renewed = await h.call("POST", `/api/api-tokens/${t.id}/renew`, { token: jwt, body: { expires_at: new Date(h.clock.now() + 3_600_000).toISOString() } });
    expect(renewed.status).toBe(200);
    expect(renewed.body.data.status).toBe("active");
    expect((await h.call("GET", "/api/api-token/auth/validate", { headers: { "x-api-token": t.token } })).status).toBe(200);
    actions = await auditActions(t.id);
    expect(actions).toContain("renewed");
  });

  test("the expiry sweep logs `expired` for a token nobody used after its expiry", async () => {
    const t = await create({ expires_at: new Date(h.clock.now() + 1000).toISOString() });
    h.clock.advance(2000);
    h.services.tokens.sweepExpired();
    expect(await auditActions(t.id)).toEqual(["expired", "created"]);
    h.services.tokens.sweepExpired();
    expect(await auditActions(t.id)).toEqual(["expired", "created"]);
  });

  test("regenerate keeps id, name and history; the old secret dies at once", async () => {
    const t = await create({ token_name: "rotating" });
    await h.call("GET", "/api/api-token/auth/validate", { headers: { "x-api-token": t.token } });
    const r = await h.call("POST", `/api/api-tokens/${t.id}/regenerate`, { token: jwt });
    expect(r.status).toBe(200);
    expect(r.body.data.id).toBe(t.id);
    expect(r.body.data.token_name).toBe("rotating");
    expect(r.body.data.token).not.toBe(t.token);
    expect((await h.call("GET", "/api/api-token/auth/validate", { headers: { "x-api-token": t.token } })).status).toBe(401);
    const fresh = await h.call("GET", "/api/api-token/auth/validate", { headers: { "x-api-token": r.body.data.token } });
    expect(fresh.status).toBe(200);
    expect(fresh.body.apiTokenId).toBe(t.id);
    expect(await auditActions(t.id)).toEqual(["used", "regenerated", "used", "created"]);
  });

  test("delete removes the token and keeps its log", async () => {
    const t = await create();
    const r = await h.call("DELETE", `/api/api-tokens/${t.id}`, { token: jwt });
    expect(r.status).toBe(200);
    expect((await h.call("GET", `/api/api-tokens/${t.id}`, { token: jwt })).status).toBe(404);
    expect((await h.call("GET", "/api/api-token/auth/validate", { headers: { "x-api-token": t.token } })).status).toBe(401);
    expect(await auditActions(t.id)).toEqual(["used", "deleted", "created"]);
  });

  test("audit-logs honours limit and refuses absurd values", async () => {
    const t = await create();
    for (let i = 0; i < 5; i++) await h.call("GET", "/api/api-token/auth/validate", { headers: { "x-api-token": t.token } });
    await h.settle();
    const r = await h.call("GET", `/api/api-tokens/${t.id}/audit-logs?limit=3`, { token: jwt });
    expect(r.body.data.length).toBe(3);
    for (const bad of ["0", "-1", "abc", "1e9", "99999999999"]) {
      const x = await h.call("GET", `/api/api-tokens/${t.id}/audit-logs?limit=${bad}`, { token: jwt });
      expect(x.status).toBe(400);
      expect(x.body.error).toBe("ValidationError");
    }
  });

  test("audit-logs pages back to the oldest rows with page and pageSize (an addition), with the list's pagination", async () => {
    const t = await create();
    for (let i = 0; i < 5; i++) await h.call("GET", "/api/api-token/auth/validate", { headers: { "x-api-token": t.token } });
    await h.settle();
    const url = `/api/api-tokens/${t.id}/audit-logs`;
    const first = await h.call("GET", `${url}?limit=3`, { token: jwt });
    expect(first.body.data.map((e: { action: string }) => e.action)).toEqual(["used", "used", "used"]);
    expect(first.body.pagination).toEqual({ page: 1, pageSize: 3, total: 6 });
    expect((await h.call("GET", url, { token: jwt })).body.pagination).toEqual({ page: 1, pageSize: 100, total: 6 });
    const older = await h.call("GET", `${url}?page=2&pageSize=4`, { token: jwt });
    expect(older.status).toBe(200);
    expect(older.body.data.map((e: { action: string }) => e.action)).toEqual(["used", "created"]);
    expect(older.body.pagination).toEqual({ page: 2, pageSize: 4, total: 6 });
    for (const bad of ["page=0", "pageSize=0", "pageSize=201", "page=x"]) {
      expect((await h.call("GET", `${url}?${bad}`, { token: jwt })).status).toBe(400);
    }
  });

  test("a burst of uses loses no audit row", async () => {
    const t = await create();
    await Promise.all(Array.from({ length: 200 }, () => h.call("GET", "/api/products", { headers: { "x-api-token": t.token } })));
    await h.settle();
    const r = await h.call("GET", `/api/api-tokens/${t.id}/audit-logs?limit=1000`, { token: jwt });
    expect(r.body.data.filter((e: { action: string }) => e.action === "used").length).toBe(200);
  });

  test("each response leaves only once its `used` row is written, also when a burst's rows share one write", async () => {
    const t = await create();
    const db = new Database(join(h.dataDir, "hearth.db"), { readonly: true });
    try {
      // Rows are in the journal or, once folded, in the table: counted at one instant, after the last answer.
      const written = () =>
        readFileSync(join(h.dataDir, "token-uses.journal"), "utf8").split("\n").filter((l) => l.includes(t.id)).length +
        (db.query("SELECT count(*) AS n FROM api_token_audit_logs WHERE token_id = ? AND action = 'used'").get(t.id) as { n: number }).n;
      const answers = await Promise.all(Array.from({ length: 20 }, () => h.call("GET", "/api/products", { headers: { "x-api-token": t.token } })));
      expect(answers.every((a) => a.status === 200)).toBe(true);
      expect(written()).toBe(20);
    } finally {
      db.close();
    }
  });
});

describe("storage", () => {
  test("the raw token appears nowhere in the database files", async () => {
    const t = await create({ token_name: "needle" });
    await h.call("GET", "/api/api-token/auth/validate", { headers: { "x-api-token": t.token } });
    await h.settle();
    h.services.storage.sqlite.exec("PRAGMA wal_checkpoint(TRUNCATE)");
    for (const f of ["hearth.db", "hearth.db-wal"]) {
      let bytes: Buffer;
      try {
        bytes = readFileSync(join(h.dataDir, f));
      } catch {
        continue;
      }
      expect(bytes.includes(Buffer.from(t.token))).toBe(false);
      expect(bytes.includes(Buffer.from(t.token.slice(12)))).toBe(false);
    }
  });
});
