// Bad input of every kind gets the envelope of DESIGN.md with a 4xx, never a 500 or a stack.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { listenOptions } from "../../src/app";
import { silentLogger } from "../../src/platform/log";
import { createHarness, defaultWorkspaceId, type Harness } from "../support/harness";

let h: Harness;
let jwt: string;
let ws: string;

beforeAll(async () => {
  h = await createHarness();
  jwt = await h.login();
  ws = await defaultWorkspaceId(h, jwt);
});
afterAll(() => h.close());

const expectError = (r: { status: number; body: any; text: string }, status: number | number[], code?: string) => {
  expect(Array.isArray(status) ? status : [status]).toContain(r.status);
  expect(r.body.success).toBe(false);
  expect(typeof r.body.message).toBe("string");
  if (code) expect(r.body.error).toBe(code);
  expect(r.text).not.toMatch(/at .*\.ts:\d+|node_modules|stack/i);
};

describe("routing", () => {
  // A GET of an unknown path outside /api, /mcp, /docs and /health is a console page (single-page
  // app, test/console/serving.test.ts); everything else unknown is the JSON 404.
  test("unknown routes are JSON 404", async () => {
    for (const [m, p] of [["GET", "/api/nope"], ["PUT", "/nope"], ["POST", "/api/unknown"], ["DELETE", "/health"], ["GET", "/api/api-tokens"]]) {
      const r = await h.call(m!, p!, { token: jwt });
      expectError(r, 404, "NotFound");
      expect(r.headers.get("content-type")).toContain("application/json");
    }
  });

  test("every response carries a request id: answers, errors of every stage, pages and files", async () => {
    const r = await h.call("GET", "/health");
    expect(r.headers.get("x-request-id")).toBeString();
    const echoed = await h.call("GET", "/health", { headers: { "x-request-id": "abc-123" } });
    expect(echoed.headers.get("x-request-id")).toBe("abc-123");
    // Not a usable id (too long, or characters a log line should not carry): a fresh one.
    const refused = await h.call("GET", "/health", { headers: { "x-request-id": "a b\u0007c" } });
    expect(refused.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);

    const token = (await h.call("POST", "/api/api-tokens", { token: jwt, body: { product_id: ws, token_name: "request ids" } })).body.data.token;
    const cases: [string, string, Record<string, string>, number, string?][] = [
      ["GET", "/api/api-token/auth/validate", { "x-api-token": token }, 200],
      ["GET", `/api/products/${ws}`, { authorization: `Bearer ${jwt}` }, 200],
      ["GET", "/api/api-token/auth/validate", { "x-api-token": "svc_not_a_token" }, 401],
      ["GET", "/api/products/not-a-uuid", { authorization: `Bearer ${jwt}` }, 400],
      ["GET", "/api/nope", {}, 404],
      ["POST", "/api/products", { authorization: `Bearer ${jwt}`, "content-type": "application/json" }, 400, "{"],
      ["POST", "/api/products", { "content-type": "application/json", "content-length": String(200 * 1024 * 1024) }, 413, "{}"],
      ["GET", "/docs", {}, 200],
      ["GET", "/openapi.json", {}, 200],
      ["GET", "/docs/assets/swagger-ui.css", {}, 200],
    ];
    const ids = new Set<string>();
    for (const [method, path, headers, status, body] of cases) {
      const res = await h.app.handle(new Request(`http://hearth.test${path}`, { method, headers, body }));
      expect({ path, status: res.status }).toEqual({ path, status });
      const id = res.headers.get("x-request-id");
      expect({ path, id: typeof id }).toEqual({ path, id: "string" });
      ids.add(id!);
      await res.arrayBuffer();
    }
    expect(ids.size).toBe(cases.length);
  });
});

describe("the server's own options", () => {
  test("what escapes the error handler is a JSON 500 without a stack; the port is not shared", async () => {
    const options = listenOptions("127.0.0.1", 0, silentLogger);
    expect(options).toMatchObject({ development: false, reusePort: false });
    const server = Bun.serve({
      ...options,
      fetch() {
        throw new Error("leaked at /srv/hearth/src/secret.ts:12");
      },
    });
    try {
      const r = await fetch(`http://127.0.0.1:${server.port}/x`);
      expect(r.status).toBe(500);
      const text = await r.text();
      expect(JSON.parse(text)).toEqual({ success: false, error: "InternalError", message: expect.any(String) });
      expect(text).not.toMatch(/leaked|secret\.ts|stack/);
      // A second listener on the same port is refused instead of sharing it.
      expect(() => Bun.serve({ ...listenOptions("127.0.0.1", server.port!, silentLogger), fetch: () => new Response("other") })).toThrow();
    } finally {
      server.stop(true);
    }
  });
});

