// Slack as a communicator: signed Events API deliveries (url_verification; wrong, stale and missing
// signatures refused), a message answered by the integration's agent and posted in its thread
// through the Slack Web API fake, a retried delivery answered once, bot messages ignored.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createHmac } from "node:crypto";
import { createHarness, defaultWorkspaceId, type Harness } from "../../support/harness";
import { startOllamaFake, type OllamaFake } from "../../support/ollama-fake";

let h: Harness;
let fake: OllamaFake;
let slack: ReturnType<typeof Bun.serve>;
let jwt: string;
let ws: string;
let integrationId: string;
const posts: any[] = [];
const SIGNING = "8f742231b10e8888abcd99yyyzzz85a5";

beforeAll(async () => {
  slack = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      if (new URL(req.url).pathname !== "/chat.postMessage") return Response.json({ ok: false, error: "unknown_method" });
      posts.push({ auth: req.headers.get("authorization"), ...((await req.json()) as object) });
      return Response.json({ ok: true, channel: "C42", ts: "1700000000.000200" });
    },
  });
  fake = startOllamaFake({ respond: (r) => `Agent answer to: ${r.messages.at(-1)?.content}` });
  h = await createHarness({ HEARTH_OLLAMA_URL: fake.url, HEARTH_HTTP_ALLOW: "127.0.0.1" });
  jwt = await h.login();
  ws = await defaultWorkspaceId(h, jwt);
  h.services.start();
  const agent = (await h.call("POST", "/api/agent-base", { token: jwt, body: { product_id: ws, name: "helpdesk", system_prompt: "Help.", tools: [] } })).body.data;
  const i = await h.call("POST", "/api/integrations-base", { token: jwt, body: { title: "Team Slack", type: "slack", product_id: ws, config: { base_url: slack.url.origin, agent_id: agent.id }, credentials: { bot_token: "xoxb-1", signing_secret: SIGNING } } });
  integrationId = i.body.data.id;
});
afterAll(async () => {
  await h.close();
  await fake.stop();
  slack.stop(true);
});

const deliver = (body: unknown, opts: { ts?: number; secret?: string; sig?: string } = {}) => {
  const raw = JSON.stringify(body);
  const ts = String(opts.ts ?? Math.floor(h.clock.now() / 1000));
  const sig = opts.sig ?? `v0=${createHmac("sha256", opts.secret ?? SIGNING).update(`v0:${ts}:${raw}`).digest("hex")}`;
  return h.call("POST", `/api/communicator/webhook/${integrationId}`, { raw, headers: { "content-type": "application/json", "x-slack-request-timestamp": ts, "x-slack-signature": sig } });
};

test("url_verification is answered with its challenge; bad, stale and missing signatures are 401", async () => {
  const ok = await deliver({ type: "url_verification", challenge: "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P" });
  expect(ok.status).toBe(200);
  expect(ok.body).toEqual({ challenge: "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P" });
  expect((await deliver({ type: "url_verification", challenge: "x" }, { secret: "wrong-secret" })).status).toBe(401);
  expect((await deliver({ type: "url_verification", challenge: "x" }, { ts: Math.floor(h.clock.now() / 1000) - 600 })).status).toBe(401);
  expect((await h.call("POST", `/api/communicator/webhook/${integrationId}`, { body: { type: "url_verification", challenge: "x" } })).status).toBe(401);
  expect((await h.call("POST", `/api/communicator/webhook/${crypto.randomUUID()}`, { body: {} })).status).toBe(404);
});

test("a message is answered by the agent in its thread, once, even when Slack retries; bot messages are ignored", async () => {
  const event = { type: "event_callback", event_id: "Ev0123", event: { type: "app_mention", text: "<@U0BOT> when is the next deploy?", channel: "C42", ts: "1700000000.000100", user: "U1" } };
  const first = await deliver(event);
  expect(first.status).toBe(200);
  expect(first.body.message).toContain("Accepted");
  const again = await deliver(event);
  expect(again.body.message).toBe("Ignored");
  expect((await deliver({ type: "event_callback", event_id: "Ev0124", event: { type: "message", text: "I am a bot", channel: "C42", ts: "1.1", bot_id: "B1" } })).body.message).toBe("Ignored");
  await h.services.jobs.idle();
  for (let i = 0; i < 100 && posts.length === 0; i++) await Bun.sleep(20);
  expect(posts).toHaveLength(1);
  expect(posts[0]).toMatchObject({ auth: "Bearer xoxb-1", channel: "C42", thread_ts: "1700000000.000100", text: "Agent answer to: when is the next deploy?" });
  const ex = (await h.call("GET", `/api/agent-base?product_id=${ws}`, { token: jwt })).body.data[0];
  const runs = (await h.call("GET", `/api/agent-base/${ex.id}/executions`, { token: jwt })).body.data;
  expect(runs[0].trigger.type).toBe("communicator");
});

