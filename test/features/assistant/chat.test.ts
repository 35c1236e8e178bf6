// The assistant end to end: real knowledge (model, sqlite-vec, FTS5), the real `ollama` client
// against the Ollama-protocol fake, and the SSE stream read with a real SSE parser.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { BASE, createHarness, defaultWorkspaceId, secondTenant, type Harness } from "../../support/harness";
import { makePdf } from "../../support/documents";
import { FAKE_MODEL, startOllamaFake, type OllamaFake } from "../../support/ollama-fake";
import { allEvents, readSse } from "../../support/sse";

let h: Harness;
let fake: OllamaFake;
let jwt: string;
let ws: string;
let token: string;

beforeAll(async () => {
  fake = startOllamaFake();
  h = await createHarness({ HEARTH_OLLAMA_URL: fake.url });
  jwt = await h.login();
  ws = await defaultWorkspaceId(h, jwt);
  h.services.start();
  const created = await h.call("POST", "/api/api-tokens", { token: jwt, body: { product_id: ws, token_name: "assistant tests" } });
  token = created.body.data.token;
  const pdf = await makePdf([
    "Operations handbook. This manual covers the daily work of the platform team.",
    "Networking. The office VPN uses WireGuard; ask the platform team for a profile.",
    "Backups. Run the backup command every night; it writes a consistent copy of the database file.",
    "Appendix. Licenses of the bundled components.",
  ]);
  const fd = new FormData();
  fd.append("file", new File([pdf], "ops.pdf"));
  fd.append("product_id", ws);
  expect((await h.call("POST", "/api/knowledge-base/storage/upload", { token: jwt, raw: fd })).status).toBe(202);
  const md = new FormData();
  md.append("file", new File(["# Error codes\n\nError ZX-9042 means the signing certificate expired; renew it in the admin panel.\n\n# Holidays\n\nThe office closes between Christmas and New Year.\n"], "codes.md"));
  md.append("product_id", ws);
  expect((await h.call("POST", "/api/knowledge-base/storage/upload", { token: jwt, raw: md })).status).toBe(202);
  await h.services.jobs.idle();
});
afterAll(async () => {
  await h.close();
  await fake.stop();
});
beforeEach(() => {
  fake.mode = "ok";
  fake.pieceDelayMs = 0;
  fake.respond = (r) => (/standalone/i.test(r.messages[0]!.content) ? "How often should backups run?" : `The passages answer "${/Question: (.+)/.exec(r.messages.at(-1)!.content)?.[1]}": see [1].`);
  h.services.llm.forget();
});

const chat = (body: unknown, auth = token, headers: Record<string, string> = {}) =>
  h.app.handle(new Request(`${BASE}/api/assistant/chat`, { method: "POST", headers: { authorization: `Bearer ${auth}`, "content-type": "application/json", ...headers }, body: JSON.stringify(body) }));

const names = (events: { event?: string }[]) => events.map((e) => e.event);
/** Event names with runs of `token` collapsed to one, to compare sequences. */
const shape = (events: { event?: string }[]) => names(events).filter((n, i, all) => n !== "token" || all[i - 1] !== "token");

