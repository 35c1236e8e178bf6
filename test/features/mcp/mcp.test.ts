// The MCP gateway through the SDK's own Client and StreamableHTTPClientTransport, in-process (the
// transport's fetch is app.handle): every platform tool, USER vs SYSTEM, first-call injection,
// list_changed, 401s, Origin refusal, the rate limit, audit rows, sessions ending with their token.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { BASE, createHarness, defaultWorkspaceId, type Harness } from "../../support/harness";
import { startOllamaFake, type OllamaFake } from "../../support/ollama-fake";
import { SESSION_IDLE_MS } from "../../../src/features/mcp/gateway";

let h: Harness;
let fake: OllamaFake;
let jwt: string;
let ws: string;
let userToken: string;
let systemToken: string;

const connect = async (token: string, header: "bearer" | "x-api-token" = "bearer") => {
  const headers: Record<string, string> = header === "bearer" ? { authorization: `Bearer ${token}` } : { "x-api-token": token };
  const transport = new StreamableHTTPClientTransport(new URL(`${BASE}/mcp`), { requestInit: { headers }, fetch: (input, init) => h.app.handle(new Request(String(input), init)) });
  const client = new Client({ name: "test-ide", version: "1.0.0" });
  await client.connect(transport);
  return client;
};
const text = (r: any) => r.content.map((c: any) => c.text).join("\n");
/** One JSON-RPC request on an open session, as a raw POST; the JSON-RPC answer (read from the SSE body). */
const rpc = async (token: string, sid: string, message: Record<string, unknown>) => {
  const r = await h.app.handle(new Request(`${BASE}/mcp`, { method: "POST", headers: { authorization: `Bearer ${token}`, "mcp-session-id": sid, "mcp-protocol-version": "2025-06-18", "content-type": "application/json", accept: "application/json, text/event-stream" }, body: JSON.stringify({ jsonrpc: "2.0", id: 7, ...message }) }));
  const body = await r.text();
  const data = body.split("\n").find((l) => l.startsWith("data: "));
  return JSON.parse(data ? data.slice(6) : body) as { result?: any; error?: { code: number; message: string } };
};

beforeAll(async () => {
  fake = startOllamaFake({ respond: () => "The backups run nightly [1]." });
  h = await createHarness({ HEARTH_OLLAMA_URL: fake.url, HEARTH_RATE_LIMIT: "40", HEARTH_RATE_LIMIT_STRICT: "20" });
  jwt = await h.login();
  ws = await defaultWorkspaceId(h, jwt);
  h.services.start();
  userToken = (await h.call("POST", "/api/api-tokens", { token: jwt, body: { product_id: ws, token_name: "ide" } })).body.data.token;
  systemToken = (await h.call("POST", "/api/api-tokens", { token: jwt, body: { product_id: ws, token_name: "admin-ide", role: "SYSTEM" } })).body.data.token;
  const md = new FormData();
  md.append("file", new File(["# Backups\n\nThe backup command runs every night at 02:00.\n\n# Deploys\n\nDeploys happen on Tuesdays after the review.\n"], "handbook.md"));
  md.append("product_id", ws);
  await h.call("POST", "/api/knowledge-base/storage/upload", { token: jwt, raw: md });
  await h.services.jobs.idle();
  await h.call("POST", "/api/agent-base/install", { token: jwt, body: { product_id: ws, template: "knowledge-assistant", name: "Handbook helper" } });
  await h.call("POST", "/api/agent-base/install", { token: jwt, body: { product_id: ws, template: "meeting-notes", name: "Minutes writer" } });
});
afterAll(async () => {
  await h.close();
  await fake.stop();
});

