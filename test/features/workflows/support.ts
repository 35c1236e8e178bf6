// Shared helpers of the workflow tests: a harness with a token, graph builders, waiting on ends.
import type { Harness } from "../../support/harness";
import type { ExecutionStatus } from "../../../src/features/workflows/table";

export const linear = (...nodes: { id: string; type: string; config?: Record<string, unknown>; retry?: unknown; timeout_ms?: number }[]) => ({
  nodes,
  edges: nodes.slice(1).map((n, i) => ({ from: nodes[i]!.id, to: n.id })),
});

/** Waits until the execution is in one of `statuses` (driven by the engine's own events). */
export async function until(h: Harness, id: string, statuses: ExecutionStatus[] = ["succeeded", "failed", "stopped"]) {
  await h.services.workflow.engine.until(id, statuses, 20_000);
  return (await h.call("GET", `/api/workflow/${id}/status`, { token: (h as Harness & { jwt: string }).jwt })).body.data;
}