describe("answer stream", () => {
  test("events in order, tokens adding up to the answer, cited sources with pages, SSE headers", async () => {
    const res = await chat({ message: "How often should backups run?" });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toStartWith("text/event-stream");
    expect(res.headers.get("cache-control")).toContain("no-cache");
    expect(res.headers.get("x-accel-buffering")).toBe("no");
    const events = await allEvents(res);
    expect(shape(events)).toEqual(["session", "thinking", "thinking", "token", "ai_response", "done"]);
    expect(events.map((e) => Number(e.id))).toEqual(events.map((_, i) => i + 1));
    expect(events[1]!.data).toEqual({ stage: "retrieving" });
    expect(events[2]!.data).toEqual({ stage: "generating" });
    const tokens = events.filter((e) => e.event === "token").map((e) => e.data.delta as string);
    expect(tokens.length).toBeGreaterThan(3);
    const response = events.find((e) => e.event === "ai_response")!.data;
    expect(response.answer).toBe(tokens.join(""));
    expect(response.answer).toContain("[1]");
    expect(response.metadata).toMatchObject({ model: FAKE_MODEL, mode: "llm" });
    expect(response.metadata.latency_ms).toBeGreaterThanOrEqual(0);
    expect(response.metadata.ttft_ms).toBeGreaterThanOrEqual(0);
    expect(response.metadata.completion_tokens).toBe(tokens.length);
    expect(response.metadata.prompt_tokens).toBeGreaterThan(0);
    const first = response.sources[0];
    expect(first).toMatchObject({ index: 1, file_name: "ops.pdf", page: 3 });
    expect(first.excerpt).toContain("backup command");
    expect(typeof first.chunk_id).toBe("number");
    expect(typeof first.score).toBe("number");
    expect(first.file_id).toMatch(/^[0-9a-f-]{36}$/);

    // The model saw the passages numbered, with file and page, and was asked for a bounded answer.
    const sent = fake.requests.at(-1)!;
    expect(sent.messages[0]!.role).toBe("system");
    const prompt = sent.messages.at(-1)!.content;
    expect(prompt).toContain("[1] ops.pdf, page 3");
    expect(prompt).toContain("Question: How often should backups run?");
    expect(sent.options).toMatchObject({ num_ctx: 8192, num_predict: 1024 });
  });

  test("a name or code only keyword search finds reaches the model (hybrid retrieval)", async () => {
    const events = await allEvents(await chat({ message: "What is ZX-9042?" }));
    const response = events.find((e) => e.event === "ai_response")!.data;
    expect(response.sources[0].file_name).toBe("codes.md");
    expect(response.sources[0].excerpt).toContain("ZX-9042");
    expect(response.sources[0].page).toBeUndefined();
  });

  test("a follow-up is rewritten into a standalone query from the history before retrieval", async () => {
    const first = await allEvents(await chat({ message: "What does error ZX-9042 mean?" }));
    const sessionId = first[0]!.data.session_id as string;
    fake.requests.length = 0;
    const events = await allEvents(await chat({ message: "and what about the nightly one?", session_id: sessionId }));
    expect(events[0]!.data.session_id).toBe(sessionId);
    const [rewrite, answer] = fake.requests;
    expect(rewrite!.stream).toBe(false);
    expect(rewrite!.messages[0]!.content).toMatch(/standalone/);
    expect(rewrite!.messages[1]!.content).toContain("User: What does error ZX-9042 mean?");
    expect(rewrite!.messages[1]!.content).toContain("Follow-up: and what about the nightly one?");
    // Retrieval used the rewrite ("How often should backups run?"): the backups page comes first.
    const response = events.find((e) => e.event === "ai_response")!.data;
    expect(response.sources[0]).toMatchObject({ file_name: "ops.pdf", page: 3 });
    // The answer prompt carries the earlier exchange and the user's own words.
    expect(answer!.messages.map((m) => m.role)).toEqual(["system", "user", "assistant", "user"]);
    expect(answer!.messages.at(-1)!.content).toContain("Question: and what about the nightly one?");
  });

  test("a client-chosen new session id is taken and continued", async () => {
    const id = `ide-${crypto.randomUUID()}`;
    const events = await allEvents(await chat({ message: "Who do I ask for a VPN profile?", session_id: id }));
    expect(events[0]!.data.session_id).toBe(id);
    const history = await h.call("GET", `/api/assistant/chat/history?session_id=${id}`, { token });
    expect(history.status).toBe(200);
    expect(history.body.data.messages.map((m: { role: string }) => m.role)).toEqual(["user", "assistant"]);
  });

  test("a signed-in user names the workspace; without one the request is refused before streaming", async () => {
    const ok = await chat({ message: "How often should backups run?", product_id: ws }, jwt);
    expect(names(await allEvents(ok)).at(-1)).toBe("done");
    const missing = await chat({ message: "How often should backups run?" }, jwt);
    expect(missing.status).toBe(400);
    expect(((await missing.json()) as { message: string }).message).toContain("product_id");
  });
});

