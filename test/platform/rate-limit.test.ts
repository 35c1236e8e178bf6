// Per-caller budgets: default and strict classes, headers, 429 with Retry-After, exact counting.
import { afterEach, describe, expect, test } from "bun:test";
import { createHarness, defaultWorkspaceId, type Harness } from "../support/harness";
import { createRateLimiter } from "../../src/platform/rate-limit";
import { manualClock } from "../../src/platform/clock";

let h: Harness | undefined;
afterEach(() => h?.close());

async function withToken(env: Record<string, string>) {
  h = await createHarness({ HEARTH_RATE_LIMIT: "10", HEARTH_RATE_LIMIT_STRICT: "5", ...env });
  // Login is limited per address; the harness has no address, so log in before counting.
  const jwt = await h.login();
  const ws = await defaultWorkspaceId(h, jwt);
  const t = await h.call("POST", "/api/api-tokens", { token: jwt, body: { product_id: ws, token_name: "rl" } });
  return { h, jwt, token: t.body.data.token as string };
}

describe("rate limits", () => {
  test("fifty concurrent requests on a fresh 10/min budget let exactly ten through", async () => {
    const { h, token } = await withToken({});
    const replies = await Promise.all(Array.from({ length: 50 }, () => h.call("GET", "/api/products", { headers: { "x-api-token": token } })));
    const ok = replies.filter((r) => r.status === 200);
    const limited = replies.filter((r) => r.status === 429);
    expect(ok.length).toBe(10);
    expect(limited.length).toBe(40);
    const r = limited[0]!;
    expect(r.body).toMatchObject({ success: false, error: "TooManyRequests" });
    expect(Number(r.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(r.headers.get("ratelimit-limit")).toBe("10");
    expect(r.headers.get("ratelimit-remaining")).toBe("0");
    expect(Number(r.headers.get("ratelimit-reset"))).toBeLessThanOrEqual(60);
    const remaining = ok.map((x) => Number(x.headers.get("ratelimit-remaining"))).sort((a, b) => a - b);
    expect(remaining).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });

  test("the budget comes back after the window", async () => {
    const { h, token } = await withToken({ HEARTH_RATE_LIMIT: "2" });
    for (let i = 0; i < 2; i++) expect((await h.call("GET", "/api/products", { headers: { "x-api-token": token } })).status).toBe(200);
    expect((await h.call("GET", "/api/products", { headers: { "x-api-token": token } })).status).toBe(429);
    h.clock.advance(60_000);
    expect((await h.call("GET", "/api/products", { headers: { "x-api-token": token } })).status).toBe(200);
  });

  test("budgets are per caller: one token's flood does not starve another or the user", async () => {
    const { h, jwt, token } = await withToken({ HEARTH_RATE_LIMIT: "5" });
    const ws = await defaultWorkspaceId(h, jwt);
    const second = (await h.call("POST", "/api/api-tokens", { token: jwt, body: { product_id: ws, token_name: "b" } })).body.data.token;
    for (let i = 0; i < 8; i++) await h.call("GET", "/api/products", { headers: { "x-api-token": token } });
    expect((await h.call("GET", "/api/products", { headers: { "x-api-token": token } })).status).toBe(429);
    expect((await h.call("GET", "/api/products", { headers: { "x-api-token": second } })).status).toBe(200);
    expect((await h.call("GET", "/api/auth/me", { token: jwt })).status).toBe(200);
  });

  test("/health, /docs and /openapi.json are not limited", async () => {
    h = await createHarness({ HEARTH_RATE_LIMIT: "1" });
    for (let i = 0; i < 5; i++) {
      for (const p of ["/health", "/openapi.json", "/docs"]) {
        const r = await h!.call("GET", p);
        expect(r.status).toBe(200);
        expect(r.headers.get("ratelimit-limit")).toBeNull();
      }
    }
  });

  test("login is limited per client address", async () => {
    h = await createHarness({ HEARTH_RATE_LIMIT: "3" });
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await h.call("POST", "/api/auth/login", { body: { email: "x@y.test", password: "bad" } })).status);
    expect(statuses).toEqual([401, 401, 401, 429, 429]);
  });
});

describe("limiter", () => {
  test("the strict class has its own, smaller budget", () => {
    const clock = manualClock();
    const l = createRateLimiter({ default: 10, strict: 5 }, clock);
    const strict = Array.from({ length: 7 }, () => l.hit("k", "strict").allowed);
    expect(strict).toEqual([true, true, true, true, true, false, false]);
    expect(l.hit("k", "default").allowed).toBe(true);
    expect(l.hit("k", "strict").reset).toBe(60);
    clock.advance(30_000);
    expect(l.hit("k", "strict").reset).toBe(30);
  });
});
