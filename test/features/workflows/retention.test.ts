// HEARTH_EXECUTION_RETENTION_DAYS: ended executions older than that go, with their node runs and
// events, and so do older webhook deliveries; executions in progress and recent ones stay; 0 keeps all.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHarness, defaultWorkspaceId, type Harness } from "../../support/harness";

const DAY = 24 * 3600 * 1000;
const graph = {
  nodes: [{ id: "t", type: "trigger.manual" }, { id: "ask", type: "approval", config: { message: "?" } }],
  edges: [{ from: "t", to: "ask" }],
};

/** A harness with one workflow: one execution waiting (in progress), and ended ones aged as given (days). */
async function withHistory(env: Record<string, string>, endedAgesDays: number[]) {
  const h = await createHarness({ HEARTH_WEBHOOK_RATE_LIMIT: "1000", ...env });
  const jwt = await h.login();
  h.services.workflow.engine.start();
  const ws = await defaultWorkspaceId(h, jwt);
  const w = (await h.call("POST", "/api/workflow-base", { token: jwt, body: { product_id: ws, name: "kept", graph } })).body.data;
  const run = async () => (await h.call("POST", "/api/workflow/execute", { token: jwt, body: { workflow_id: w.id, input: {} } })).body.data.id as string;
  const waiting = await run();
  await h.services.workflow.engine.until(waiting, ["waiting"], 10_000);
  const sqlite = h.services.storage.sqlite;
  // In progress for a year: never removed, whatever its age.
  sqlite.run("UPDATE workflow_executions SET created_at = ? WHERE id = ?", [h.clock.now() - 365 * DAY, waiting]);
  const ended: string[] = [];
  for (const age of endedAgesDays) {
    const id = await run();
    await h.services.workflow.engine.until(id, ["waiting"], 10_000);
    await h.call("POST", `/api/workflow/${id}/stop`, { token: jwt });
    const at = h.clock.now() - age * DAY;
    sqlite.run("UPDATE workflow_executions SET created_at = ?, finished_at = ? WHERE id = ?", [at, at, id]);
    ended.push(id);
  }
  sqlite.run("INSERT INTO webhook_deliveries (id, trigger_id, delivery_key, status, received_at) SELECT 'old-delivery', id, 'k-old', 'accepted', ? FROM workflow_triggers LIMIT 1", [h.clock.now() - 90 * DAY]);
  sqlite.run("INSERT INTO webhook_deliveries (id, trigger_id, delivery_key, status, received_at) SELECT 'new-delivery', id, 'k-new', 'accepted', ? FROM workflow_triggers LIMIT 1", [h.clock.now() - DAY]);
  const left = (table: string, column: string, ids: string[]) => ids.filter((id) => sqlite.query(`SELECT 1 FROM ${table} WHERE ${column} = ?`).get(id) !== null);
  return { h, waiting, ended, left };
}

describe("execution retention", () => {
  let setup: Awaited<ReturnType<typeof withHistory>>;
  beforeAll(async () => {
    setup = await withHistory({ HEARTH_EXECUTION_RETENTION_DAYS: "30" }, [90, 31, 29, 1]);
  });
  afterAll(() => setup.h.close());

  test("ended executions older than the retention go with their node runs and events; newer ones and those in progress stay", async () => {
    const { h, waiting, ended, left } = setup;
    const [old90, old31, young29, young1] = ended as [string, string, string, string];
    expect(left("workflow_node_runs", "execution_id", [old90, old31])).toEqual([old90, old31]);
    await h.services.workflow.retention.sweep();
    expect(left("workflow_executions", "id", [waiting, ...ended])).toEqual([waiting, young29, young1]);
    expect(left("workflow_node_runs", "execution_id", [old90, old31])).toEqual([]);
    expect(left("workflow_events", "execution_id", [old90, old31])).toEqual([]);
  });

  test("webhook deliveries older than the retention go too (their ids stop deduplicating then)", () => {
    expect(setup.left("webhook_deliveries", "id", ["old-delivery", "new-delivery"])).toEqual(["new-delivery"]);
  });
});

test("with 0 (the default) nothing is removed", async () => {
  const { h, waiting, ended, left } = await withHistory({}, [400]);
  try {
    await h.services.workflow.retention.sweep();
    expect(left("workflow_executions", "id", [waiting, ...ended])).toEqual([waiting, ...ended]);
  } finally {
    await h.close();
  }
});