describe("without a usable model", () => {
  test("model missing: retrieval-only answer with cited passages; /health says why", async () => {
    fake.mode = "missing-model";
    const events = await allEvents(await chat({ message: "How often should backups run?" }));
    expect(shape(events)).toEqual(["session", "thinking", "thinking", "token", "ai_response", "done"]);
    const response = events.find((e) => e.event === "ai_response")!.data;
    expect(response.metadata.mode).toBe("retrieval-only");
    expect(response.answer).toContain("No language model is available");
    expect(response.answer).toContain("ollama pull llama3.2");
    expect(response.answer).toContain("[1] ops.pdf, page 3");
    expect(response.sources[0]).toMatchObject({ index: 1, page: 3 });
    const health = await h.call("GET", "/health", { token: jwt }); // details are for owners/admins
    expect(health.body.checks.llm).toEqual({ status: "unavailable", reason: 'the model "llama3.2" is not available in Ollama (run: ollama pull llama3.2)' });
  });

  test("Ollama down: retrieval-only, and /health names the address", async () => {
    const closed = Bun.serve({ port: 0, fetch: () => new Response() });
    const url = `http://127.0.0.1:${closed.port}`;
    closed.stop(true);
    const down = await createHarness({ HEARTH_OLLAMA_URL: url });
    try {
      const downJwt = await down.login();
      const downWs = await defaultWorkspaceId(down, downJwt);
      const res = await down.app.handle(
        new Request(`${BASE}/api/assistant/chat`, { method: "POST", headers: { authorization: `Bearer ${downJwt}`, "content-type": "application/json" }, body: JSON.stringify({ message: "hello?", product_id: downWs }) }),
      );
      const events = await allEvents(res);
      const response = events.find((e) => e.event === "ai_response")!.data;
      expect(response.metadata.mode).toBe("retrieval-only");
      expect(response.answer).toContain(`Ollama is not reachable at ${url}`);
      expect(response.sources).toEqual([]);
      const health = await down.call("GET", "/health", { token: downJwt });
      expect(health.body.checks.llm).toEqual({ status: "unavailable", reason: `Ollama is not reachable at ${url}` });
    } finally {
      await down.close();
    }
  });

  test("Ollama answering 500 to everything: retrieval-only with Ollama's own message", async () => {
    fake.mode = "error";
    const events = await allEvents(await chat({ message: "How often should backups run?" }));
    const response = events.find((e) => e.event === "ai_response")!.data;
    expect(response.metadata.mode).toBe("retrieval-only");
    expect(response.answer).toContain("Ollama failed: something went wrong in the runner");
    expect(response.sources[0]).toMatchObject({ file_name: "ops.pdf", page: 3 });
  });

  test("Ollama failing mid-answer: error then done, and the partial answer is stored as interrupted", async () => {
    fake.mode = "fail-midstream";
    fake.failAfter = 3;
    const events = await allEvents(await chat({ message: "How often should backups run?" }));
    expect(shape(events)).toEqual(["session", "thinking", "thinking", "token", "error", "done"]);
    expect(events.filter((e) => e.event === "token")).toHaveLength(3);
    const error = events.find((e) => e.event === "error")!.data;
    expect(error.error).toBe("ModelFailed");
    expect(error.message).toContain("llama runner process has terminated");
    const history = await h.call("GET", `/api/assistant/chat/history?session_id=${events[0]!.data.session_id}`, { token });
    const [question, answer] = history.body.data.messages;
    expect(question).toMatchObject({ role: "user", status: "complete" });
    expect(answer).toMatchObject({ role: "assistant", status: "interrupted" });
    expect(answer.content.length).toBeGreaterThan(0);
  });
});