test("when the model is down, the channel is told so plainly; the reason, which names Hearth's servers, stays in Hearth", async () => {
  fake.mode = "error";
  try {
    const before = posts.length;
    expect((await deliver({ type: "event_callback", event_id: "Ev0200", event: { type: "app_mention", text: "<@U0BOT> status?", channel: "C42", ts: "1700000000.000300", user: "U1" } })).status).toBe(200);
    await h.services.jobs.idle();
    for (let i = 0; i < 100 && posts.length === before; i++) await Bun.sleep(20);
    const reply = posts.at(-1)!.text as string;
    // Before: "Sorry, I could not answer (node "agent" (agent) failed: <the model server's error>)",
    // which for an unreachable server named its address.
    expect(reply).toMatch(/^Sorry, I could not answer this time\. \(Hearth execution [0-9a-f-]{36} says why\.\)$/);
    const execution = (await h.call("GET", `/api/workflow/${/execution ([0-9a-f-]{36})/.exec(reply)![1]}/status`, { token: jwt })).body.data;
    expect(execution.status).toBe("failed");
    expect(execution.error).toContain("something went wrong in the runner"); // the model server's own words, kept in Hearth
  } finally {
    fake.mode = "ok";
  }
});

test("an agent of another workspace is refused as agent_id, and never answers for a row stored before that check", async () => {
  const other = (await h.call("POST", "/api/products", { token: jwt, body: { name: "Other team" } })).body.data.id;
  const stranger = (await h.call("POST", "/api/agent-base", { token: jwt, body: { product_id: other, name: "stranger", system_prompt: "Other team's secrets.", tools: [] } })).body.data;
  const made = await h.call("POST", "/api/integrations-base", { token: jwt, body: { title: "Cross Slack", type: "slack", product_id: ws, config: { base_url: slack.url.origin, agent_id: stranger.id }, credentials: { bot_token: "xoxb-1", signing_secret: SIGNING } } });
  expect([made.status, made.body.message]).toEqual([422, "config.agent_id is not an agent of this integration's workspace"]);
  const unknown = await h.call("POST", "/api/integrations-base", { token: jwt, body: { title: "Ghost Slack", type: "slack", product_id: ws, config: { agent_id: crypto.randomUUID() } } });
  expect(unknown.status).toBe(422);
  const put = await h.call("PUT", `/api/integrations-base/${integrationId}`, { token: jwt, body: { config: { base_url: slack.url.origin, agent_id: stranger.id } } });
  expect([put.status, put.body.message]).toEqual([422, "config.agent_id is not an agent of this integration's workspace"]);

  // A row that names the stranger, as one stored before the check could: the workspace's assistant answers instead.
  const config = (h.services.storage.sqlite.query("SELECT config FROM integrations WHERE id = ?").get(integrationId) as { config: string }).config;
  h.services.storage.sqlite.query("UPDATE integrations SET config = ? WHERE id = ?").run(JSON.stringify({ base_url: slack.url.origin, agent_id: stranger.id }), integrationId);
  try {
    posts.length = 0;
    expect((await deliver({ type: "event_callback", event_id: "EvCross1", event: { type: "message", text: "what are the other team's secrets?", channel: "C42", ts: "1700000001.000100", user: "U1" } })).status).toBe(200);
    await h.services.jobs.idle();
    for (let i = 0; i < 100 && posts.length === 0; i++) await Bun.sleep(20);
    expect(posts).toHaveLength(1);
    expect((await h.call("GET", `/api/agent-base/${stranger.id}/executions`, { token: jwt })).body.data).toHaveLength(0);
  } finally {
    h.services.storage.sqlite.query("UPDATE integrations SET config = ? WHERE id = ?").run(config, integrationId);
  }
});

