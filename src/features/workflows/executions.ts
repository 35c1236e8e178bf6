// Executions as callers see them: start one (a workflow's active version, a pinned version, an
// inline graph, or a single node), read its status and nodes, list, and stop/pause/continue.
import { and, asc, count, desc, eq, inArray, notInArray, type SQL } from "drizzle-orm";
import type { Db } from "../../platform/db/database";
import { AppError, conflict, invalid, notFound, tooLarge } from "../../platform/errors";
import type { PageWindow } from "../../platform/http/pagination";
import type { Principal } from "../../platform/auth/principal";
import type { WorkspacesService } from "../workspaces/service";
import { ENDED, IN_PROGRESS, type NewExecution, type WorkflowEngine } from "./engine/engine";
import type { ExecutionRow, NodeRunRow } from "./engine/runner";
import { MAX_INPUT_CHARS, type Graph, type RetryPolicy } from "./model";
import type { WorkflowsService } from "./service";
import { nodeRuns, workflowExecutions, type ExecutionStatus } from "./table";

const iso = (d: Date | null) => (d ? d.toISOString() : null);

export const nodeRunView = (r: NodeRunRow) => ({
  id: r.id,
  node_id: r.nodeId,
  type: r.type,
  status: r.status,
  attempt: r.attempt,
  started_at: iso(r.startedAt),
  finished_at: iso(r.finishedAt),
  ...(r.output !== null && r.output !== undefined ? { output: r.output } : {}),
  ...(r.error ? { error: r.error } : {}),
  ...(r.wakeAt && r.status !== "succeeded" ? { wake_at: r.wakeAt.toISOString() } : {}),
});

export const executionView = (e: ExecutionRow, nodes?: NodeRunRow[]) => ({
  id: e.id,
  status: e.status,
  product_id: e.productId,
  workflow_id: e.workflowId,
  version_id: e.versionId,
  ...(e.agentId ? { agent_id: e.agentId } : {}),
  trigger: { type: e.triggerType, ...(e.triggerId ? { id: e.triggerId } : {}) },
  input: e.input,
  ...(e.output !== null && e.output !== undefined ? { output: e.output } : {}),
  ...(e.error ? { error: e.error } : {}),
  ...(nodes ? { nodes: nodes.map(nodeRunView) } : {}),
  created_at: e.createdAt.toISOString(),
  started_at: iso(e.startedAt),
  finished_at: iso(e.finishedAt),
});

export function checkInput(input: Record<string, unknown> | undefined): Record<string, unknown> {
  const value = input ?? {};
  if (JSON.stringify(value).length > MAX_INPUT_CHARS) throw tooLarge(`An execution's input may be at most ${MAX_INPUT_CHARS / 1024} KB of JSON`);
  return value;
}