describe("a caller who leaves", () => {
  test("disconnecting aborts generation at Ollama; the partial answer is kept as interrupted", async () => {
    fake.pieceDelayMs = 50;
    fake.respond = () => Array.from({ length: 200 }, (_, i) => `word${i}`).join(" ");
    const server = Bun.serve({ port: 0, fetch: (req) => h.app.handle(req) });
    try {
      const abort = new AbortController();
      const res = await fetch(`http://127.0.0.1:${server.port}/api/assistant/chat`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify({ message: "Tell me everything about backups" }),
        signal: abort.signal,
      });
      const reader = readSse(res);
      const session = await reader.until("session");
      await reader.until("token");
      abort.abort();
      const deadline = Date.now() + 5000;
      while (fake.hangUps === 0 && Date.now() < deadline) await Bun.sleep(20);
      expect(fake.hangUps).toBe(1);
      await Bun.sleep(50);
      const history = await h.call("GET", `/api/assistant/chat/history?session_id=${session!.data.session_id}`, { token });
      const answer = history.body.data.messages[1];
      expect(answer).toMatchObject({ role: "assistant", status: "interrupted" });
      expect(answer.content.split(" ").length).toBeLessThan(200);
    } finally {
      server.stop(true);
    }
  });
});

describe("history and sessions", () => {
  test("history pages through a session's messages with sources; sessions list and delete", async () => {
    const id = `paging-${crypto.randomUUID()}`;
    for (const q of ["How often should backups run?", "Who do I ask for a VPN profile?"]) await allEvents(await chat({ message: q, session_id: id }));
    const all = await h.call("GET", `/api/assistant/chat/history?session_id=${id}`, { token });
    expect(all.body.pagination).toEqual({ page: 1, pageSize: 50, total: 4 });
    expect(all.body.data.title).toBe("How often should backups run?");
    const [q1, a1] = all.body.data.messages;
    expect(q1).toMatchObject({ role: "user", content: "How often should backups run?", status: "complete" });
    expect(q1.sources).toBeUndefined();
    expect(a1.sources[0]).toMatchObject({ index: 1, file_name: "ops.pdf", page: 3 });
    expect(a1.metadata).toMatchObject({ mode: "llm", model: FAKE_MODEL });
    const page2 = await h.call("GET", `/api/assistant/chat/history?session_id=${id}&page=2&pageSize=3`, { token });
    expect(page2.body.data.messages).toHaveLength(1);
    expect(page2.body.data.messages[0].role).toBe("assistant");

    const sessions = await h.call("GET", `/api/assistant/chat/sessions?product_id=${ws}`, { token: jwt });
    expect(sessions.status).toBe(200);
    expect(sessions.body.data.find((s: { session_id: string }) => s.session_id === id)).toMatchObject({ message_count: 4, product_id: ws });

    expect((await h.call("DELETE", `/api/assistant/chat/sessions/${id}`, { token })).status).toBe(200);
    expect((await h.call("GET", `/api/assistant/chat/history?session_id=${id}`, { token })).status).toBe(404);
    expect((await h.call("DELETE", `/api/assistant/chat/sessions/${id}`, { token })).status).toBe(404);
  });

  test("another workspace's session, history and knowledge bases are not found", async () => {
    const mine = await allEvents(await chat({ message: "How often should backups run?" }));
    const sessionId = mine[0]!.data.session_id;
    const other = await secondTenant(h, jwt, `Isolated ${crypto.randomUUID().slice(0, 6)}`);
    const otherToken = (await h.call("POST", "/api/api-tokens", { token: other.jwt, body: { product_id: other.workspaceId, token_name: "t" } })).body.data.token;

    expect((await h.call("GET", `/api/assistant/chat/history?session_id=${sessionId}`, { token: otherToken })).status).toBe(404);
    // Our id names a session of their own workspace: it starts empty and ours is untouched.
    const hijack = await allEvents(await chat({ message: "continue", session_id: sessionId }, otherToken));
    expect(hijack[0]!.data.session_id).toBe(sessionId);
    const theirs1 = await h.call("GET", `/api/assistant/chat/history?session_id=${sessionId}`, { token: otherToken });
    expect(theirs1.body.data.messages.map((m: { content: string }) => m.content)[0]).toBe("continue");
    const ours = await h.call("GET", `/api/assistant/chat/history?session_id=${sessionId}`, { token });
    expect(ours.body.data.messages.map((m: { content: string }) => m.content)[0]).toBe("How often should backups run?");
    await h.call("DELETE", `/api/assistant/chat/sessions/${sessionId}`, { token: otherToken });
    expect((await h.call("GET", `/api/assistant/chat/history?session_id=${sessionId}`, { token: other.jwt })).status).toBe(404);
    expect((await h.call("DELETE", `/api/assistant/chat/sessions/${sessionId}`, { token: other.jwt })).status).toBe(404);
    const listed = await h.call("GET", "/api/assistant/chat/sessions", { token: otherToken });
    expect(listed.body.data).toEqual([]);

    const kbs = await h.call("GET", `/api/knowledge-base/${ws}`, { token: jwt });
    const myKb = kbs.body.data[0].id;
    expect((await chat({ message: "backups?", knowledge_base_ids: [myKb] }, otherToken)).status).toBe(404);
    // The other tenant's own answer draws on nothing of ours.
    const theirs = await allEvents(await chat({ message: "How often should backups run?" }, otherToken));
    expect(theirs.find((e) => e.event === "ai_response")!.data.sources).toEqual([]);
  });
});

