// The OpenAPI document covers every route with schemas and both auth schemes; the explorer's
// assets come from Hearth itself.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHarness, type Harness } from "../support/harness";

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(() => h.close());

describe("openapi", () => {
  test("every API route is documented, with responses and security schemes", async () => {
    const doc = (await h.call("GET", "/openapi.json")).body;
    expect(doc.openapi).toMatch(/^3\./);
    expect(Object.keys(doc.components.securitySchemes).sort()).toEqual(["apiToken", "apiTokenBearer", "session"]);
    expect(doc.components.securitySchemes.apiToken).toMatchObject({ type: "apiKey", in: "header", name: "X-API-Token" });

    const routes = h.app.routes.filter((r) => r.path.startsWith("/api/") || r.path === "/health" || r.path === "/mcp");
    expect(routes.length).toBeGreaterThan(20);
    for (const r of routes) {
      const path = r.path.replace(/:(\w+)/g, "{$1}");
      const op = doc.paths[path]?.[r.method.toLowerCase()];
      expect({ route: `${r.method} ${path}`, documented: Boolean(op) }).toEqual({ route: `${r.method} ${path}`, documented: true });
      expect(Object.keys(op.responses).length).toBeGreaterThan(0);
      // A success too, streams and files included (before: chat, transcription, execution events
      // and MCP listed only their errors, a download no content).
      const success = Object.entries(op.responses as Record<string, { content?: object }>).filter(([code]) => code.startsWith("2"));
      expect({ route: `${r.method} ${path}`, success: success.length > 0 }).toEqual({ route: `${r.method} ${path}`, success: true });
    }
    expect(Object.keys(doc.paths["/api/assistant/chat"].post.responses["200"].content)).toEqual(["text/event-stream"]);
    expect(Object.keys(doc.paths["/api/audio/transcriptions"].post.responses["200"].content)).toEqual(["application/json", "text/plain", "application/x-subrip", "text/vtt"]);
    expect(doc.paths["/api/workflow/{id}/events"].get.responses["404"].content["application/json"].schema.properties.success).toBeDefined();
    const create = doc.paths["/api/api-tokens"].post;
    expect(create.requestBody.content["application/json"].schema.required).toEqual(expect.arrayContaining(["product_id", "token_name"]));
    expect(Object.keys(create.responses)).toEqual(expect.arrayContaining(["201", "401", "422"]));
    expect(create.security).toEqual([{ session: [] }]);
  });

  test("the explorer page loads only local assets", async () => {
    const page = await h.call("GET", "/docs");
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toContain("text/html");
    const urls = [...page.text.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    expect(urls.length).toBeGreaterThanOrEqual(2);
    for (const u of urls) expect(u.startsWith("/")).toBe(true);
    expect(page.text).not.toMatch(/https?:\/\/(?!127\.0\.0\.1|localhost)[a-z]/i);
    for (const u of urls) {
      const asset = await h.app.handle(new Request(`http://hearth.test${u}`));
      expect(asset.status).toBe(200);
      expect((await asset.arrayBuffer()).byteLength).toBeGreaterThan(10_000);
    }
  });
});