describe("tools", () => {
  test("a USER token sees the platform and registry tools, not the SYSTEM ones", async () => {
    const c = await connect(userToken);
    const names = (await c.listTools()).tools.map((t) => t.name);
    for (const n of ["get_my_profile", "get_workspace_info", "update_my_ai_preferences", "search_knowledge", "list_agents", "invoke_agent", "invoke_workflow", "http_get"]) expect(names).toContain(n);
    expect(names).not.toContain("update_mcp_settings");
    const refused = await c.callTool({ name: "get_mcp_settings", arguments: {} }).catch((e) => e);
    expect(String(refused.message)).toMatch(/SYSTEM/);
    await c.close();
  });

  test("search_knowledge returns cited passages as text and structured content; the first call carries the README and profile, later ones do not", async () => {
    const c = await connect(userToken, "x-api-token");
    const first = await c.callTool({ name: "search_knowledge", arguments: { query: "when do backups run", top_k: 3 } });
    expect(text(first)).toContain("handbook.md");
    expect((first.structuredContent as any).results[0]).toMatchObject({ file_name: "handbook.md", index: 1 });
    expect(text(first)).toContain("About this workspace");
    expect(text(first)).toContain("Handbook helper");
    expect(text(first)).toContain("Your profile");
    const second = await c.callTool({ name: "search_knowledge", arguments: { query: "deploys" } });
    expect(text(second)).not.toContain("About this workspace");
    const bad = await c.callTool({ name: "search_knowledge", arguments: { top_k: 3 } });
    expect(bad.isError).toBe(true);
    expect(text(bad)).toMatch(/query/);
    await c.close();
  });

  test("malformed tools/call params answer -32602 Invalid params with a readable reason", async () => {
    const c = await connect(userToken);
    const sid = (c as any)._transport.sessionId as string;
    const none = await rpc(userToken, sid, { method: "tools/call", params: {} });
    expect(none.error?.code).toBe(-32602);
    expect(none.error?.message).toEndWith("Invalid params of tools/call: params.name is required (a tool's name, from tools/list)");
    const list = await rpc(userToken, sid, { method: "tools/call", params: { name: "list_agents", arguments: [1, 2] } });
    expect(list.error?.code).toBe(-32602);
    expect(list.error?.message).toEndWith("Invalid params of tools/call: params.arguments must be an object (the tool's arguments by name)");
    const fine = await rpc(userToken, sid, { method: "tools/call", params: { name: "list_agents", arguments: {} } });
    expect(fine.result?.content[0].text).toContain("Handbook helper");
    await c.close();
  });

  test("profile, workspace README and AI preferences", async () => {
    const c = await connect(userToken);
    const p = (await c.callTool({ name: "get_my_profile", arguments: {} })).structuredContent as any;
    expect(p.token).toMatchObject({ name: "ide", role: "USER" });
    expect(p.workspace.id).toBe(ws);
    expect(JSON.stringify(p)).not.toContain(userToken);
    const info = await c.callTool({ name: "get_workspace_info", arguments: {} });
    expect(text(info)).toContain("## Knowledge bases");
    expect(text(info)).toContain("Minutes writer");
    await c.callTool({ name: "update_my_ai_preferences", arguments: { language: "German", tone: "concise" } });
    const again = (await c.callTool({ name: "get_my_profile", arguments: {} })).structuredContent as any;
    expect(again.ai_preferences).toEqual({ language: "German", tone: "concise" });
    await c.close();
  });

  test("invoke_agent picks the agent whose description fits, reports progress, and returns the answer with its execution id", async () => {
    const c = await connect(userToken);
    const agents = (await c.callTool({ name: "list_agents", arguments: {} })).structuredContent as any;
    expect(agents.agents.map((a: any) => a.name).sort()).toEqual(["Handbook helper", "Minutes writer"]);
    const progress: unknown[] = [];
    const r = await c.callTool({ name: "invoke_agent", arguments: { query: "answer from our documents: when do the backups run?" } }, undefined, { onprogress: (p) => void progress.push(p) });
    const data = r.structuredContent as any;
    expect(r.isError, text(r)).toBeFalsy();
    expect(data.agent_name).toBe("Handbook helper");
    expect(data.status).toBe("succeeded");
    expect(text(r)).toContain("nightly");
    expect(text(r)).toContain(data.execution_id);
    expect(progress.length).toBeGreaterThan(0);
    const ex = (await h.call("GET", `/api/agent-base/${data.agent_id}/executions`, { token: jwt })).body.data[0];
    expect(ex.trigger.type).toBe("mcp");
    // The preference set above reached the agent's system prompt.
    expect(fake.requests.at(-1)!.messages[0]!.content).toContain("German");
    await c.close();
  });

  test("SYSTEM tokens manage MCP settings; a disabled tool disappears and open sessions hear list_changed", async () => {
    const admin = await connect(systemToken);
    const user = await connect(userToken);
    let changed = 0;
    user.setNotificationHandler(ToolListChangedNotificationSchema, () => void changed++);
    const s = await admin.callTool({ name: "update_mcp_settings", arguments: { disabled_tools: ["http_get"], default_top_k: 2 } });
    expect(s.isError).toBeFalsy();
    expect((await user.listTools()).tools.map((t) => t.name)).not.toContain("http_get");
    for (let i = 0; i < 50 && changed === 0; i++) await Bun.sleep(10);
    expect(changed).toBeGreaterThan(0);
    const r = await user.callTool({ name: "search_knowledge", arguments: { query: "backups deploys" } });
    expect((r.structuredContent as any).results.length).toBeLessThanOrEqual(2);
    await admin.callTool({ name: "update_mcp_settings", arguments: { disabled_tools: [], default_top_k: 5 } });
    await admin.close();
    await user.close();
  });
});

