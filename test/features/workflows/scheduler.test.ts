// The scheduler on a moved clock: exact fire times across both DST changes in Europe/Berlin, no
// double fire (two ticks for one slot, a restart between fire and next_run_at), one catch-up run
// after an outage, and a fire skipped (and logged) while the trigger's previous run is unfinished.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { createHarness, defaultWorkspaceId, type Harness } from "../../support/harness";
import { createScheduler } from "../../../src/features/workflows/scheduler";
import { workflowExecutions, workflowTriggers } from "../../../src/features/workflows/table";

let h: Harness;
let jwt: string;
let ws: string;
const MIN = 60_000;
const HOUR = 60 * MIN;

beforeAll(async () => {
  h = await createHarness();
  (h as Harness & { jwt: string }).jwt = jwt = await h.login();
  ws = await defaultWorkspaceId(h, jwt);
  h.services.workflow.start(); // the engine and scheduler only: no model loading for these tests
});
afterAll(() => h.close());

const db = () => h.services.storage.db;
const scheduler = () => h.services.workflow.scheduler;

/** A workflow "schedule → transform" (or → approval) created at `at`; returns its trigger row. */
async function scheduled(cron: string, at: string, then: "transform" | "approval" = "transform") {
  h.clock.set(Date.parse(at));
  const next = then === "transform" ? { id: "work", type: "transform", config: { expression: "{ 'at': input.scheduled_at }" } } : { id: "work", type: "approval", config: { message: "go on?" } };
  const graph = { nodes: [{ id: "tick", type: "trigger.schedule", config: { cron, timezone: "Europe/Berlin" } }, next], edges: [{ from: "tick", to: "work" }] };
  const w = (await h.call("POST", "/api/workflow-base", { token: jwt, body: { product_id: ws, name: `cron ${cron}`, graph } })).body.data;
  const trigger = db().select().from(workflowTriggers).where(eq(workflowTriggers.workflowId, w.id)).get()!;
  return { workflow: w, trigger };
}

const executionsOf = (triggerId: string) => db().select().from(workflowExecutions).where(eq(workflowExecutions.triggerId, triggerId)).all();
const nextRunAt = (triggerId: string) => db().select().from(workflowTriggers).where(eq(workflowTriggers.id, triggerId)).get()!.nextRunAt!.getTime();

/** Moves the clock from its current time to `end` in `step`s, ticking each time; each fire runs to its end. */
async function walk(triggerId: string, end: string, step: number) {
  const fires: { scheduled: string; seen: number }[] = [];
  for (let t = h.clock.now() + step; t <= Date.parse(end); t += step) {
    h.clock.set(t);
    for (const o of scheduler().tick().filter((o) => o.trigger === triggerId)) {
      expect(o.outcome).toBe("fired");
      fires.push({ scheduled: new Date(o.scheduledAt).toISOString(), seen: t });
      await h.services.workflow.engine.until(o.executionId!, ["succeeded", "failed"], 10_000);
    }
  }
  for (const f of fires) {
    expect(f.seen).toBeGreaterThanOrEqual(Date.parse(f.scheduled));
    expect(f.seen - Date.parse(f.scheduled)).toBeLessThan(step);
  }
  // Each fire made exactly one execution, keyed by its scheduled time.
  expect(executionsOf(triggerId).map((e) => e.fireKey).sort()).toEqual(fires.map((f) => `${triggerId}:${Date.parse(f.scheduled)}`).sort());
  return fires.map((f) => f.scheduled);
}

async function remove(workflowId: string) {
  await h.call("DELETE", `/api/workflow-base/${workflowId}`, { token: jwt });
}

