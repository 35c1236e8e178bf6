// Deleting a workflow, an agent or a workspace with a long history removes its ended executions
// a slice at a time with requests answered in between (platform/db/drain.ts), and leaves none.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { drainedInSlices } from "../../support/drain";
import { startedHarness, defaultWorkspaceId, type Harness } from "../../support/harness";

let h: Harness;
let jwt: string;
beforeAll(async () => void ({ h, jwt } = await startedHarness()));
afterAll(() => h.close());

const HISTORY = 3_000;
const graph = {
  nodes: [{ id: "t", type: "trigger.manual" }, { id: "x", type: "transform", config: { expression: "input.n * 2" } }, { id: "o", type: "output" }],
  edges: [{ from: "t", to: "x" }, { from: "x", to: "o" }],
};
const executionsOf = (column: string, id: string) =>
  (h.services.storage.sqlite.query(`SELECT count(*) AS n FROM workflow_executions WHERE ${column} = ?`).get(id) as { n: number }).n;

/** A workflow of `productId` with one real execution and HISTORY more copied from it (ended, as months of runs leave them). */
async function busyWorkflow(productId: string) {
  const id = (await h.call("POST", "/api/workflow-base", { token: jwt, body: { product_id: productId, name: "busy", graph } })).body.data.id as string;
  const run = await h.call("POST", "/api/workflow/execute", { token: jwt, body: { workflow_id: id, input: { n: 1 } } });
  expect(run.status).toBeLessThan(300);
  expect((await h.services.workflow.engine.until(run.body.data.id, ["succeeded", "failed"], 10_000)).status).toBe("succeeded");
  h.services.storage.sqlite.run(
    `INSERT INTO workflow_executions (id, product_id, workflow_id, version_id, mode, status, trigger_type, input, output, created_at, started_at, finished_at)
     WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${HISTORY})
     SELECT lower(hex(randomblob(16))), product_id, workflow_id, version_id, mode, status, trigger_type, input, output, created_at, started_at, finished_at
     FROM workflow_executions, n WHERE workflow_id = ? AND status = 'succeeded'`,
    [id],
  );
  expect(executionsOf("workflow_id", id)).toBe(HISTORY + 1);
  return id;
}

test("a workflow's ended executions are drained with requests answered in between", async () => {
  const ws = await defaultWorkspaceId(h, jwt);
  const id = await busyWorkflow(ws);
  expect(await drainedInSlices(h, h.call("DELETE", `/api/workflow-base/${id}`, { token: jwt }), () => executionsOf("workflow_id", id))).toBe(true);
  expect((await h.call("GET", `/api/workflow-base/${id}`, { token: jwt })).status).toBe(404);
}, 30_000);

test("so are a workspace's", async () => {
  const ws = (await h.call("POST", "/api/products", { token: jwt, body: { name: "Busy workspace" } })).body.data.id as string;
  await busyWorkflow(ws);
  expect(await drainedInSlices(h, h.call("DELETE", `/api/products/${ws}`, { token: jwt }), () => executionsOf("product_id", ws))).toBe(true);
}, 30_000);
