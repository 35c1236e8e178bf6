// What Hearth defends against around chat sessions: a client-chosen id as a cross-tenant oracle or
// squat, and one caller of a workspace reading, continuing or deleting another caller's history.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { BASE, createHarness, defaultWorkspaceId, secondTenant, type Harness } from "../support/harness";
import { startOllamaFake, type OllamaFake } from "../support/ollama-fake";
import { allEvents } from "../support/sse";

let h: Harness;
let fake: OllamaFake;
let admin: string;
let ws: string;
let member: string;
let member2: string;

beforeAll(async () => {
  fake = startOllamaFake();
  h = await createHarness({ HEARTH_OLLAMA_URL: fake.url });
  admin = await h.login();
  ws = await defaultWorkspaceId(h, admin);
  const orgId = (await h.call("GET", "/api/auth/me", { token: admin })).body.data.user.organization_id;
  for (const email of ["m1@example.test", "m2@example.test"]) {
    expect((await h.call("POST", `/api/organizations/${orgId}/users`, { token: admin, body: { email, password: "member-pass", role: "member" } })).status).toBe(201);
  }
  member = await h.login("m1@example.test", "member-pass");
  member2 = await h.login("m2@example.test", "member-pass");
});
afterAll(async () => {
  await h.close();
  await fake.stop();
});

const newToken = async (jwt: string, productId: string, role: "USER" | "SYSTEM" = "USER") => {
  const r = await h.call("POST", "/api/api-tokens", { token: jwt, body: { product_id: productId, token_name: "chat", role } });
  expect(r.status).toBe(201);
  return r.body.data.token as string;
};
const chat = (auth: string, body: Record<string, unknown>) =>
  h.app.handle(new Request(`${BASE}/api/assistant/chat`, { method: "POST", headers: { authorization: `Bearer ${auth}`, "content-type": "application/json" }, body: JSON.stringify(body) }));
/** Asks and returns the session id the stream announced. */
const ask = async (auth: string, body: Record<string, unknown>) => {
  const res = await chat(auth, body);
  expect(res.status).toBe(200);
  const events = await allEvents(res);
  return events[0]!.data.session_id as string;
};
const history = (auth: string, sessionId: string, productId?: string) =>
  h.call("GET", `/api/assistant/chat/history?session_id=${encodeURIComponent(sessionId)}${productId ? `&product_id=${productId}` : ""}`, { token: auth });
const contents = (r: { body: { data: { messages: { role: string; content: string }[] } } }) => r.body.data.messages.filter((m) => m.role === "user").map((m) => m.content);
const listed = async (auth: string, productId?: string) => {
  const r = await h.call("GET", `/api/assistant/chat/sessions${productId ? `?product_id=${productId}` : ""}`, { token: auth });
  expect(r.status).toBe(200);
  return r.body.data.map((s: { session_id: string }) => s.session_id) as string[];
};

describe("a session id is scoped to its workspace", () => {
  test("the same client-chosen id in two tenants' workspaces is two sessions, neither an oracle", async () => {
    const other = await secondTenant(h, admin, "Squatter Org");
    const ours = await newToken(admin, ws);
    const theirs = await newToken(other.jwt, other.workspaceId);
    expect(await ask(theirs, { message: "their question", session_id: "support" })).toBe("support");
    // Taken elsewhere, yet ours to use: no 404 that would tell us someone else has it.
    expect(await ask(ours, { message: "our question", session_id: "support" })).toBe("support");
    expect(contents(await history(ours, "support"))).toEqual(["our question"]);
    expect(contents(await history(theirs, "support"))).toEqual(["their question"]);
    expect((await history(ours, "support")).body.data.product_id).toBe(ws);
    // Deleting ours leaves theirs.
    expect((await h.call("DELETE", "/api/assistant/chat/sessions/support", { token: ours })).status).toBe(200);
    expect((await history(ours, "support")).status).toBe(404);
    expect(contents(await history(theirs, "support"))).toEqual(["their question"]);
  });

  test("a user with two workspaces names the one meant with product_id", async () => {
    const second = (await h.call("POST", "/api/products", { token: admin, body: { name: "Second" } })).body.data.id as string;
    expect(await ask(admin, { message: "in default", session_id: "weekly", product_id: ws })).toBe("weekly");
    expect(await ask(admin, { message: "in second", session_id: "weekly", product_id: second })).toBe("weekly");
    expect(contents(await history(admin, "weekly", ws))).toEqual(["in default"]);
    expect(contents(await history(admin, "weekly", second))).toEqual(["in second"]);
    // Without product_id the id is ambiguous: a clear 400, never the wrong conversation.
    const ambiguous = await history(admin, "weekly");
    expect(ambiguous.status).toBe(400);
    expect(ambiguous.body.success).toBe(false);
    expect((await h.call("DELETE", `/api/assistant/chat/sessions/weekly?product_id=${second}`, { token: admin })).status).toBe(200);
    expect(contents(await history(admin, "weekly"))).toEqual(["in default"]);
  });
});

describe("a session belongs to its creator", () => {
  test("another token of the workspace cannot read, continue, list or delete it", async () => {
    const mine = await newToken(admin, ws);
    const colleague = await newToken(admin, ws);
    const id = await ask(mine, { message: "private question" });
    expect((await history(colleague, id)).status).toBe(404);
    expect((await chat(colleague, { message: "let me in", session_id: id })).status).toBe(404);
    expect(await listed(colleague)).not.toContain(id);
    expect((await h.call("DELETE", `/api/assistant/chat/sessions/${id}`, { token: colleague })).status).toBe(404);
    expect(contents(await history(mine, id))).toEqual(["private question"]);
    expect(await listed(mine)).toContain(id);
  });

  test("a member reads only its own sessions; owners, admins and SYSTEM tokens read every one", async () => {
    const id = await ask(member, { message: "member's question", product_id: ws });
    expect(contents(await history(member, id))).toEqual(["member's question"]);
    expect(await listed(member, ws)).toContain(id);

    expect((await history(member2, id)).status).toBe(404);
    expect((await history(member2, id, ws)).status).toBe(404);
    expect(await listed(member2, ws)).not.toContain(id);
    expect((await chat(member2, { message: "hijack", session_id: id, product_id: ws })).status).toBe(404);
    expect((await h.call("DELETE", `/api/assistant/chat/sessions/${id}`, { token: member2 })).status).toBe(404);
    const userToken = await newToken(admin, ws);
    expect((await history(userToken, id)).status).toBe(404);

    expect(contents(await history(admin, id))).toEqual(["member's question"]);
    expect(await listed(admin, ws)).toContain(id);
    const system = await newToken(admin, ws, "SYSTEM");
    expect(contents(await history(system, id))).toEqual(["member's question"]);
    expect(await listed(system)).toContain(id);

    // Reading is not writing: only the creator continues its conversation.
    expect((await chat(admin, { message: "admin writes", session_id: id, product_id: ws })).status).toBe(403);
    expect(contents(await history(member, id))).toEqual(["member's question"]);
    expect((await h.call("DELETE", `/api/assistant/chat/sessions/${id}?product_id=${ws}`, { token: admin })).status).toBe(200);
    expect((await history(member, id)).status).toBe(404);
  });

  test("a member's own session id is not blocked by a colleague's session list", async () => {
    const id = await ask(member, { message: "one", product_id: ws, session_id: `m1-${crypto.randomUUID()}` });
    expect(await ask(member, { message: "two", session_id: id })).toBe(id);
    expect(contents(await history(member, id))).toEqual(["one", "two"]);
  });
});
