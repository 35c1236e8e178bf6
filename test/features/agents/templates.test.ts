// Templates end to end: meeting notes from a spoken recording (espeak-ng WAV served over HTTP,
// transcribed by the real Whisper model, notes written by the model), and the document summarizer.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import { createHarness, defaultWorkspaceId, type Harness } from "../../support/harness";
import { startOllamaFake, type OllamaFake } from "../../support/ollama-fake";

let h: Harness;
let fake: OllamaFake;
let jwt: string;
let ws: string;
let audio: ReturnType<typeof Bun.serve>;

beforeAll(async () => {
  audio = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: (req) => new Response(Bun.file(join(import.meta.dir, "../../fixtures/audio", new URL(req.url).pathname.slice(1)))) });
  fake = startOllamaFake({
    respond: (r) => {
      const transcript = r.messages.at(-1)?.content ?? "";
      return `Summary: the team asked for a call back. Action items: call back tomorrow morning. (${transcript.length} characters read)`;
    },
  });
  h = await createHarness({ HEARTH_OLLAMA_URL: fake.url, HEARTH_HTTP_ALLOW: "127.0.0.1" });
  jwt = await h.login();
  ws = await defaultWorkspaceId(h, jwt);
  h.services.start();
});
afterAll(async () => {
  await h.close();
  await fake.stop();
  audio.stop(true);
});

test("meeting notes: a recording is transcribed locally and turned into notes", async () => {
  const a = (await h.call("POST", "/api/agent-base/install", { token: jwt, body: { product_id: ws, template: "meeting-notes", settings: { language: "en" } } })).body.data;
  const r = await h.call("POST", `/api/agent-base/${a.id}/invoke`, { token: jwt, body: { input: { audio_url: `${audio.url}callback.wav` }, wait: true } });
  expect(r.status).toBe(200);
  const e = r.body.data;
  expect(e.status).toBe("succeeded");
  expect(e.output.transcript.toLowerCase()).toContain("call me back tomorrow");
  expect(e.output.text).toContain("Action items");
  // The model was given the transcript Whisper heard.
  expect(fake.requests.at(-1)!.messages.at(-1)!.content.toLowerCase()).toContain("call me back tomorrow");
  const nodes = (await h.call("GET", `/api/workflow/${e.id}/status`, { token: jwt })).body.data.nodes;
  expect(nodes.find((n: any) => n.node_id === "transcribe").output.language).toBe("en");
}, 60_000);

test("meeting notes: a transcript given instead of a recording goes straight to the notes; neither is 422", async () => {
  // A recording on the user's own machine: POST /api/audio/transcriptions, then its text here.
  fake.respond = (r) => `Summary: ${(r.messages.at(-1)?.content ?? "").includes("ship on Friday") ? "they ship on Friday" : "nothing heard"}.`;
  const a = (await h.call("POST", "/api/agent-base/install", { token: jwt, body: { product_id: ws, template: "meeting-notes" } })).body.data;
  const r = await h.call("POST", `/api/agent-base/${a.id}/invoke`, { token: jwt, body: { input: { transcript: "Anna: we ship on Friday. Ben: I write the release notes." }, wait: true } });
  expect(r.status).toBe(200);
  expect(r.body.data.status).toBe("succeeded");
  expect(r.body.data.output).toMatchObject({ text: "Summary: they ship on Friday.", transcript: "Anna: we ship on Friday. Ben: I write the release notes." });
  const nodes = (await h.call("GET", `/api/workflow/${r.body.data.id}/status`, { token: jwt })).body.data.nodes;
  expect(nodes.find((n: any) => n.node_id === "transcribe").status).toBe("skipped");
  for (const input of [{}, { transcript: "   " }, { audio_url: "" }]) {
    const refused = await h.call("POST", `/api/agent-base/${a.id}/invoke`, { token: jwt, body: { input, wait: true } });
    expect(refused.status).toBe(422);
    expect(refused.body.message).toMatch(/^input\.audio_url or input\.transcript is required/);
  }
  const catalog = (await h.call("GET", "/api/agent-base/catalog", { token: jwt })).body.data.find((t: any) => t.id === "meeting-notes");
  expect(Object.keys(catalog.input_schema.properties)).toEqual(["audio_url", "transcript"]);
});

