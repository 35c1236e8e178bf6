// Integrations end to end: types, CRUD with the service's scope, the shadow rule, roles and tenancy,
// credentials sealed at rest (absent from the database file), each connector through its real
// client code against loopback fakes of GitHub, Gitea, GitLab and Slack, the integration node,
// and MCP: integration tools, collisions with _integration, list_changed, SYSTEM-only management.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { BASE, createHarness, defaultWorkspaceId, secondTenant, type Harness } from "../../support/harness";

let h: Harness;
let jwt: string;
let ws: string;
let system: string;
let user: string;
let api: ReturnType<typeof Bun.serve>;
const seen: { path: string; auth: string | null; body?: unknown }[] = [];
const SECRET = "ghp_TopSecretValue_1234567890";

beforeAll(async () => {
  // GitHub (Link pagination, 429 with Retry-After), Gitea, GitLab (X-Next-Page) and Slack fakes in one server.
  api = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      const url = new URL(req.url);
      const body = req.method === "POST" ? await req.json() : undefined;
      seen.push({ path: url.pathname + url.search, auth: req.headers.get("authorization") ?? req.headers.get("private-token"), body });
      const issue = (n: number) => ({ number: n, iid: n, title: `Issue ${n}`, state: "open", html_url: `http://x/${n}`, web_url: `http://x/${n}`, user: { login: "ada" }, labels: [] });
      if (url.pathname === "/repos/acme/api") return req.headers.get("authorization") === `Bearer ${SECRET}` ? Response.json({ full_name: "acme/api" }) : Response.json({ message: "Bad credentials" }, { status: 401 });
      if (url.pathname === "/repos/acme/api/issues" && req.method === "GET") {
        const page = Number(url.searchParams.get("page") ?? 1);
        const link = page === 1 ? `<${url.origin}/repos/acme/api/issues?state=open&per_page=2&page=2>; rel="next"` : "";
        return Response.json(page === 1 ? [issue(1), { ...issue(9), pull_request: {} }] : [issue(2)], { headers: link ? { link } : {} });
      }
      if (url.pathname === "/repos/acme/api/issues") return Response.json({ ...issue(3), title: (body as any).title }, { status: 201 });
      if (url.pathname === "/repos/acme/hop/issues") return Response.json([issue(5)], { headers: { link: `<http://127.0.0.2:${url.port}/steal?page=2>; rel="next"` } });
      if (url.pathname === "/steal") return Response.json([issue(666)]);
      // Services that echo what they were sent: the whole header, or the bare token.
      if (url.pathname === "/repos/acme/echo") return Response.json({ message: `Bad credentials: ${req.headers.get("authorization")}` }, { status: 401 });
      if (url.pathname === "/echo-key") return Response.json({ message: `key ${req.headers.get("x-api-key")} is unknown` }, { status: 401 });
      if (url.pathname === "/repos/acme/echo/issues") return Response.json({ message: `token ${req.headers.get("authorization")?.slice("Bearer ".length)} was revoked` }, { status: 403 });
      // Lying servers: an empty page that names a next one, and pages of nothing but pull requests without end.
      const nextPage = `<${url.origin}${url.pathname}?page=${Number(url.searchParams.get("page") ?? 1) + 1}>; rel="next"`;
      if (url.pathname === "/repos/acme/empty/issues") return Response.json([], { headers: { link: nextPage } });
      if (url.pathname === "/repos/acme/endless/issues") return Response.json([{ ...issue(8), pull_request: {} }], { headers: { link: nextPage } });
      if (url.pathname === "/api/v4/projects/grp%2Fempty/issues") return Response.json([], { headers: { "x-next-page": "2" } });
      if (url.pathname === "/api/v4/projects/grp%2Fendless/issues") return Response.json([issue(13)], { headers: { "x-next-page": String(Number(url.searchParams.get("page")) + 1) } });
      if (url.pathname === "/repos/acme/limited/issues") return Response.json({ message: "API rate limit exceeded" }, { status: 429, headers: { "retry-after": "30" } });
      if (url.pathname === "/repos/acme/missing/issues") return Response.json({ message: "Not Found", documentation_url: "https://docs" }, { status: 404 });
      if (url.pathname === "/api/v1/repos/acme/api/issues") return Response.json([issue(7)]);
      if (url.pathname === "/api/v4/projects/grp%2Fsvc/issues") {
        const page = url.searchParams.get("page");
        return Response.json([issue(page === "1" ? 11 : 12)], { headers: { "x-next-page": page === "1" ? "2" : "" } });
      }
      if (url.pathname === "/chat.postMessage") return Response.json(req.headers.get("authorization") === "Bearer xoxb-good" ? { ok: true, channel: "C1", ts: "1.2" } : { ok: false, error: "invalid_auth" });
      return new Response("no", { status: 404 });
    },
  });
  h = await createHarness({ HEARTH_HTTP_ALLOW: "127.0.0.1" });
  jwt = await h.login();
  ws = await defaultWorkspaceId(h, jwt);
  h.services.workflow.start();
  system = (await h.call("POST", "/api/api-tokens", { token: jwt, body: { product_id: ws, token_name: "sys", role: "SYSTEM" } })).body.data.token;
  user = (await h.call("POST", "/api/api-tokens", { token: jwt, body: { product_id: ws, token_name: "usr" } })).body.data.token;
});
afterAll(async () => {
  await h.close();
  api.stop(true);
});