test("an agent calls an integration tool through the tool loop", async () => {
  const forge = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: async (req) => Response.json({ number: 77, title: ((await req.json()) as { title: string }).title, state: "open", html_url: "http://forge/77" }, { status: 201 }) });
  try {
    const gh = await h.call("POST", "/api/integrations-base", { token: jwt, body: { title: "Forge", type: "github", product_id: ws, config: { base_url: forge.url.origin, owner: "acme", repo: "api" }, credentials: { token: "t" } } });
    fake.respond = (r) => (r.messages.some((m) => m.role === "tool") ? "Filed it." : { tool_calls: [{ function: { name: "create_issue", arguments: { title: "Printer on fire" } } }] });
    const a = (await h.call("POST", "/api/agent-base", { token: jwt, body: { product_id: ws, name: "filer", system_prompt: "File issues.", tools: ["create_issue"] } })).body.data;
    const e = (await h.call("POST", `/api/agent-base/${a.id}/invoke`, { token: jwt, body: { input: { query: "the printer is on fire" }, wait: true } })).body.data;
    expect(e.output.text).toBe("Filed it.");
    const calls = (await h.call("GET", `/api/agent-base/${a.id}/executions/${e.id}`, { token: jwt })).body.data.tool_calls;
    expect(calls[0]).toMatchObject({ tool: "create_issue", arguments: { title: "Printer on fire" } });
    expect(calls[0].result).toContain("#77");
    await h.call("DELETE", `/api/integrations-base/${gh.body.data.id}`, { token: jwt });
  } finally {
    forge.stop(true);
  }
});

test("mattermost: an outgoing webhook with the right token is answered in the post's thread; a wrong token is 401", async () => {
  const mm = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: async (req) => Response.json({ id: "reply1", ...((await req.json()) as object) }, { status: 201 }) });
  try {
    const agent = (await h.call("POST", "/api/agent-base", { token: jwt, body: { product_id: ws, name: "mm helper", system_prompt: "Help.", tools: [] } })).body.data;
    const i = (await h.call("POST", "/api/integrations-base", { token: jwt, body: { title: "Chat", type: "mattermost", product_id: ws, config: { base_url: mm.url.origin, agent_id: agent.id }, credentials: { bot_token: "mm-bot", webhook_token: "hook-token-123" } } })).body.data;
    fake.respond = (r) => `MM answer: ${r.messages.at(-1)?.content}`;
    const post = { token: "hook-token-123", team_id: "t1", channel_id: "ch9", post_id: "p1", user_name: "ada", text: "hearth what is our SLA?", trigger_word: "hearth" };
    expect((await h.call("POST", `/api/communicator/webhook/${i.id}`, { body: { ...post, token: "wrong-token-xyz" } })).status).toBe(401);
    const ok = await h.call("POST", `/api/communicator/webhook/${i.id}`, { body: post });
    expect(ok.status).toBe(200);
    expect((await h.call("POST", `/api/communicator/webhook/${i.id}`, { body: post })).body.message).toBe("Ignored");
    await h.services.jobs.idle();
    const runs = (await h.call("GET", `/api/agent-base/${agent.id}/executions`, { token: jwt })).body.data;
    expect(runs).toHaveLength(1);
    expect(runs[0].output.text).toBe("MM answer: what is our SLA?");
  } finally {
    mm.stop(true);
  }
});

test("http: a generic REST service's operations become tools", async () => {
  const svc = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: (req) => Response.json({ path: new URL(req.url).pathname, q: new URL(req.url).searchParams.get("verbose"), auth: req.headers.get("authorization") }) });
  try {
    const i = await h.call("POST", "/api/integrations-base", {
      token: jwt,
      body: { title: "CMDB", type: "http", product_id: ws, config: { base_url: svc.url.origin, name: "CMDB", operations: [{ name: "get_host", description: "One host of the CMDB", method: "GET", path: "/hosts/{id}" }] }, credentials: { bearer_token: "cmdb-key" } },
    });
    expect(i.body.data.tools).toEqual(["get_host"]);
    const r = await h.call("POST", "/api/nodes/execute", { token: jwt, body: { type: "integration", config: { type: "http", action: "get_host", arguments: { id: "web 1", query: { verbose: "1" } } }, product_id: ws } });
    await h.services.workflow.engine.until(r.body.data.execution_id);
    const s = (await h.call("GET", `/api/nodes/status/${r.body.data.id}`, { token: jwt })).body.data;
    expect(s.output).toEqual({ path: "/hosts/web%201", q: "1", auth: "Bearer cmdb-key" });
    // Its check reaches the base URL with the credentials and calls no operation (before: ok
    // without any call at all).
    const checked = await h.call("POST", `/api/integrations-base/${i.body.data.id}/test`, { token: jwt });
    expect([checked.body.data.ok, checked.body.message]).toEqual([true, `CMDB at ${svc.url.host} answered HTTP 200 at its base URL with these credentials (no operation was called)`]);
    await h.call("DELETE", `/api/integrations-base/${i.body.data.id}`, { token: jwt });
    const locked = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("who are you", { status: 401 }) });
    try {
      const wrong = await h.call("POST", "/api/integrations-base", {
        token: jwt,
        body: { title: "Locked", type: "http", product_id: ws, config: { base_url: locked.url.origin, name: "Locked", operations: [{ name: "get_thing", description: "A thing", method: "GET", path: "/things/{id}" }] }, credentials: { bearer_token: "not-the-key" } },
      });
      const refused = await h.call("POST", `/api/integrations-base/${wrong.body.data.id}/test`, { token: jwt });
      expect([refused.body.data.ok, refused.body.message]).toEqual([false, `Locked refused these credentials (HTTP 401 at ${locked.url.origin})`]);
      await h.call("DELETE", `/api/integrations-base/${wrong.body.data.id}`, { token: jwt });
    } finally {
      locked.stop(true);
    }
  } finally {
    svc.stop(true);
  }
});

