// How Hearth serves the web console: the page at / and at console paths (single-page app) with a
// strict CSP, hashed assets cached for good, and every API, explorer and health path untouched.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHarness, type Harness } from "../support/harness";

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(() => h.close());

describe("console page", () => {
  test("/ answers the console's HTML with a CSP that allows no inline script and nothing from elsewhere", async () => {
    const r = await h.call("GET", "/");
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toContain("text/html");
    expect(r.text).toContain('<div id="app">');
    const csp = r.headers.get("content-security-policy") ?? "";
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain("unsafe-inline");
    expect(csp).not.toContain("unsafe-eval");
    // No inline script: every <script> has a src under /assets/ with a content hash in its name.
    const scripts = [...r.text.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts.length).toBeGreaterThan(0);
    for (const [, attrs, body] of scripts) {
      expect(attrs).toMatch(/src="\/assets\/[\w-]+-[a-z0-9]{8}\.js"/);
      expect(body!.trim()).toBe("");
    }
    expect(r.text).not.toMatch(/https?:\/\//);
  });

  test("hashed assets are served with a year-long immutable cache; unknown ones are a JSON 404", async () => {
    const page = await h.call("GET", "/");
    const names = [...page.text.matchAll(/(?:src|href)="\/assets\/([^"]+)"/g)].map((m) => m[1]!);
    expect(names.some((n) => n.endsWith(".js"))).toBe(true);
    expect(names.some((n) => n.endsWith(".css"))).toBe(true);
    for (const name of names) {
      const r = await h.call("GET", `/assets/${name}`);
      expect(r.status).toBe(200);
      expect(r.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
      expect(r.headers.get("content-type")).toMatch(name.endsWith(".js") ? /javascript/ : /text\/css/);
    }
    const missing = await h.call("GET", "/assets/nope-12345678.js");
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ success: false, error: "NotFound", message: "No such endpoint; see /docs for the API" });
  });

  test("console paths (deep links, reloads) answer the same page", async () => {
    for (const path of ["/knowledge", "/w/123/tokens", "/workflows/abc/runs"]) {
      const r = await h.call("GET", path);
      expect(r.status).toBe(200);
      expect(r.text).toContain('<div id="app">');
      expect(r.headers.get("content-security-policy")).toContain("script-src 'self'");
    }
  });
});

describe("the API is untouched", () => {
  test("unknown /api paths keep the JSON 404, for every method", async () => {
    for (const [method, path] of [["GET", "/api/nope"], ["GET", "/api"], ["POST", "/api/nope"], ["GET", "/mcp/x"], ["DELETE", "/nope"]] as const) {
      const r = await h.call(method, path);
      expect(r.status).toBe(404);
      expect(r.body).toEqual({ success: false, error: "NotFound", message: "No such endpoint; see /docs for the API" });
    }
  });

  test("/health, /openapi.json and /docs still answer as before, and the console is not in the OpenAPI document", async () => {
    const health = await h.call("GET", "/health");
    expect(health.status).toBe(200);
    expect(health.body.status).toBeDefined();
    const doc = await h.call("GET", "/openapi.json");
    expect(doc.status).toBe(200);
    expect(Object.keys(doc.body.paths)).not.toContain("/");
    expect(Object.keys(doc.body.paths).some((p) => p.startsWith("/assets") || p.includes("*"))).toBe(false);
    const docs = await h.call("GET", "/docs");
    expect(docs.status).toBe(200);
    expect(docs.text).toContain("swagger");
    const jwt = await h.login();
    const me = await h.call("GET", "/api/auth/me", { token: jwt });
    expect(me.status).toBe(200);
    const missingFile = await h.call("GET", "/api/knowledge-base/storage/file/00000000-0000-4000-8000-000000000000", { token: jwt });
    expect(missingFile.status).toBe(404);
    expect(missingFile.body.success).toBe(false);
  });
});
