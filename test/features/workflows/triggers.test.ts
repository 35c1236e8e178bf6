// Trigger endpoints (spec §4.6): the trigger nodes of active versions listed without secrets, a
// manual trigger run by request (only the one that fired runs), last runs, a version's manual
// triggers with stable ids, 409 for non-manual triggers, 404 across workspaces.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHarness, defaultWorkspaceId, secondTenant, type Harness } from "../../support/harness";
import { until } from "./support";

let h: Harness;
let jwt: string;
let ws: string;

const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const graph = (manualId = "start") => ({
  nodes: [
    { id: manualId, type: "trigger.manual" },
    { id: "other", type: "trigger.manual" },
    { id: "tick", type: "trigger.schedule", config: { cron: "0 8 * * 1-5", timezone: "Europe/Berlin" } },
    { id: "hook", type: "trigger.webhook", config: { path: `triggers-test-${manualId}-hook`, secret: SECRET, events: ["push"] } },
    { id: "shape", type: "transform", config: { expression: "{ 'n': input.n * 2 }" } },
  ],
  edges: [
    { from: manualId, to: "shape" },
    { from: "other", to: "shape" },
  ],
});

beforeAll(async () => {
  h = await createHarness({ HEARTH_PUBLIC_URL: "https://hearth.example.org/" });
  (h as Harness & { jwt: string }).jwt = jwt = await h.login();
  ws = await defaultWorkspaceId(h, jwt);
  h.services.workflow.start(); // the engine and scheduler only: no model loading for these tests
});
afterAll(() => h.close());