test("meeting notes: a URL that is not audio fails the execution with a readable error", async () => {
  const a = (await h.call("POST", "/api/agent-base/install", { token: jwt, body: { product_id: ws, template: "meeting-notes" } })).body.data;
  const e = (await h.call("POST", `/api/agent-base/${a.id}/invoke`, { token: jwt, body: { input: { audio_url: `${audio.url}README.md` }, wait: true } })).body.data;
  expect(e.status).toBe("failed");
  expect(e.error).toMatch(/transcribe/);
});

test("ticket triage: a signed GitHub-style delivery runs the agent; an unsigned one is refused", async () => {
  const secret = "triage-secret-0123456789";
  const a = (await h.call("POST", "/api/agent-base/install", { token: jwt, body: { product_id: ws, template: "ticket-triage", settings: { webhook_path: "triage-tickets-77", secret, events: ["issues"], categories: ["billing", "outage"] } } })).body.data;
  fake.respond = (r) => `Priority: urgent. Category: outage. (${(r.messages.at(-1)?.content ?? "").includes("Checkout is down") ? "read the ticket" : "no ticket"})`;
  const body = JSON.stringify({ action: "opened", issue: { title: "Checkout is down", body: "500 on every payment" } });
  const sig = new Bun.CryptoHasher("sha256", secret).update(body).digest("hex");
  const unsigned = await h.call("POST", "/api/webhook/triage-tickets-77", { raw: body, headers: { "content-type": "application/json", "x-github-event": "issues" } });
  expect(unsigned.status).toBe(401);
  const r = await h.call("POST", "/api/webhook/triage-tickets-77", { raw: body, headers: { "content-type": "application/json", "x-github-event": "issues", "x-github-delivery": crypto.randomUUID(), "x-hub-signature-256": `sha256=${sig}` } });
  expect(r.status).toBe(200);
  const done = await h.services.workflow.engine.until(r.body.data.execution_id);
  expect(done.status).toBe("succeeded");
  expect((done.output as { text: string }).text).toBe("Priority: urgent. Category: outage. (read the ticket)");
  const ex = (await h.call("GET", `/api/agent-base/${a.id}/executions`, { token: jwt })).body.data[0];
  expect(ex.trigger.type).toBe("webhook");
  expect(fake.requests.at(-1)!.messages.at(-1)!.content).toContain("Categories: billing, outage");
});

test("daily digest: fires from the schedule when the clock reaches 08:00 in its time zone", async () => {
  h.clock.set(Date.parse("2026-03-02T06:00:00Z")); // a Monday, 07:00 in Berlin
  fake.respond = () => "Digest: nothing new.";
  const a = (await h.call("POST", "/api/agent-base/install", { token: jwt, body: { product_id: ws, template: "daily-digest", settings: { cron: "0 8 * * 1-5", timezone: "Europe/Berlin", topics: "backups" } } })).body.data;
  const triggers = (await h.call("GET", `/api/agent-base/triggers?product_id=${ws}`, { token: jwt })).body.data.filter((t: any) => t.workflow_id === a.workflow_id && t.type === "schedule");
  expect(triggers[0].next_run_at).toBe("2026-03-02T07:00:00.000Z");
  h.clock.set(Date.parse("2026-03-02T06:59:00Z"));
  await h.services.workflow.scheduler.tick();
  expect((await h.call("GET", `/api/agent-base/${a.id}/executions`, { token: jwt })).body.data).toHaveLength(0);
  h.clock.set(Date.parse("2026-03-02T07:00:01Z"));
  await h.services.workflow.scheduler.tick();
  const list = (await h.call("GET", `/api/agent-base/${a.id}/executions`, { token: jwt })).body.data;
  expect(list).toHaveLength(1);
  expect(list[0].trigger).toMatchObject({ type: "schedule", id: triggers[0].id });
  const done = await h.services.workflow.engine.until(list[0].id);
  expect(done.output).toMatchObject({ text: "Digest: nothing new." });
  expect(fake.requests.at(-1)!.messages.at(-1)!.content).toContain("Topics: backups");
});