const create = (body: Record<string, unknown>, token = jwt) => h.call("POST", "/api/integrations-base", { token, body });
const gh = (title: string, extra: Record<string, unknown> = {}) => ({ title, type: "github", config: { base_url: api.url.origin, owner: "acme", repo: "api" }, credentials: { token: SECRET }, ...extra });
const tool = async (token: string, name: string, args: Record<string, unknown>) => {
  const c = new Client({ name: "t", version: "1" });
  await c.connect(new StreamableHTTPClientTransport(new URL(`${BASE}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } }, fetch: (i, init) => h.app.handle(new Request(String(i), init)) }));
  try {
    return await c.callTool({ name, arguments: args });
  } finally {
    await c.close();
  }
};

describe("types, scope, shadow rule", () => {
  test("types list every connector with its schemas and tools", async () => {
    const r = await h.call("GET", "/api/integrations-base/types", { token: user });
    const types = Object.fromEntries(r.body.data.map((t: any) => [t.type, t]));
    for (const t of ["github", "gitea", "gitlab", "slack"]) expect(types[t]).toBeDefined();
    expect(types.github.tools.map((t: any) => t.name)).toEqual(["list_issues", "create_issue", "comment_issue"]);
    expect(types.slack.tools.map((t: any) => t.name)).toContain("send_message");
  });

  test("scope comes from product_id; a client-sent scope is refused; credentials are never returned", async () => {
    const global = await create(gh("Org GitHub"));
    expect(global.status).toBe(201);
    expect(global.body.data).toMatchObject({ scope: "global", status: "active", has_credentials: true, product_id: null });
    expect(JSON.stringify(global.body)).not.toContain(SECRET);
    const local = await create({ ...gh("Team GitHub"), product_id: ws });
    expect(local.body.data.scope).toBe("local");
    expect((await create({ ...gh("x"), scope: "global" })).status).toBe(422);
    expect((await create({ title: "t", type: "teleporter" })).status).toBe(422);
    expect((await create({ title: "t", type: "github", config: { owner: "a" } })).status).toBe(422);
    const got = await h.call("GET", `/api/integrations-base/${local.body.data.id}`, { token: user });
    expect(got.body.data.has_credentials).toBe(true);
    expect(JSON.stringify(got.body)).not.toContain(SECRET);
    // The shadow rule: the workspace's local GitHub replaces the global one.
    const active = await h.call("GET", `/api/integrations-base/product/${ws}/active`, { token: user });
    const githubs = active.body.data.filter((i: any) => i.type === "github");
    expect(githubs.map((i: any) => i.title)).toEqual(["Team GitHub"]);
    const org = await h.call("GET", "/api/external/integrations", { token: jwt });
    expect(org.body.data.map((i: any) => i.title)).toEqual(expect.arrayContaining(["Org GitHub", "Team GitHub"]));
    await h.call("DELETE", `/api/integrations-base/${local.body.data.id}`, { token: jwt });
    await h.call("DELETE", `/api/integrations-base/${global.body.data.id}`, { token: jwt });
  });

  test("a title of spaces only is refused, on create and on rename", async () => {
    const blank = await create({ ...gh("   "), product_id: ws });
    expect(blank.status).toBe(422);
    expect(blank.body.message).toBe("title must not be blank");
    const r = await create({ ...gh("  Padded  "), product_id: ws });
    expect(r.body.data.title).toBe("Padded");
    const renamed = await h.call("PUT", `/api/integrations-base/${r.body.data.id}`, { token: jwt, body: { title: " \t " } });
    expect([renamed.status, renamed.body.message]).toEqual([422, "title must not be blank"]);
    await h.call("DELETE", `/api/integrations-base/${r.body.data.id}`, { token: jwt });
  });

  test("a base_url (or a teams service_url) that is not an http(s) URL is refused on create and update", async () => {
    for (const base_url of ["not a url", "file:///etc", "gopher://x"]) {
      const r = await create({ ...gh("Bad URL"), product_id: ws, config: { base_url, owner: "acme", repo: "api" } });
      expect([r.status, r.body.message]).toEqual([422, "config.base_url must be an http or https URL"]);
    }
    const teams = await create({ title: "Bad Teams", type: "teams", product_id: ws, config: { app_id: "a", service_url: "javascript:alert(1)" } });
    expect([teams.status, teams.body.message]).toEqual([422, "config.service_url must be an http or https URL"]);
    const r = await create({ ...gh("Good URL"), product_id: ws });
    const put = await h.call("PUT", `/api/integrations-base/${r.body.data.id}`, { token: jwt, body: { config: { base_url: "file:///etc", owner: "acme", repo: "api" }, credentials: { token: SECRET } } });
    expect([put.status, put.body.message]).toEqual([422, "config.base_url must be an http or https URL"]);
    await h.call("DELETE", `/api/integrations-base/${r.body.data.id}`, { token: jwt });
  });

  test("a PUT that changes where the credentials go must send them again", async () => {
    const r = await create({ ...gh("Moving"), product_id: ws });
    const put = (body: Record<string, unknown>) => h.call("PUT", `/api/integrations-base/${r.body.data.id}`, { token: jwt, body });
    const elsewhere = { base_url: "http://127.0.0.2:9", owner: "acme", repo: "api" };
    const moved = await put({ config: elsewhere });
    expect([moved.status, moved.body.message]).toEqual([422, "Changing config.base_url changes where this integration's credentials are sent: send the credentials again with it"]);
    // Leaving base_url out means the public default: a move too.
    expect((await put({ config: { owner: "acme", repo: "api" } })).status).toBe(422);
    expect((await put({ config: { base_url: `${api.url.origin}/`, owner: "acme", repo: "other" } })).status).toBe(200);
    expect((await put({ config: elsewhere, credentials: { token: "a-new-token" } })).status).toBe(200);
    // A template has nothing to send.
    const template = await create({ title: "Moving template", type: "github", product_id: ws, config: { owner: "acme", repo: "api" } });
    expect((await h.call("PUT", `/api/integrations-base/${template.body.data.id}`, { token: jwt, body: { config: elsewhere } })).status).toBe(200);
    for (const x of [r, template]) await h.call("DELETE", `/api/integrations-base/${x.body.data.id}`, { token: jwt });
  });

  test("roles and tenancy: USER tokens read; SYSTEM tokens manage local ones only; other tenants get 404", async () => {
    expect((await create({ ...gh("by user"), product_id: ws }, user)).status).toBe(403);
    expect((await create(gh("global by system"), system)).status).toBe(403);
    const mine = await create({ ...gh("by system"), product_id: ws }, system);
    expect(mine.status).toBe(201);
    const other = await secondTenant(h, jwt, "Integr Other");
    expect((await h.call("GET", `/api/integrations-base/${mine.body.data.id}`, { token: other.jwt })).status).toBe(404);
    expect((await h.call("PUT", `/api/integrations-base/${mine.body.data.id}`, { token: other.jwt, body: { title: "mine" } })).status).toBe(404);
    expect((await h.call("GET", `/api/integrations-base/product/${ws}/active`, { token: other.jwt })).status).toBe(404);
    await h.call("DELETE", `/api/integrations-base/${mine.body.data.id}`, { token: system });
  });

  test("credentials are sealed: the secret's bytes appear nowhere in the data dir, nor in a backup", async () => {
    const r = await create({ ...gh("sealed"), product_id: ws });
    const backup = join(h.dataDir, "copy.db");
    await h.services.backup(backup);
    const files = readdirSync(h.dataDir, { recursive: true, withFileTypes: true }).filter((f) => f.isFile());
    expect(files.length).toBeGreaterThan(2);
    for (const f of files) expect(readFileSync(join(f.parentPath, f.name)).includes(Buffer.from(SECRET))).toBe(false);
    expect(readFileSync(backup).includes(Buffer.from("sealed"))).toBe(true);
    await h.call("DELETE", `/api/integrations-base/${r.body.data.id}`, { token: jwt });
  });
});

describe("connectors through their real client code", () => {
  test("POST /test checks config and credentials against the service", async () => {
    const good = await create({ ...gh("checked"), product_id: ws });
    const r = await h.call("POST", `/api/integrations-base/${good.body.data.id}/test`, { token: jwt });
    expect(r.body).toMatchObject({ success: true, data: { ok: true } });
    expect(r.body.message).toContain("acme/api");
    const bad = await create({ ...gh("bad creds"), product_id: ws, credentials: { token: "nope" } });
    const r2 = await h.call("POST", `/api/integrations-base/${bad.body.data.id}/test`, { token: jwt });
    expect(r2.body.data.ok).toBe(false);
    expect(r2.body.message).toMatch(/GitHub answered 401 .*Bad credentials/);
    expect((await h.call("POST", `/api/integrations-base/${bad.body.data.id}/test`, { token: user })).status).toBe(403);
    for (const x of [good, bad]) await h.call("DELETE", `/api/integrations-base/${x.body.data.id}`, { token: jwt });
  });

  test("a service that echoes the credentials in its error: no message Hearth gives repeats them", async () => {
    const r = await create({ title: "Echo", type: "github", product_id: ws, config: { base_url: api.url.origin, owner: "acme", repo: "echo" }, credentials: { token: SECRET } });
    const checked = await h.call("POST", `/api/integrations-base/${r.body.data.id}/test`, { token: jwt });
    expect(checked.body.data.ok).toBe(false);
    expect(checked.body.message).toBe("GitHub answered 401 to GET /repos/acme/echo: Bad credentials: [redacted]");
    const listed = await tool(user, "list_issues", {});
    expect(listed.isError).toBe(true);
    expect((listed.content as any)[0].text).toContain("token [redacted] was revoked");
    expect(JSON.stringify(listed)).not.toContain(SECRET);
    // A credential in a header of the caller's choosing (a generic http service).
    const svc = await create({ title: "Echo svc", type: "http", product_id: ws, config: { base_url: api.url.origin, operations: [{ name: "get_echo", description: "Echo", method: "GET", path: "/echo-key" }] }, credentials: { header_name: "X-Api-Key", header_value: SECRET } });
    const called = await tool(user, "get_echo", {});
    expect((called.content as any)[0].text).toContain("key [redacted] is unknown");
    for (const x of [r, svc]) await h.call("DELETE", `/api/integrations-base/${x.body.data.id}`, { token: jwt });
  });

  test("github: pages followed by Link, pull requests left out, the token sent as Bearer; create_issue posts", async () => {
    const r = await create({ ...gh("GH"), product_id: ws });
    const list = await tool(user, "list_issues", { state: "open" });
    expect((list.structuredContent as any).issues.map((i: any) => i.number)).toEqual([1, 2]);
    expect(seen.find((s) => s.path.startsWith("/repos/acme/api/issues"))!.auth).toBe(`Bearer ${SECRET}`);
    const made = await tool(user, "create_issue", { title: "Login broken" });
    expect((made.structuredContent as any).title).toBe("Login broken");
    await h.call("DELETE", `/api/integrations-base/${r.body.data.id}`, { token: jwt });
  });

  test("a next-page link to another host is not followed: the token never leaves the configured server", async () => {
    const r = await create({ title: "Hop", type: "github", product_id: ws, config: { base_url: api.url.origin, owner: "acme", repo: "hop" }, credentials: { token: "t" } });
    const before = seen.length;
    const res = await tool(user, "list_issues", {});
    expect((res.structuredContent as any).issues.map((i: any) => i.number)).toEqual([5]);
    expect(seen.slice(before).some((s) => s.path.startsWith("/steal"))).toBe(false);
    await h.call("DELETE", `/api/integrations-base/${r.body.data.id}`, { token: jwt });
  });

  test("a server that always names a next page cannot keep Hearth calling it: an empty page ends the list, and pages are capped", async () => {
    const requests = async (path: string, config: Record<string, unknown>, type = "github") => {
      const r = await create({ title: `Lying ${path}`, type, product_id: ws, config: { base_url: api.url.origin, ...config }, credentials: { token: "t" } });
      const before = seen.length;
      const res = await tool(user, "list_issues", { limit: 200 });
      await h.call("DELETE", `/api/integrations-base/${r.body.data.id}`, { token: jwt });
      expect(res.isError).toBeFalsy();
      return seen.slice(before).filter((s) => s.path.startsWith(path)).length;
    };
    expect(await requests("/repos/acme/empty/", { owner: "acme", repo: "empty" })).toBe(1);
    expect(await requests("/repos/acme/endless/", { owner: "acme", repo: "endless" })).toBe(10);
    expect(await requests("/api/v4/projects/grp%2Fempty/", { project: "grp/empty" }, "gitlab")).toBe(1);
    expect(await requests("/api/v4/projects/grp%2Fendless/", { project: "grp/endless" }, "gitlab")).toBe(10);
  });

  test("errors become one readable line; a rate limit is reported with its cause", async () => {
    const r = await create({ title: "Limited", type: "github", product_id: ws, config: { base_url: api.url.origin, owner: "acme", repo: "limited" }, credentials: { token: "t" } });
    const res = await tool(user, "list_issues", {});
    expect(res.isError).toBe(true);
    expect((res.content as any)[0].text).toMatch(/GitHub answered 429 .*API rate limit exceeded/);
    await h.call("DELETE", `/api/integrations-base/${r.body.data.id}`, { token: jwt });
  });

  test("gitea, gitlab (X-Next-Page) and slack", async () => {
    const gt = await create({ title: "Gitea", type: "gitea", product_id: ws, config: { base_url: api.url.origin, owner: "acme", repo: "api" }, credentials: { token: "g" } });
    const gl = await create({ title: "GitLab", type: "gitlab", product_id: ws, config: { base_url: api.url.origin, project: "grp/svc" }, credentials: { token: "l" } });
    const sl = await create({ title: "Slack", type: "slack", product_id: ws, config: { base_url: api.url.origin }, credentials: { bot_token: "xoxb-good" } });
    // list_issues is offered by two integrations now: a required _integration names them.
    const refused = await tool(user, "list_issues", {});
    expect(refused.isError).toBe(true);
    expect((refused.content as any)[0].text).toMatch(/_integration.*Gitea.*GitLab/);
    const viaGitea = await tool(user, "list_issues", { _integration: "Gitea" });
    expect((viaGitea.structuredContent as any).issues[0].number).toBe(7);
    const viaGitlab = await tool(user, "list_issues", { _integration: "GitLab", limit: 5 });
    expect((viaGitlab.structuredContent as any).issues.map((i: any) => i.number)).toEqual([11, 12]);
    const posted = await tool(user, "send_message", { channel: "#ops", text: "hello" });
    expect((posted.structuredContent as any).ts).toBe("1.2");
    for (const r of [gt, gl, sl]) await h.call("DELETE", `/api/integrations-base/${r.body.data.id}`, { token: jwt });
  });

  test("titles are unique among what a workspace sees (409); two alike from an older database both stay reachable", async () => {
    const first = await create({ title: "Twin", type: "gitea", product_id: ws, config: { base_url: api.url.origin, owner: "acme", repo: "api" }, credentials: { token: "g" } });
    const dup = await create({ title: "Twin", type: "gitlab", product_id: ws, config: { base_url: api.url.origin, project: "grp/svc" }, credentials: { token: "l" } });
    expect(dup.status).toBe(409);
    expect(dup.body.message).toContain('"Twin" already exists');
    expect((await create({ title: "Twin", type: "gitlab", config: { base_url: api.url.origin, project: "grp/svc" }, credentials: { token: "l" } })).status).toBe(409);
    const second = await create({ title: "Twin 2", type: "gitlab", product_id: ws, config: { base_url: api.url.origin, project: "grp/svc" }, credentials: { token: "l" } });
    expect((await h.call("PUT", `/api/integrations-base/${second.body.data.id}`, { token: jwt, body: { title: "Twin" } })).status).toBe(409);
    expect((await h.call("PUT", `/api/integrations-base/${first.body.data.id}`, { token: jwt, body: { title: "Twin", status: "active" } })).status).toBe(200);
    // Rows stored before the rule: the later one is told apart by the start of its id.
    h.services.storage.sqlite.query("UPDATE integrations SET title = 'Twin' WHERE id = ?").run(second.body.data.id);
    const other = `Twin (${second.body.data.id.slice(0, 8)})`;
    const refused = await tool(user, "list_issues", {});
    expect((refused.content as any)[0].text).toContain(`Which integration: Twin, ${other}`);
    expect((await tool(user, "list_issues", { _integration: "Twin" }) as any).structuredContent.issues[0].number).toBe(7);
    expect((await tool(user, "list_issues", { _integration: other }) as any).structuredContent.issues.map((i: any) => i.number)).toEqual([11, 12]);
    for (const r of [first, second]) await h.call("DELETE", `/api/integrations-base/${r.body.data.id}`, { token: jwt });
  });

  test("the integration node calls a tool of the effective integration of a type", async () => {
    const r = await create({ ...gh("GH node"), product_id: ws });
    const node = await h.call("POST", "/api/nodes/execute", { token: jwt, body: { type: "integration", config: { type: "github", action: "create_issue", arguments: { title: "From a workflow" } }, product_id: ws } });
    await h.services.workflow.engine.until(node.body.data.execution_id);
    const s = await h.call("GET", `/api/nodes/status/${node.body.data.id}`, { token: jwt });
    expect(s.body.data).toMatchObject({ status: "succeeded", output: { title: "From a workflow" } });
    await h.call("DELETE", `/api/integrations-base/${r.body.data.id}`, { token: jwt });
  });
});

describe("MCP management and list_changed", () => {
  test("a SYSTEM token creates a template over MCP; activating it makes its tools appear and open sessions hear list_changed", async () => {
    const c = new Client({ name: "ide", version: "1" });
    await c.connect(new StreamableHTTPClientTransport(new URL(`${BASE}/mcp`), { requestInit: { headers: { authorization: `Bearer ${user}` } }, fetch: (i, init) => h.app.handle(new Request(String(i), init)) }));
    let changed = 0;
    c.setNotificationHandler(ToolListChangedNotificationSchema, () => void changed++);
    expect((await c.listTools()).tools.map((t) => t.name)).not.toContain("create_issue");
    const made = await tool(system, "create_integration", { title: "Tracker", type: "github", config: { base_url: api.url.origin, owner: "acme", repo: "api" } });
    const id = (made.structuredContent as any).id;
    expect((made.structuredContent as any).status).toBe("template");
    expect((await tool(user, "create_integration", { title: "x", type: "github" }).catch((e) => e)).message ?? "").toMatch(/SYSTEM/);
    await h.call("PUT", `/api/integrations-base/${id}`, { token: jwt, body: { credentials: { token: "t" } } });
    for (let i = 0; i < 50 && changed === 0; i++) await Bun.sleep(10);
    expect(changed).toBeGreaterThan(0);
    expect((await c.listTools()).tools.map((t) => t.name)).toContain("create_issue");
    await c.close();
    await tool(system, "delete_integration", { id });
  });
});

test("another secret key than the stored credentials were sealed with stops the start, naming it; with none stored, the key is taken", async () => {
  const key = (n: number) => Buffer.alloc(32, n).toString("base64");
  const shut = async (x: Harness) => {
    await x.services.stop();
    x.services.storage.close();
  };
  const first = await createHarness({ HEARTH_SECRET_KEY: key(7) });
  const dir = first.dataDir;
  await shut(first);
  // No credential stored: a backup restored without its secret.key starts (before: refused).
  const restored = await createHarness({ HEARTH_SECRET_KEY: key(9) }, dir);
  const jwt = await restored.login();
  const ws = await defaultWorkspaceId(restored, jwt);
  const made = await restored.call("POST", "/api/integrations-base", { token: jwt, body: { ...gh("Sealed"), product_id: ws } });
  expect(made.status).toBe(201);
  await shut(restored);
  // Now one is sealed under key 9: key 7 would leave it undecryptable.
  await expect(createHarness({ HEARTH_SECRET_KEY: key(7) }, dir)).rejects.toThrow("HEARTH_SECRET_KEY is not the key the credentials of 1 integration(s) in this database were sealed with");
  // A key file this start would have generated is not left behind to be used next time.
  await expect(createHarness({}, dir)).rejects.toThrow(/secret\.key is missing: the credentials of 1 integration\(s\) in this database were sealed with it/);
  expect(existsSync(join(dir, "secret.key"))).toBe(false);
  // The same checks before a start migrates anything, on the database as it is, writing nothing
  // (before, a start refused for its key had already migrated the database: the older Hearth it came
  // from could no longer start on it).
  const { Database } = await import("bun:sqlite");
  const { checkSecretKeyBeforeMigrating } = await import("../../../src/platform/secrets");
  const sqlite = new Database(join(dir, "hearth.db"), { readonly: true });
  expect(() => checkSecretKeyBeforeMigrating(undefined, dir, sqlite)).toThrow(/secret\.key is missing/);
  expect(existsSync(join(dir, "secret.key"))).toBe(false);
  expect(() => checkSecretKeyBeforeMigrating(key(7), dir, sqlite)).toThrow(/HEARTH_SECRET_KEY is not the key/);
  expect(() => checkSecretKeyBeforeMigrating(key(9), dir, sqlite)).not.toThrow();
  sqlite.close();
  const empty = new Database(":memory:");
  expect(() => checkSecretKeyBeforeMigrating(undefined, dir, empty)).not.toThrow(); // nothing sealed, nothing to check
  const again = await createHarness({ HEARTH_SECRET_KEY: key(9) }, dir);
  await again.close();
});
