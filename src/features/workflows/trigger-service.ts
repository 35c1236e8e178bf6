// Triggers as callers see them (spec §4.6): the trigger nodes of active versions, listed per
// workspace, read with their last runs, and manual ones run by request.
import { and, desc, eq } from "drizzle-orm";
import type { Db } from "../../platform/db/database";
import { conflict, notFound } from "../../platform/errors";
import type { Principal } from "../../platform/auth/principal";
import type { WorkspacesService } from "../workspaces/service";
import { checkInput, executionView, type ExecutionsService } from "./executions";
import type { ExecutionRow } from "./engine/runner";
import { triggerNodes } from "./graph";
import type { NodeRegistry } from "./nodes/node-type";
import type { WorkflowsService } from "./service";
import { triggerId, type TriggerRow } from "./triggers";
import { workflowExecutions, workflows, workflowTriggers, workflowVersions } from "./table";

/** How many executions GET /api/agent-base/triggers/{id} shows. */
export const LAST_RUNS = 10;

export function createTriggerService(deps: { db: Db; workspaces: WorkspacesService; workflows: WorkflowsService; executions: ExecutionsService; registry: NodeRegistry; publicUrl: string }) {
  const { db, workspaces, executions, registry } = deps;
  const definitions = deps.workflows;
  const actor = (p: Principal) => (p.kind === "token" ? p.tokenId : p.userId);
  const base = deps.publicUrl.replace(/\/+$/, "");

  const agentOf = (workflowId: string) => db.select({ agentId: workflows.agentId }).from(workflows).where(eq(workflows.id, workflowId)).get()?.agentId ?? null;

  const view = (r: Pick<TriggerRow, "id" | "type" | "workflowId" | "versionId" | "nodeId" | "config"> & Partial<Pick<TriggerRow, "nextRunAt" | "lastRunAt">>, agentId: string | null) => {
    const { secret, ...config } = r.config;
    return {
      id: r.id,
      type: r.type,
      workflow_id: r.workflowId,
      version_id: r.versionId,
      ...(agentId ? { agent_id: agentId } : {}),
      node_id: r.nodeId,
      config,
      ...(r.type === "webhook" ? { has_secret: typeof secret === "string" && secret !== "", webhook_url: `${base}/api/webhook/${encodeURIComponent(String(config.path))}` } : {}),
      ...(r.type === "schedule" ? { next_run_at: r.nextRunAt ? r.nextRunAt.toISOString() : null, last_run_at: r.lastRunAt ? r.lastRunAt.toISOString() : null } : {}),
    };
  };

  /** The trigger if the caller's workspace holds it; another tenant's is "not found". */
  const requireTrigger = (principal: Principal, id: string): TriggerRow => {
    const row = db.select().from(workflowTriggers).where(eq(workflowTriggers.id, id.toLowerCase())).get();
    if (!row) throw notFound("Trigger");
    if (!workspaces.canSee(principal, row.productId)) throw notFound("Trigger");
    return row;
  };

  return {
    requireTrigger,

    list(principal: Principal, productId?: string) {
      const pid = definitions.productOf(principal, productId);
      return db
        .select({ t: workflowTriggers, agentId: workflows.agentId })
        .from(workflowTriggers)
        .innerJoin(workflows, eq(workflows.id, workflowTriggers.workflowId))
        .where(eq(workflowTriggers.productId, pid))
        .orderBy(workflowTriggers.createdAt, workflowTriggers.id)
        .all()
        .map((r) => view(r.t, r.agentId));
    },

    one(principal: Principal, id: string) {
      const row = requireTrigger(principal, id);
      const runs = db.select().from(workflowExecutions).where(eq(workflowExecutions.triggerId, row.id)).orderBy(desc(workflowExecutions.createdAt), desc(workflowExecutions.id)).limit(LAST_RUNS).all();
      return { ...view(row, agentOf(row.workflowId)), last_runs: runs.map((e) => executionView(e)) };
    },

    /** The manual triggers of any version (also an inactive one), with the ids they have when active. */
    manualOfVersion(principal: Principal, versionId: string) {
      const { workflow, version } = definitions.requireVersion(principal, versionId);
      return triggerNodes(version.graph, registry)
        .filter((f) => f.kind === "manual")
        .map((f) => view({ id: triggerId(workflow.id, f.node.id), type: "manual", workflowId: workflow.id, versionId: version.id, nodeId: f.node.id, config: (f.node.config ?? {}) as Record<string, unknown> }, workflow.agentId));
    },

    /** Runs a manual trigger of an active version; schedules and webhooks fire on their own (409). */
    run(principal: Principal, id: string, input: Record<string, unknown> | undefined): ExecutionRow {
      const row = requireTrigger(principal, id);
      if (row.type !== "manual") throw conflict(`Trigger ${row.id} is a ${row.type} trigger; only manual triggers run by request (a schedule fires on its own, a webhook on POST /api/webhook/{path})`);
      const version = db.select().from(workflowVersions).where(and(eq(workflowVersions.id, row.versionId), eq(workflowVersions.workflowId, row.workflowId))).get();
      if (!version) throw notFound("Trigger");
      return executions.begin({
        productId: row.productId,
        workflowId: row.workflowId,
        versionId: version.id,
        agentId: agentOf(row.workflowId),
        graph: null,
        graphForNodes: version.graph,
        triggerType: "manual",
        triggerId: row.id,
        triggerNodeId: row.nodeId,
        input: checkInput(input),
        createdBy: actor(principal),
      });
    },
  };
}

export type TriggerService = ReturnType<typeof createTriggerService>;