export function createExecutionsService(deps: { db: Db; engine: WorkflowEngine; workflows: WorkflowsService; workspaces: WorkspacesService }) {
  const { db, engine, workflows, workspaces } = deps;
  const actor = (p: Principal) => (p.kind === "token" ? p.tokenId : p.userId);

  const requireExecution = (principal: Principal, id: string): ExecutionRow => {
    const e = db.select().from(workflowExecutions).where(eq(workflowExecutions.id, id.toLowerCase())).get();
    if (!e) throw notFound("Execution");
    if (!workspaces.canSee(principal, e.productId)) throw notFound("Execution");
    return e;
  };

  const nodesOf = (id: string) => db.select().from(nodeRuns).where(eq(nodeRuns.executionId, id)).orderBy(asc(nodeRuns.startedAt), asc(nodeRuns.nodeId)).all();

  /** Writes the execution and wakes the engine once it is committed. */
  const begin = (n: NewExecution): ExecutionRow => {
    const row = db.transaction((tx) => engine.create(n, tx));
    engine.wake();
    return row;
  };

  /** Stops the executions matching `where` that are still in progress; how many there were. */
  const stopOpen = (where: SQL) => {
    const open = db.select({ id: workflowExecutions.id }).from(workflowExecutions).where(and(where, inArray(workflowExecutions.status, IN_PROGRESS))).all();
    for (const { id } of open) {
      try {
        engine.stop(id);
      } catch (e) {
        // 409: it ended meanwhile; anything else is a real failure
        if (!(e instanceof AppError && e.status === 409)) throw e;
      }
    }
    return open.length;
  };
  // A workspace's executions stop in the turn its rows go: a node still at work would otherwise
  // write its result into rows that are gone.
  workspaces.onDeleting((productId) => void stopOpen(eq(workflowExecutions.productId, productId)));
  return {
    requireExecution,
    begin,

    execute(principal: Principal, body: { workflow_id?: string; version_id?: string; graph?: Graph; product_id?: string; input?: Record<string, unknown> }): ExecutionRow {
      const given = [body.workflow_id, body.version_id, body.graph].filter((v) => v !== undefined).length;
      if (given !== 1) throw invalid("Send exactly one of workflow_id, version_id or graph");
      const input = checkInput(body.input);
      const base = { triggerType: "api" as const, input, createdBy: actor(principal) };
      if (body.graph) {
        const productId = workflows.productOf(principal, body.product_id);
        workflows.validateIn(body.graph, productId);
        return begin({ ...base, productId, workflowId: null, versionId: null, graph: body.graph, graphForNodes: body.graph });
      }
      const { workflow, version } = body.version_id
        ? workflows.requireVersion(principal, body.version_id)
        : (() => {
            const w = workflows.requireWorkflow(principal, body.workflow_id!);
            if (!w.activeVersionId) throw conflict("The workflow has no active version; activate one with PUT active_version_id");
            return workflows.requireVersion(principal, w.activeVersionId);
          })();
      if (body.product_id && body.product_id.toLowerCase() !== workflow.productId) throw notFound("Workflow");
      return begin({ ...base, productId: workflow.productId, workflowId: workflow.id, versionId: version.id, agentId: workflow.agentId, graph: null, graphForNodes: version.graph });
    },

    /** A single node, run as a one-node execution: it gets retries, timeouts, events and durability alike. */
    executeNode(principal: Principal, body: { type: string; config?: Record<string, unknown>; input?: Record<string, unknown>; product_id?: string; retry?: RetryPolicy; timeout_ms?: number }) {
      const graph: Graph = { nodes: [{ id: "node", type: body.type, config: body.config ?? {}, ...(body.retry ? { retry: body.retry } : {}), ...(body.timeout_ms ? { timeout_ms: body.timeout_ms } : {}) }], edges: [] };
      const productId = workflows.productOf(principal, body.product_id);
      workflows.validateIn(graph, productId);
      const row = begin({ productId, workflowId: null, versionId: null, graph, graphForNodes: graph, mode: "node", triggerType: "node", input: checkInput(body.input), createdBy: actor(principal) });
      const run = db.select().from(nodeRuns).where(eq(nodeRuns.executionId, row.id)).get()!;
      return { run, execution: row };
    },

    nodeStatus(principal: Principal, nodeRunId: string): { run: NodeRunRow; execution: ExecutionRow } {
      const run = db.select().from(nodeRuns).where(eq(nodeRuns.id, nodeRunId.toLowerCase())).get();
      const execution = run && db.select().from(workflowExecutions).where(eq(workflowExecutions.id, run.executionId)).get();
      if (!run || !execution || !workspaces.canSee(principal, execution.productId)) throw notFound("Node run");
      return { run, execution };
    },

    status(principal: Principal, id: string) {
      const e = requireExecution(principal, id);
      return { execution: e, nodes: nodesOf(e.id) };
    },

    list(principal: Principal, q: { product_id?: string; workflow_id?: string; status?: ExecutionStatus }, win: PageWindow, extra?: SQL) {
      const conds: SQL[] = [eq(workflowExecutions.mode, "workflow")];
      if (q.workflow_id) conds.push(eq(workflowExecutions.workflowId, workflows.requireWorkflow(principal, q.workflow_id).id));
      else conds.push(eq(workflowExecutions.productId, workflows.productOf(principal, q.product_id)));
      if (q.status) conds.push(eq(workflowExecutions.status, q.status));
      if (extra) conds.push(extra);
      const where = and(...conds);
      const total = db.select({ n: count() }).from(workflowExecutions).where(where).get()?.n ?? 0;
      const rows = db.select().from(workflowExecutions).where(where).orderBy(desc(workflowExecutions.createdAt), desc(workflowExecutions.id)).limit(win.pageSize).offset(win.offset).all();
      return { rows, total };
    },

    stop: (principal: Principal, id: string) => engine.stop(requireExecution(principal, id).id),
    pause: (principal: Principal, id: string) => engine.pause(requireExecution(principal, id).id),
    continue: (principal: Principal, id: string, input?: Record<string, unknown>, nodeId?: string) => engine.continue(requireExecution(principal, id).id, input === undefined ? undefined : checkInput(input), nodeId),

    /** Stops every execution of a workflow still in progress (before it is deleted or uninstalled). */
    stopAllOf: (workflowId: string) => stopOpen(eq(workflowExecutions.workflowId, workflowId)),

    /** Executions an agent's invoke_workflow started from `parentId` (trigger api, id the parent) still in progress; durable, so also those started before a restart. */
    childrenInProgress: (parentId: string) =>
      db
        .select({ id: workflowExecutions.id })
        .from(workflowExecutions)
        .where(and(inArray(workflowExecutions.status, IN_PROGRESS), eq(workflowExecutions.triggerType, "api"), eq(workflowExecutions.triggerId, parentId)))
        .all()
        .map((r) => r.id),

    inProgress: (ids: string[]) => (ids.length ? db.select({ id: workflowExecutions.id }).from(workflowExecutions).where(and(inArray(workflowExecutions.id, ids), notInArray(workflowExecutions.status, ENDED))).all() : []),
  };
}

export type ExecutionsService = ReturnType<typeof createExecutionsService>;
