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

test("meeting notes: a URL that is not audio fails the execution with a readable error", async () => {
  const a = (await h.call("POST", "/api/agent-base/install", { token: jwt, body: { product_id: ws, template: "meeting-notes" } })).body.data;
  const e = (await h.call("POST", `/api/agent-base/${a.id}/invoke`, { token: jwt, body: { input: { audio_url: `${audio.url}README.md` }, wait: true } })).body.data;
  expect(e.status).toBe("failed");
  expect(e.error).toMatch(/transcribe/);
});