describe("bad input is refused as JSON before any streaming", () => {
  const cases: [string, unknown, number][] = [
    ["missing message", {}, 400],
    ["empty message", { message: "" }, 400],
    ["blank message", { message: "  \n " }, 400],
    ["message over 8000 characters", { message: "x".repeat(8001) }, 422],
    ["message of the wrong type", { message: 42 }, 422],
    ["unknown field", { message: "hi", sesion_id: "typo" }, 422],
    ["session id with a slash", { message: "hi", session_id: "../etc" }, 400],
    ["top_k out of range", { message: "hi", top_k: 500 }, 422],
  ];
  for (const [name, body, status] of cases) {
    test(name, async () => {
      const res = await chat(body);
      expect(res.status).toBe(status);
      expect(res.headers.get("content-type")).toContain("application/json");
      expect(((await res.json()) as { success: boolean }).success).toBe(false);
    });
  }

  test("malformed JSON, no credentials, and a USER token choosing the model", async () => {
    const malformed = await h.app.handle(new Request(`${BASE}/api/assistant/chat`, { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: '{"message": "hi"' }));
    expect(malformed.status).toBe(400);
    expect(((await malformed.json()) as { success: boolean }).success).toBe(false);
    const anonymous = await h.app.handle(new Request(`${BASE}/api/assistant/chat`, { method: "POST", headers: { "content-type": "application/json" }, body: '{"message":"hi"}' }));
    expect(anonymous.status).toBe(401);
    const chosen = await chat({ message: "hi", model: "some-other-model" });
    expect(chosen.status).toBe(403);
    const byUser = await allEvents(await chat({ message: "hi", model: "some-other-model", product_id: ws }, jwt));
    const answer = byUser.find((e) => e.event === "ai_response")!.data;
    expect(answer.metadata).toMatchObject({ model: "some-other-model", mode: "retrieval-only" });
  });
});

describe("bodies that are not a JSON object", () => {
  for (const [name, contentType, body, status, says] of [
    ["plain text", "text/plain", "hello", 415, "send a JSON object"],
    ["a form", "application/x-www-form-urlencoded", "message=hello", 415, "send a JSON object"],
    ["a JSON array", "application/json", "[1, 2]", 400, "must be a JSON object"],
    ["JSON null", "application/json", "null", 400, "must be a JSON object"],
  ] as const) {
    test(`${name} → ${status} that says so`, async () => {
      const res = await h.app.handle(new Request(`${BASE}/api/assistant/chat`, { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": contentType }, body }));
      expect(res.status).toBe(status);
      expect(((await res.json()) as { message: string }).message).toContain(says);
    });
  }
});