describe("cron across DST in Europe/Berlin", () => {
  test("'30 2 * * *' in March: 02:30 does not exist on the 29th and fires once, at 03:00 CEST (the end of the gap)", async () => {
    const { workflow, trigger } = await scheduled("30 2 * * *", "2026-03-27T12:00:00Z");
    expect(new Date(nextRunAt(trigger.id)).toISOString()).toBe("2026-03-28T01:30:00.000Z"); // 02:30 CET
    const fires = await walk(trigger.id, "2026-03-31T12:00:00Z", 10 * MIN);
    expect(fires).toEqual([
      "2026-03-28T01:30:00.000Z", // 02:30 CET (UTC+1)
      "2026-03-29T01:00:00.000Z", // 03:00 CEST: 02:00-03:00 is skipped that night
      "2026-03-30T00:30:00.000Z", // 02:30 CEST (UTC+2)
      "2026-03-31T00:30:00.000Z",
    ]);
    const run = executionsOf(trigger.id).find((e) => e.fireKey!.endsWith(String(Date.parse("2026-03-29T01:00:00Z"))))!;
    expect(run.status).toBe("succeeded");
    expect(run.triggerType).toBe("schedule");
    expect(run.output).toEqual({ at: "2026-03-29T01:00:00.000Z" });
    await remove(workflow.id);
  });

  test("'30 2 * * *' in October: 02:30 happens twice on the 25th and fires once, at the first (CEST)", async () => {
    const { workflow, trigger } = await scheduled("30 2 * * *", "2026-10-23T12:00:00Z");
    expect(await walk(trigger.id, "2026-10-27T12:00:00Z", 10 * MIN)).toEqual([
      "2026-10-24T00:30:00.000Z", // 02:30 CEST
      "2026-10-25T00:30:00.000Z", // the first 02:30 (CEST); not again at 01:30Z (02:30 CET)
      "2026-10-26T01:30:00.000Z", // 02:30 CET (UTC+1)
      "2026-10-27T01:30:00.000Z",
    ]);
    await remove(workflow.id);
  });

  test("'0 * * * *' fires every real hour across both changes: 01:00 then 03:00 in March, 02:00 twice in October", async () => {
    const spring = await scheduled("0 * * * *", "2026-03-28T22:30:00Z");
    expect(await walk(spring.trigger.id, "2026-03-29T03:30:00Z", 5 * MIN)).toEqual([
      "2026-03-28T23:00:00.000Z", // 00:00 CET
      "2026-03-29T00:00:00.000Z", // 01:00 CET
      "2026-03-29T01:00:00.000Z", // 03:00 CEST
      "2026-03-29T02:00:00.000Z", // 04:00 CEST
      "2026-03-29T03:00:00.000Z",
    ]);
    await remove(spring.workflow.id);
    const autumn = await scheduled("0 * * * *", "2026-10-24T22:30:00Z");
    expect(await walk(autumn.trigger.id, "2026-10-25T03:30:00Z", 5 * MIN)).toEqual([
      "2026-10-24T23:00:00.000Z", // 01:00 CEST
      "2026-10-25T00:00:00.000Z", // 02:00 CEST
      "2026-10-25T01:00:00.000Z", // 02:00 CET, the second one
      "2026-10-25T02:00:00.000Z", // 03:00 CET
      "2026-10-25T03:00:00.000Z",
    ]);
    await remove(autumn.workflow.id);
  });
});