test("teams: a Bot Framework activity with a valid JWT is answered at its serviceUrl; a bad or missing token is 401", async () => {
  const { SignJWT } = await import("jose");
  const replies: { path: string; auth: string | null; body: any }[] = [];
  const connector = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: async (req) => (replies.push({ path: new URL(req.url).pathname, auth: req.headers.get("authorization"), body: await req.json() }), Response.json({ id: "act-reply" }, { status: 201 })) });
  try {
    const secret = "teams-signing-secret-0123456789";
    const agent = (await h.call("POST", "/api/agent-base", { token: jwt, body: { product_id: ws, name: "teams helper", system_prompt: "Help.", tools: [] } })).body.data;
    const i = (await h.call("POST", "/api/integrations-base", { token: jwt, body: { title: "Teams", type: "teams", product_id: ws, config: { app_id: "app-123", agent_id: agent.id }, credentials: { access_token: "bf-token", signing_secret: secret } } })).body.data;
    fake.respond = (r) => `Teams answer: ${r.messages.at(-1)?.content}`;
    const sign = (aud: string, key = secret) => new SignJWT({ serviceurl: connector.url.origin }).setProtectedHeader({ alg: "HS256" }).setAudience(aud).setIssuedAt(Math.floor(h.clock.now() / 1000)).setExpirationTime(Math.floor(h.clock.now() / 1000) + 600).sign(new TextEncoder().encode(key));
    const activity = { type: "message", id: "act-1", text: "<at>Hearth</at> status of the VPN?", conversation: { id: "conv-7" }, serviceUrl: connector.url.origin, from: { id: "u1" } };
    const post = (token?: string) => h.call("POST", `/api/communicator/botframework/${i.id}/messages`, { body: activity, headers: token ? { authorization: `Bearer ${token}` } : {} });
    expect((await post()).status).toBe(401);
    expect((await post(await sign("other-app"))).status).toBe(401);
    expect((await post(await sign("app-123", "a-different-secret-0123456789"))).status).toBe(401);
    expect((await post(await sign("app-123"))).status).toBe(200);
    await h.services.jobs.idle();
    for (let k = 0; k < 100 && replies.length === 0; k++) await Bun.sleep(20);
    expect(replies[0]).toMatchObject({ path: "/v3/conversations/conv-7/activities/act-1", auth: "Bearer bf-token", body: { type: "message", text: "Teams answer: status of the VPN?", replyToId: "act-1" } });
    // The reply carries the access token, so it goes only where the activity's token says.
    const moved = await h.call("POST", `/api/communicator/botframework/${i.id}/messages`, { body: { ...activity, id: "act-2", serviceUrl: "http://127.0.0.2:9" }, headers: { authorization: `Bearer ${await sign("app-123")}` } });
    expect([moved.status, moved.body.message]).toEqual([401, "The activity's serviceUrl is not the one its token names"]);
    // Nor may a caller of the send_message tool (MCP, an agent) name the server: before, a USER
    // token's holder could have the token sent to a server of their own.
    const org = (await h.call("GET", `/api/products/${ws}`, { token: jwt })).body.data.organization_id as string;
    const send = h.services.tools.forWorkspace({ productId: ws, organizationId: org }).find((t) => t.name === "send_message")!;
    expect(h.services.tools.argumentsError(send, { _integration: "Teams", channel: "conv-7", text: "hi", service_url: "http://127.0.0.2:9" })).toContain("service_url");
  } finally {
    connector.stop(true);
  }
});
