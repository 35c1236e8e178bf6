// An execution started by an agent's invoke_workflow (trigger api, id its parent) stops when its
// parent stops or fails, also after a restart between the two: the link is the stored trigger.
import { expect, test } from "bun:test";
import { createHarness, defaultWorkspaceId, type Harness } from "../../support/harness";

const waiting = { nodes: [{ id: "t", type: "trigger.manual" }, { id: "ask", type: "approval", config: { message: "?" } }], edges: [{ from: "t", to: "ask" }] };

test("a parent stopped after a restart stops the child it started before", async () => {
  const first = await createHarness();
  const jwt = await first.login();
  const ws = await defaultWorkspaceId(first, jwt);
  first.services.workflow.engine.start();
  const begin = (h: Harness, parent: string | null) =>
    h.services.workflow.executions.begin({ productId: ws, workflowId: null, versionId: null, graph: waiting, graphForNodes: waiting, triggerType: parent ? "api" : "manual", triggerId: parent, input: {}, createdBy: null }).id;
  const parent = begin(first, null);
  const child = begin(first, parent);
  const unrelated = begin(first, null);
  for (const id of [parent, child, unrelated]) await first.services.workflow.engine.until(id, ["waiting"], 10_000);
  await first.services.stop();
  first.services.storage.close();

  const again = await createHarness({}, first.dataDir);
  try {
    const jwt2 = await again.login();
    again.services.workflow.engine.start();
    expect((await again.call("POST", `/api/workflow/${parent}/stop`, { token: jwt2 })).status).toBe(200);
    // Before: the parent's children were known only in memory, so this one waited for ever.
    expect((await again.services.workflow.engine.until(child, ["stopped"], 5_000)).status).toBe("stopped");
    expect((await again.call("GET", `/api/workflow/${unrelated}/status`, { token: jwt2 })).body.data.status).toBe("waiting");
  } finally {
    await again.close();
  }
});
