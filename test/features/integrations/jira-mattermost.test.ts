// Jira (JQL search paged by startAt, create, comment; PAT and Cloud basic auth) and Mattermost
// (posts, thread replies, channels) through their real client code against loopback fakes.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createHarness, defaultWorkspaceId, type Harness } from "../../support/harness";

let h: Harness;
let jwt: string;
let ws: string;
let fake: ReturnType<typeof Bun.serve>;
const seen: { path: string; auth: string | null; body?: any }[] = [];

beforeAll(async () => {
  fake = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      const url = new URL(req.url);
      const body: any = req.method === "POST" ? await req.json() : undefined;
      seen.push({ path: url.pathname + url.search, auth: req.headers.get("authorization"), body });
      if (url.pathname === "/rest/api/2/search" && url.searchParams.get("jql") !== "lying") {
        const startAt = Number(url.searchParams.get("startAt"));
        const all = Array.from({ length: 3 }, (_, i) => ({ key: `OPS-${i + 1}`, fields: { summary: `Ticket ${i + 1}`, status: { name: "Open" }, assignee: null } }));
        return Response.json({ startAt, total: 3, issues: all.slice(startAt, startAt + 2) });
      }
      if (url.pathname === "/rest/api/2/search" && url.searchParams.get("jql") === "lying") {
        // One ticket a page of a "total" that never ends.
        const startAt = Number(url.searchParams.get("startAt"));
        return Response.json({ startAt, total: 1_000_000, issues: [{ key: `OPS-${startAt + 1}`, fields: { summary: "x", status: { name: "Open" } } }] });
      }
      if (url.pathname === "/rest/api/2/myself") return Response.json({ errorMessages: [`not allowed: ${req.headers.get("authorization")}`] }, { status: 401 });
      if (url.pathname === "/rest/api/2/issue") return body.fields.project.key === "NOPE" ? Response.json({ errorMessages: [], errors: { project: "valid project is required" }, message: undefined }, { status: 400 }) : Response.json({ id: "10001", key: "OPS-4" }, { status: 201 });
      if (url.pathname === "/rest/api/2/issue/OPS-1/comment") return Response.json({ id: "555" }, { status: 201 });
      if (url.pathname === "/api/v4/posts") return Response.json({ id: "post123", ...body }, { status: 201 });
      if (url.pathname === "/api/v4/users/me/teams/team1/channels") return Response.json([{ id: "ch1", name: "town-square", display_name: "Town Square" }]);
      return Response.json({ message: "not found" }, { status: 404 });
    },
  });
  h = await createHarness({ HEARTH_HTTP_ALLOW: "127.0.0.1" });
  jwt = await h.login();
  ws = await defaultWorkspaceId(h, jwt);
  h.services.workflow.start();
});
afterAll(async () => {
  await h.close();
  fake.stop(true);
});

const node = async (type: string, action: string, args: Record<string, unknown>) => {
  const r = await h.call("POST", "/api/nodes/execute", { token: jwt, body: { type: "integration", config: { type, action, arguments: args }, product_id: ws } });
  await h.services.workflow.engine.until(r.body.data.execution_id);
  return (await h.call("GET", `/api/nodes/status/${r.body.data.id}`, { token: jwt })).body.data;
};

test("jira: JQL search follows startAt pages, create and comment; a PAT is sent as Bearer, Cloud as Basic", async () => {
  const dc = await h.call("POST", "/api/integrations-base", { token: jwt, body: { title: "Jira DC", type: "jira", product_id: ws, config: { base_url: fake.url.origin, project_key: "OPS" }, credentials: { token: "pat-1" } } });
  expect(dc.status).toBe(201);
  const found = await node("jira", "search_tickets", { jql: "project = OPS", limit: 10 });
  expect(found.output.tickets.map((t: any) => t.key)).toEqual(["OPS-1", "OPS-2", "OPS-3"]);
  expect(seen.filter((s) => s.path.startsWith("/rest/api/2/search")).map((s) => new URL(`http://x${s.path}`).searchParams.get("startAt"))).toEqual(["0", "2"]);
  expect(seen.at(-1)!.auth).toBe("Bearer pat-1");
  expect((await node("jira", "create_ticket", { summary: "Disk full" })).output.key).toBe("OPS-4");
  expect(seen.at(-1)!.body.fields).toMatchObject({ project: { key: "OPS" }, summary: "Disk full", issuetype: { name: "Task" } });
  const bad = await node("jira", "create_ticket", { summary: "x", project_key: "NOPE" });
  expect(bad.status).toBe("failed");
  expect(bad.error).toMatch(/Jira answered 400/);
  expect((await node("jira", "comment_ticket", { key: "OPS-1", body: "on it" })).output.id).toBe("555");
  await h.call("DELETE", `/api/integrations-base/${dc.body.data.id}`, { token: jwt });
  const cloud = await h.call("POST", "/api/integrations-base", { token: jwt, body: { title: "Jira Cloud", type: "jira", product_id: ws, config: { base_url: fake.url.origin }, credentials: { email: "a@b.c", api_token: "tok" } } });
  await node("jira", "search_tickets", { jql: "x" });
  expect(seen.at(-1)!.auth).toBe(`Basic ${Buffer.from("a@b.c:tok").toString("base64")}`);
  await h.call("DELETE", `/api/integrations-base/${cloud.body.data.id}`, { token: jwt });
});

test("jira: a search whose total never ends follows a capped number of pages", async () => {
  const dc = await h.call("POST", "/api/integrations-base", { token: jwt, body: { title: "Jira lying", type: "jira", product_id: ws, config: { base_url: fake.url.origin }, credentials: { token: "pat-1" } } });
  const before = seen.length;
  const found = await node("jira", "search_tickets", { jql: "lying", limit: 200 });
  expect(found.status).toBe("succeeded");
  expect(seen.slice(before).filter((s) => s.path.startsWith("/rest/api/2/search")).length).toBe(10);
  await h.call("DELETE", `/api/integrations-base/${dc.body.data.id}`, { token: jwt });
});

test("jira: Basic credentials echoed by the server are not repeated by the test message", async () => {
  const cloud = await h.call("POST", "/api/integrations-base", { token: jwt, body: { title: "Jira echo", type: "jira", product_id: ws, config: { base_url: fake.url.origin }, credentials: { email: "a@b.c", api_token: "cloud-token-123" } } });
  const r = await h.call("POST", `/api/integrations-base/${cloud.body.data.id}/test`, { token: jwt });
  expect(r.body.message).toBe("Jira answered 401 to GET /rest/api/2/myself: not allowed: [redacted]");
  await h.call("DELETE", `/api/integrations-base/${cloud.body.data.id}`, { token: jwt });
});

test("mattermost: a thread reply and the team's channels", async () => {
  const mm = await h.call("POST", "/api/integrations-base", { token: jwt, body: { title: "Chat", type: "mattermost", product_id: ws, config: { base_url: fake.url.origin, team_id: "team1" }, credentials: { bot_token: "mm-bot" } } });
  const posted = await node("mattermost", "send_message", { channel: "ch1", text: "deploy done", root_id: "root9" });
  expect(posted.output.id).toBe("post123");
  expect(seen.at(-1)).toMatchObject({ path: "/api/v4/posts", auth: "Bearer mm-bot", body: { channel_id: "ch1", message: "deploy done", root_id: "root9" } });
  expect((await node("mattermost", "list_channels", {})).output.channels[0].name).toBe("town-square");
  await h.call("DELETE", `/api/integrations-base/${mm.body.data.id}`, { token: jwt });
});