describe("triggers", () => {
  let workflow: any;
  let manual: any;

  test("lists the trigger nodes of the active version; a webhook's secret is never shown", async () => {
    workflow = (await h.call("POST", "/api/workflow-base", { token: jwt, body: { product_id: ws, name: "Triggered", graph: graph() } })).body.data;
    const r = await h.call("GET", `/api/agent-base/triggers?product_id=${ws}`, { token: jwt });
    expect(r.status).toBe(200);
    const mine = r.body.data.filter((t: any) => t.workflow_id === workflow.id);
    expect(mine.map((t: any) => `${t.type}:${t.node_id}`).sort()).toEqual(["manual:other", "manual:start", "schedule:tick", "webhook:hook"]);
    expect(mine.every((t: any) => t.version_id === workflow.active_version_id)).toBe(true);
    const hook = mine.find((t: any) => t.type === "webhook");
    expect(hook.config).toEqual({ path: "triggers-test-start-hook", events: ["push"] });
    expect(hook.has_secret).toBe(true);
    expect(hook.webhook_url).toBe("https://hearth.example.org/api/webhook/triggers-test-start-hook");
    expect(r.text).not.toContain("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");
    const tick = mine.find((t: any) => t.type === "schedule");
    // 08:00 Berlin on a weekday: 07:00 or 06:00 UTC depending on the season.
    expect(new Date(tick.next_run_at).getTime()).toBeGreaterThan(h.clock.now());
    expect(["06:00", "07:00"]).toContain(tick.next_run_at.slice(11, 16));
    manual = mine.find((t: any) => t.node_id === "start");
  });

  test("POST /triggers and /triggers/{id}/execute run a manual trigger: 202, trigger type manual, only that trigger fires", async () => {
    const a = await h.call("POST", "/api/agent-base/triggers", { token: jwt, body: { trigger_id: manual.id, input: { n: 21 } } });
    expect(a.status).toBe(202);
    expect(a.body.data.trigger).toEqual({ type: "manual", id: manual.id });
    expect(a.body.data.version_id).toBe(workflow.active_version_id);
    const done = await until(h, a.body.data.id);
    expect(done.status).toBe("succeeded");
    expect(done.output).toEqual({ n: 42 });
    const byNode = Object.fromEntries(done.nodes.map((n: any) => [n.node_id, n.status]));
    expect(byNode).toMatchObject({ start: "succeeded", other: "skipped", tick: "skipped", hook: "skipped" });

    h.clock.advance(1000); // newest first is by creation time, which the manual clock only moves when told
    const b = await h.call("POST", `/api/agent-base/triggers/${manual.id}/execute`, { token: jwt, body: { input: { n: 1 } } });
    expect(b.status).toBe(202);
    expect((await until(h, b.body.data.id)).output).toEqual({ n: 2 });
    h.clock.advance(1000);
    const noBody = await h.call("POST", `/api/agent-base/triggers/${manual.id}/execute`, { token: jwt });
    expect(noBody.status).toBe(202);
    await until(h, noBody.body.data.id);

    const one = await h.call("GET", `/api/agent-base/triggers/${manual.id}`, { token: jwt });
    expect(one.status).toBe(200);
    expect(one.body.data.last_runs.map((e: any) => e.id)).toEqual([noBody.body.data.id, b.body.data.id, a.body.data.id]);
    expect(one.body.data.last_runs[1].input).toEqual({ n: 1 });
  });

  test("a schedule or webhook trigger is not run by request: 409", async () => {
    const all = (await h.call("GET", `/api/agent-base/triggers?product_id=${ws}`, { token: jwt })).body.data.filter((t: any) => t.workflow_id === workflow.id);
    for (const t of all.filter((t: any) => t.type !== "manual")) {
      const r = await h.call("POST", `/api/agent-base/triggers/${t.id}/execute`, { token: jwt, body: {} });
      expect(r.status).toBe(409);
      expect(r.body.message).toContain(`${t.type} trigger`);
    }
    expect((await h.call("POST", "/api/agent-base/triggers", { token: jwt, body: { trigger_id: crypto.randomUUID() } })).status).toBe(404);
    expect((await h.call("POST", "/api/agent-base/triggers", { token: jwt, body: { trigger_id: "nope" } })).status).toBe(422);
  });

  test("a version's manual triggers, also of an inactive version, carry the ids they have while active", async () => {
    const saved = await h.call("PUT", `/api/workflow-base/${workflow.id}`, { token: jwt, body: { graph: graph("begin"), activate: false } });
    const draft = saved.body.data.versions.find((v: any) => v.version === 2).id;
    const old = await h.call("GET", `/api/agent-base/triggers/manual/version/${workflow.active_version_id}`, { token: jwt });
    expect(old.status).toBe(200);
    expect(old.body.data.map((t: any) => t.node_id).sort()).toEqual(["other", "start"]);
    expect(old.body.data.find((t: any) => t.node_id === "start").id).toBe(manual.id);
    const next = await h.call("GET", `/api/agent-base/triggers/manual/version/${draft}`, { token: jwt });
    expect(next.body.data.map((t: any) => t.node_id).sort()).toEqual(["begin", "other"]);
    expect(next.body.data.every((t: any) => t.version_id === draft && t.type === "manual")).toBe(true);
    // Activating the draft: "other" keeps its id, "start" is gone, "begin" has the id listed before.
    const before = (await h.call("GET", `/api/agent-base/triggers?product_id=${ws}`, { token: jwt })).body.data;
    await h.call("PUT", `/api/workflow-base/${workflow.id}`, { token: jwt, body: { active_version_id: draft } });
    const after = (await h.call("GET", `/api/agent-base/triggers?product_id=${ws}`, { token: jwt })).body.data.filter((t: any) => t.workflow_id === workflow.id);
    expect(after.find((t: any) => t.node_id === "begin").id).toBe(next.body.data.find((t: any) => t.node_id === "begin").id);
    expect(after.find((t: any) => t.node_id === "other").id).toBe(before.find((t: any) => t.node_id === "other" && t.workflow_id === workflow.id).id);
    expect(after.some((t: any) => t.node_id === "start")).toBe(false);
    expect((await h.call("GET", `/api/agent-base/triggers/${manual.id}`, { token: jwt })).status).toBe(404);
    expect((await h.call("GET", "/api/agent-base/triggers/manual/version/not-a-uuid", { token: jwt })).status).toBe(400);
  });

  test("another workspace's triggers are 404, and it cannot run them", async () => {
    const other = await secondTenant(h, jwt, "Trigger Other");
    const all = (await h.call("GET", `/api/agent-base/triggers?product_id=${ws}`, { token: jwt })).body.data.filter((t: any) => t.workflow_id === workflow.id);
    const mine = all.find((t: any) => t.type === "manual");
    expect((await h.call("GET", `/api/agent-base/triggers/${mine.id}`, { token: other.jwt })).status).toBe(404);
    expect((await h.call("POST", `/api/agent-base/triggers/${mine.id}/execute`, { token: other.jwt, body: {} })).status).toBe(404);
    expect((await h.call("POST", "/api/agent-base/triggers", { token: other.jwt, body: { trigger_id: mine.id } })).status).toBe(404);
    expect((await h.call("GET", `/api/agent-base/triggers/manual/version/${workflow.active_version_id}`, { token: other.jwt })).status).toBe(404);
    expect((await h.call("GET", `/api/agent-base/triggers?product_id=${ws}`, { token: other.jwt })).status).toBe(404);
    const theirs = await h.call("GET", `/api/agent-base/triggers?product_id=${other.workspaceId}`, { token: other.jwt });
    expect(theirs.status).toBe(200);
    expect(theirs.body.data).toEqual([]);
    expect((await h.call("GET", `/api/agent-base/triggers?product_id=${ws}`)).status).toBe(401);
  });
});