describe("auth, origin, limits, audit", () => {
  const post = (headers: Record<string, string>) =>
    h.app.handle(new Request(`${BASE}/mcp`, { method: "POST", headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "x", version: "1" } } }) }));

  test("no token, a bad one, a JWT: 401 with the spec's body before any MCP processing", async () => {
    const none = await post({});
    expect(none.status).toBe(401);
    const bad = await post({ authorization: "Bearer svc_notarealtokenatallnotarealtoken12" });
    expect(bad.status).toBe(401);
    expect(await bad.json()).toEqual({ success: false, error: "Unauthorized", message: "Invalid API token" });
    expect((await post({ authorization: `Bearer ${jwt}` })).status).toBe(401);
  });

  test("a page of another site is refused; Hearth's own origin is not", async () => {
    expect((await post({ authorization: `Bearer ${userToken}`, origin: "http://evil.example" })).status).toBe(403);
    expect((await post({ authorization: `Bearer ${userToken}`, origin: "http://127.0.0.1:3000" })).status).toBe(200);
  });

  test("every tools/call is in the token's audit log with the tool's name; over the budget a JSON-RPC error says when to retry", async () => {
    const t = (await h.call("POST", "/api/api-tokens", { token: jwt, body: { product_id: ws, token_name: "limited" } })).body.data;
    const c = await connect(t.token);
    await c.callTool({ name: "list_agents", arguments: {} });
    await h.settle();
    const log = (await h.call("GET", `/api/api-tokens/${t.id}/audit-logs?limit=50`, { token: jwt })).body.data;
    expect(log.some((e: any) => e.action === "used" && e.endpoint === "/mcp/tools/list_agents")).toBe(true);
    let error: any;
    for (let i = 0; i < 45 && !error; i++) error = await c.callTool({ name: "list_agents", arguments: {} }).then(() => undefined, (e) => e);
    expect(error.code).toBe(-32029);
    expect(error.message).toMatch(/retry in \d+ s/);
    await c.close();
  });

  test("refused calls are in the audit log too: over the budget 429, an unknown tool 404, a SYSTEM-only tool from a USER token 403", async () => {
    const t = (await h.call("POST", "/api/api-tokens", { token: jwt, body: { product_id: ws, token_name: "refused" } })).body.data;
    const c = await connect(t.token);
    expect(String(await c.callTool({ name: "no_such_tool", arguments: {} }).catch((e) => e))).toMatch(/Unknown tool/);
    expect(String(await c.callTool({ name: "update_mcp_settings", arguments: {} }).catch((e) => e))).toMatch(/SYSTEM/);
    let error: any;
    for (let i = 0; i < 45 && !error; i++) error = await c.callTool({ name: "list_agents", arguments: {} }).then(() => undefined, (e) => e);
    expect(error.code).toBe(-32029);
    await h.settle();
    const log = (await h.call("GET", `/api/api-tokens/${t.id}/audit-logs?limit=100`, { token: jwt })).body.data;
    const seen = (endpoint: string, status: number) => log.some((e: any) => e.endpoint === endpoint && e.status_code === status);
    expect(seen("/mcp/tools/no_such_tool", 404)).toBe(true);
    expect(seen("/mcp/tools/update_mcp_settings", 403)).toBe(true);
    expect(seen("/mcp/tools/list_agents", 429)).toBe(true);
    expect(seen("/mcp/tools/list_agents", 200)).toBe(true);
    await c.close();
  });

  test("a session ends when its token is revoked", async () => {
    const t = (await h.call("POST", "/api/api-tokens", { token: jwt, body: { product_id: ws, token_name: "short-lived" } })).body.data;
    const c = await connect(t.token);
    await c.listTools();
    const before = h.services.mcp.gateway.sessionCount();
    await h.call("POST", `/api/api-tokens/${t.id}/revoke`, { token: jwt });
    h.services.mcp.gateway.sweep();
    expect(h.services.mcp.gateway.sessionCount()).toBe(before - 1);
    const after = await c.listTools().then(() => "ok", (e) => String(e));
    expect(after).not.toBe("ok");
  });

  test("another token cannot use a session id it did not open", async () => {
    const c = await connect(userToken);
    const sid = (c as any)._transport.sessionId as string;
    const other = (await h.call("POST", "/api/api-tokens", { token: jwt, body: { product_id: ws, token_name: "other" } })).body.data.token;
    const r = await h.app.handle(new Request(`${BASE}/mcp`, { method: "POST", headers: { authorization: `Bearer ${other}`, "mcp-session-id": sid, "content-type": "application/json", accept: "application/json, text/event-stream" }, body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" }) }));
    expect(r.status).toBe(404);
    await c.close();
  });
});

describe("sessions", () => {
  const initialize = (token: string) =>
    h.app.handle(new Request(`${BASE}/mcp`, { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json", accept: "application/json, text/event-stream" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "x", version: "1" } } }) }));
  const listTools = (token: string, sid: string) =>
    h.app.handle(new Request(`${BASE}/mcp`, { method: "POST", headers: { authorization: `Bearer ${token}`, "mcp-session-id": sid, "mcp-protocol-version": "2025-06-18", "content-type": "application/json", accept: "application/json, text/event-stream" }, body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" }) }));
  const newToken = async (name: string) => (await h.call("POST", "/api/api-tokens", { token: jwt, body: { product_id: ws, token_name: name } })).body.data.token as string;
  /** Opens a session and reads its answer to the end, as a client does; its id. */
  const open = async (token: string) => {
    const r = await initialize(token);
    expect(r.status).toBe(200);
    await r.text();
    return r.headers.get("mcp-session-id")!;
  };

  test("initializes are paid from the token's budget, and one token never holds more than 32 sessions (the least recently used idle one closes)", async () => {
    const token = await newToken("flood");
    const before = h.services.mcp.gateway.sessionCount();
    const first = await open(token);
    for (let i = 0; i < 39; i++) await open(token);
    expect(h.services.mcp.gateway.sessionCount() - before).toBe(32);
    // The oldest went first; its client hears 404 and initializes again.
    expect((await listTools(token, first)).status).toBe(404);
    const over = await initialize(token);
    expect(over.status).toBe(429);
    expect(over.headers.get("retry-after")).toMatch(/^\d+$/);
    expect(((await over.json()) as any).error).toMatchObject({ code: -32029, message: expect.stringMatching(/retry in \d+ s/) });
    h.clock.advance(61_000);
  });

  test("a session idle for 30 minutes (no request, no open stream) is closed; an open stream keeps it", async () => {
    const token = await newToken("idle");
    // The sessions left by the test above are idle now, and go.
    h.clock.advance(SESSION_IDLE_MS);
    h.services.mcp.gateway.sweep();
    const before = h.services.mcp.gateway.sessionCount();
    const quiet = await open(token);
    const listening = await open(token);
    const stream = await h.app.handle(new Request(`${BASE}/mcp`, { method: "GET", headers: { authorization: `Bearer ${token}`, "mcp-session-id": listening, "mcp-protocol-version": "2025-06-18", accept: "text/event-stream" } }));
    expect(stream.status).toBe(200);
    h.clock.advance(SESSION_IDLE_MS - 1000);
    h.services.mcp.gateway.sweep();
    expect(h.services.mcp.gateway.sessionCount() - before).toBe(2);
    h.clock.advance(2000);
    h.services.mcp.gateway.sweep();
    expect(h.services.mcp.gateway.sessionCount() - before).toBe(1);
    expect((await listTools(token, quiet)).status).toBe(404);
    // The client hangs up: from then on the session counts as idle.
    await stream.body!.cancel();
    h.clock.advance(SESSION_IDLE_MS);
    h.services.mcp.gateway.sweep();
    expect(h.services.mcp.gateway.sessionCount() - before).toBe(0);
    expect((await listTools(token, listening)).status).toBe(404);
  });
});