describe("fires exactly once", () => {
  test("two ticks for one slot fire once; a restart between fire and next_run_at update is a no-op repeat", async () => {
    const { workflow, trigger } = await scheduled("0 * * * *", "2026-05-04T09:10:00Z");
    const slot = Date.parse("2026-05-04T10:00:00Z");
    h.clock.set(slot);
    const first = scheduler().tick().filter((o) => o.trigger === trigger.id);
    const again = scheduler().tick().filter((o) => o.trigger === trigger.id);
    expect(first.map((o) => o.outcome)).toEqual(["fired"]);
    expect(again).toEqual([]);
    await h.services.workflow.engine.until(first[0]!.executionId!, ["succeeded"], 10_000);
    expect(nextRunAt(trigger.id)).toBe(slot + HOUR);

    // As if Hearth died after the execution committed but before next_run_at moved on.
    db().update(workflowTriggers).set({ nextRunAt: new Date(slot) }).where(eq(workflowTriggers.id, trigger.id)).run();
    scheduler().stop();
    scheduler().start(); // the start-up tick
    expect(executionsOf(trigger.id)).toHaveLength(1);
    expect(nextRunAt(trigger.id)).toBe(slot + HOUR);
    const repeat = scheduler().tick();
    expect(repeat.filter((o) => o.trigger === trigger.id)).toEqual([]);
    await remove(workflow.id);
  });

  test("an outage over several slots catches up with ONE run at start, then goes on from now", async () => {
    const { workflow, trigger } = await scheduled("0 * * * *", "2026-06-01T08:30:00Z");
    const missed = nextRunAt(trigger.id);
    expect(new Date(missed).toISOString()).toBe("2026-06-01T09:00:00.000Z");
    scheduler().stop(); // Hearth is down from here
    h.clock.set(Date.parse("2026-06-01T14:20:00Z"));
    scheduler().start();
    const runs = executionsOf(trigger.id);
    expect(runs).toHaveLength(1);
    expect(runs[0]!.fireKey).toBe(`${trigger.id}:${missed}`);
    expect(runs[0]!.input).toMatchObject({ scheduled_at: "2026-06-01T09:00:00.000Z", fired_at: "2026-06-01T14:20:00.000Z" });
    expect(new Date(nextRunAt(trigger.id)).toISOString()).toBe("2026-06-01T15:00:00.000Z");
    await h.services.workflow.engine.until(runs[0]!.id, ["succeeded"], 10_000);
    expect(scheduler().tick().filter((o) => o.trigger === trigger.id)).toEqual([]);
    await remove(workflow.id);
  });

  test("a fire while the previous run still waits is skipped, logged, and next_run_at moves on", async () => {
    const { workflow, trigger } = await scheduled("0 * * * *", "2026-07-01T08:30:00Z", "approval");
    const logged: { msg: string; fields?: Record<string, unknown> }[] = [];
    const log = { info() {}, error() {}, warn: (msg: string, fields?: Record<string, unknown>) => void logged.push({ msg, fields }) };
    const watched = createScheduler({ db: db(), clock: h.clock, log, engine: h.services.workflow.engine });

    h.clock.set(Date.parse("2026-07-01T09:00:00Z"));
    const [fired] = watched.tick().filter((o) => o.trigger === trigger.id);
    expect(fired!.outcome).toBe("fired");
    await h.services.workflow.engine.until(fired!.executionId!, ["waiting"], 10_000);

    h.clock.set(Date.parse("2026-07-01T10:00:00Z"));
    const [skipped] = watched.tick().filter((o) => o.trigger === trigger.id);
    expect(skipped).toMatchObject({ outcome: "skipped", executionId: fired!.executionId });
    expect(executionsOf(trigger.id)).toHaveLength(1);
    expect(new Date(nextRunAt(trigger.id)).toISOString()).toBe("2026-07-01T11:00:00.000Z");
    expect(logged).toEqual([{ msg: "schedule.skipped", fields: expect.objectContaining({ trigger: trigger.id, scheduled_at: "2026-07-01T10:00:00.000Z", running_execution: fired!.executionId }) }]);

    const approved = await h.call("POST", `/api/workflow/${fired!.executionId}/continue`, { token: jwt, body: { input: { ok: true } } });
    expect(approved.status).toBe(200);
    await h.services.workflow.engine.until(fired!.executionId!, ["succeeded"], 10_000);
    h.clock.set(Date.parse("2026-07-01T11:00:00Z"));
    expect(watched.tick().filter((o) => o.trigger === trigger.id).map((o) => o.outcome)).toEqual(["fired"]);
    expect(executionsOf(trigger.id)).toHaveLength(2);
    await remove(workflow.id);
  });
});