describe("bodies", () => {
  const post = (raw: string | Uint8Array, contentType = "application/json") =>
    h.call("POST", "/api/products", { token: jwt, raw, headers: { "content-type": contentType } });

  test("malformed JSON is 400", async () => {
    for (const raw of ["{", "{'a':1}", "nul", "[1,2", '{"name": "x",}']) expectError(await post(raw), 400, "ValidationError");
  });

  test("an empty body is 400 and invalid UTF-8 is 400", async () => {
    expectError(await post(""), [400, 422], "ValidationError");
    expectError(await post(new Uint8Array([0x7b, 0xff, 0xfe, 0x7d])), 400, "ValidationError");
  });

  test("wrong types, missing and unknown fields are 422 with details", async () => {
    for (const body of [{ name: 42 }, {}, { name: "x", extra: true }, [], "str", 7, null, { name: "x".repeat(201) }]) {
      const r = await post(JSON.stringify(body));
      expectError(r, [400, 422], "ValidationError");
    }
    const r = await post(JSON.stringify({ name: 42 }));
    expect(r.status).toBe(422);
    expect(Array.isArray(r.body.details)).toBe(true);
    expect(r.body.message).toContain("name");
  });

  test("bodies nested deeper than a sane depth are refused without a crash", async () => {
    for (const depth of [65, 10_000, 200_000]) {
      const raw = "[".repeat(depth) + "]".repeat(depth);
      expectError(await post(raw), 400, "ValidationError");
    }
    expectError(await post('{"a":'.repeat(100) + "1" + "}".repeat(100)), 400, "ValidationError");
    // A million levels is also over the size cap; either refusal is fine, a crash is not.
    expectError(await post('{"a":'.repeat(1_000_000) + "1" + "}".repeat(1_000_000)), [400, 413]);
    // Brackets inside strings do not count.
    const ok = await post(JSON.stringify({ name: "[".repeat(5000) }));
    expect(ok.status).toBe(422); // too long a name, but parsed fine
  });

  test("bodies over the limit are JSON 413, with or without Content-Length", async () => {
    const big = JSON.stringify({ name: "x", description: "y".repeat(2 * 1024 * 1024) });
    expectError(await post(big), 413, "PayloadTooLarge");
    const stream = new ReadableStream({
      start(c) {
        for (let i = 0; i < 40; i++) c.enqueue(new Uint8Array(64 * 1024).fill(32));
        c.close();
      },
    });
    const r = await h.app.handle(
      new Request("http://hearth.test/api/products", { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${jwt}` }, body: stream, duplex: "half" } as RequestInit),
    );
    expect(r.status).toBe(413);
    expect(((await r.json()) as { error: string }).error).toBe("PayloadTooLarge");
    const huge = await h.app.handle(
      new Request("http://hearth.test/api/products", { method: "POST", headers: { "content-type": "application/json", "content-length": String(200 * 1024 * 1024) }, body: "{}" }),
    );
    expect(huge.status).toBe(413);
  });

  test("a body in another content type is refused cleanly", async () => {
    expectError(await post("name=x", "application/x-www-form-urlencoded"), [400, 415, 422]);
    expectError(await post("hello", "text/plain"), [400, 415, 422]);
  });
});

describe("ids and queries", () => {
  test("non-UUID ids are 400", async () => {
    for (const id of ["1", "abc", "00000000-0000-0000-0000-00000000000g", "%00", "' OR 1=1 --"]) {
      expectError(await h.call("GET", `/api/products/${encodeURIComponent(id)}`, { token: jwt }), 400, "ValidationError");
      expectError(await h.call("GET", `/api/api-tokens/${encodeURIComponent(id)}`, { token: jwt }), 400, "ValidationError");
    }
  });

  test("absurd pagination values are 400, naming the key and what it must be", async () => {
    const must = { page: "page must be an integer from 1 to 1000000", pageSize: "pageSize must be an integer from 1 to 200", limit: "limit must be an integer from 1 to 1000" };
    for (const q of ["page=0", "page=-5", "pageSize=0", "pageSize=100000", "page=abc", "limit=1e99", "pageSize=1.5", "page=99999999999"]) {
      const r = await h.call("GET", `/api/products?${q}`, { token: jwt });
      expectError(r, 400, "ValidationError");
      // Out of range or not a number at all: the same sentence (Elysia forgets the key of the first).
      expect(r.body.message).toEndWith(must[q.split("=")[0] as keyof typeof must]);
    }
    const ok = await h.call("GET", "/api/products?page=2&pageSize=1", { token: jwt });
    expect(ok.status).toBe(200);
    expect(ok.body.pagination).toEqual({ page: 2, pageSize: 1, total: expect.any(Number) });
    const lim = await h.call("GET", "/api/products?limit=1", { token: jwt });
    expect(lim.body.data.length).toBe(1);
  });

  test("limit caps a page wherever it is given, and every list takes page, pageSize and limit", async () => {
    for (const name of ["p1", "p2", "p3"]) await h.call("POST", "/api/products", { token: jwt, body: { name } });
    const all = (await h.call("GET", "/api/products?pageSize=200", { token: jwt })).body.data.map((w: { id: string }) => w.id);
    // Before: limit beside page was ignored (50 items for limit=2).
    const second = await h.call("GET", "/api/products?limit=2&page=2", { token: jwt });
    expect(second.body.data.map((w: { id: string }) => w.id)).toEqual(all.slice(2, 4));
    expect(second.body.pagination).toMatchObject({ page: 2, pageSize: 2 });
    expect((await h.call("GET", "/api/products?limit=1&pageSize=3", { token: jwt })).body.data).toHaveLength(1);
    // Before: the triggers list refused limit (400) and the knowledge bases' list ignored it.
    for (const name of ["kb1", "kb2"]) await h.call("POST", "/api/knowledge-base", { token: jwt, body: { product_id: ws, name } });
    const bases = await h.call("GET", `/api/knowledge-base/${ws}?limit=1`, { token: jwt });
    expect([bases.status, bases.body.data.length, bases.body.pagination.total >= 3]).toEqual([200, 1, true]);
    const whole = await h.call("GET", `/api/knowledge-base/${ws}`, { token: jwt });
    expect(whole.body.data.length).toBe(whole.body.pagination.total);
    const triggers = await h.call("GET", `/api/agent-base/triggers?product_id=${ws}&limit=5&page=1`, { token: jwt });
    expect([triggers.status, triggers.body.pagination?.pageSize]).toEqual([200, 5]);
  });

  test("unknown enum values are refused", async () => {
    const r = await h.call("POST", "/api/api-tokens", { token: jwt, body: { product_id: ws, token_name: "x", role: "ROOT" } });
    expectError(r, 422, "ValidationError");
    expect(r.body.message).toBe("Invalid body: role must be one of: USER, SYSTEM");
  });

  test("a bad field is named with what it must be, in words, without its value", async () => {
    const search = (body: object) => h.call("POST", "/api/knowledge-base/embeddings", { token: jwt, body: { query: "x", product_id: ws, ...body } });
    const cases: [Promise<{ status: number; body: any; text: string }>, string][] = [
      [search({ top_k: 1e9 }), "top_k must be an integer from 1 to 100"],
      [search({ top_k: "many" }), "top_k must be an integer from 1 to 100"],
      [search({ mode: "magic" }), "mode must be one of: vector, hybrid, keyword"],
      [search({ knowledge_base_ids: ["kb-1"] }), "knowledge_base_ids.0 must be a UUID"],
      [h.call("POST", "/api/products", { token: jwt, body: {} }), "name is required"],
      [h.call("POST", "/api/products", { token: jwt, body: { name: 4242 } }), "name must be a string of 1 to 200 characters"],
      [h.call("PUT", `/api/products/${ws}`, { token: jwt, body: { description: 4242 } }), "description must be a string of at most 2000 characters, or null"],
      [h.call("POST", "/api/api-tokens", { token: jwt, body: { product_id: ws, token_name: "x", expires_at: "tomorrow" } }), "expires_at must be a date and time in ISO 8601"],
    ];
    for (const [reply, message] of cases) {
      const r = await reply;
      expectError(r, 422, "ValidationError");
      expect(r.body.message).toStartWith(`Invalid body: ${message}`);
      expect(r.body.details[0].message).toStartWith(message);
      expect(r.text).not.toMatch(/4242|magic|many|tomorrow|kb-1|1000000000|union|UnionEnum/);
    }
    const id = await h.call("GET", "/api/products/abc", { token: jwt });
    expect(id.body.message).toBe("Invalid params: id must be a UUID");
  });
});
