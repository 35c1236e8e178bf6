// Workflow definitions and their immutable versions, inside the caller's workspace: create,
// list, read, save a new version, activate or roll back, delete.
import { and, count, desc, eq } from "drizzle-orm";
import type { Db } from "../../platform/db/database";
import { drainer } from "../../platform/db/drain";
import type { Clock } from "../../platform/clock";
import { invalid, notFound } from "../../platform/errors";
import type { PageWindow } from "../../platform/http/pagination";
import type { Principal } from "../../platform/auth/principal";
import type { WorkspacesService } from "../workspaces/service";
import { ENDED_SQL } from "./engine/engine";
import { hideSecrets, keepSecrets, validateGraph } from "./graph";
import type { Graph } from "./model";
import type { NodeRegistry } from "./nodes/node-type";
import { syncTriggers } from "./triggers";
import { workflows, workflowVersions } from "./table";

export type WorkflowRow = typeof workflows.$inferSelect;
export type VersionRow = typeof workflowVersions.$inferSelect;

export function createWorkflowsService(deps: { db: Db; clock: Clock; workspaces: WorkspacesService; registry: NodeRegistry }) {
  const { db, clock, workspaces, registry } = deps;
  // Ended executions (with their node runs and events) go a slice at a time before a workflow or a
  // workspace does: months of webhook deliveries are tens of thousands, ~50 µs each in one cascade.
  const drainOfWorkflow = drainer<[string]>(db.$client, "workflow_executions", `workflow_id = ? AND ${ENDED_SQL}`);
  const drainOfWorkspace = drainer<[string]>(db.$client, "workflow_executions", `product_id = ? AND ${ENDED_SQL}`);
  workspaces.onRemoving((productId) => drainOfWorkspace(productId));

  const productOf = (principal: Principal, productId?: string) => {
    const id = productId ?? (principal.kind === "token" ? principal.productId : undefined);
    if (!id) throw invalid("Name the workspace: product_id");
    return workspaces.requireVisible(principal, id).id;
  };

  /** Checks a graph as the workspace's (its nodes may name only that workspace's agents, integrations, knowledge bases). */
  const validateIn = (graph: Graph, productId: string) => validateGraph(graph, registry, { productId, organizationId: workspaces.organizationOf(productId) ?? "" });

  /** The workflow if the caller's workspace holds it; another tenant's is "not found". */
  const requireWorkflow = (principal: Principal, id: string): WorkflowRow => {
    const w = db.select().from(workflows).where(eq(workflows.id, id.toLowerCase())).get();
    if (!w) throw notFound("Workflow");
    if (!workspaces.canSee(principal, w.productId)) throw notFound("Workflow");
    return w;
  };

  const requireVersion = (principal: Principal, versionId: string): { workflow: WorkflowRow; version: VersionRow } => {
    const v = db.select().from(workflowVersions).where(eq(workflowVersions.id, versionId.toLowerCase())).get();
    const w = v && db.select().from(workflows).where(eq(workflows.id, v.workflowId)).get();
    if (!v || !w || !workspaces.canSee(principal, w.productId)) throw notFound("Workflow version");
    return { workflow: w, version: v };
  };

  const activeGraph = (w: WorkflowRow): Graph | undefined =>
    w.activeVersionId ? db.select({ graph: workflowVersions.graph }).from(workflowVersions).where(eq(workflowVersions.id, w.activeVersionId)).get()?.graph : undefined;

  const latestGraph = (w: WorkflowRow): Graph | undefined =>
    db.select({ graph: workflowVersions.graph }).from(workflowVersions).where(eq(workflowVersions.workflowId, w.id)).orderBy(desc(workflowVersions.version)).limit(1).get()?.graph;

  type Tx = Parameters<Parameters<Db["transaction"]>[0]>[0];

  const activate = (tx: Tx, w: WorkflowRow, version: VersionRow) => {
    syncTriggers(tx, registry, w, version.id, version.graph, clock.now());
    tx.update(workflows).set({ activeVersionId: version.id, updatedAt: new Date(clock.now()) }).where(eq(workflows.id, w.id)).run();
  };

  const addVersion = (tx: Tx, w: WorkflowRow, graph: Graph, createdBy: string | null): VersionRow => {
    const version: VersionRow = { id: crypto.randomUUID(), workflowId: w.id, version: w.latestVersion + 1, graph, createdBy, createdAt: new Date(clock.now()) };
    tx.insert(workflowVersions).values(version).run();
    tx.update(workflows).set({ latestVersion: version.version, updatedAt: version.createdAt }).where(eq(workflows.id, w.id)).run();
    w.latestVersion = version.version;
    return version;
  };

  const actor = (p: Principal) => (p.kind === "token" ? p.tokenId : p.userId);

  return {
    requireWorkflow,
    requireVersion,
    activeGraph,
    /** A graph as callers see it: node secrets hidden (graph.ts, hideSecrets). */
    shown: (graph: Graph) => hideSecrets(graph, registry),
    productOf,
    validateIn,

    list(principal: Principal, productId: string | undefined, win: PageWindow) {
      const pid = productOf(principal, productId);
      const where = eq(workflows.productId, pid);
      const total = db.select({ n: count() }).from(workflows).where(where).get()?.n ?? 0;
      const rows = db.select().from(workflows).where(where).orderBy(desc(workflows.createdAt), workflows.id).limit(win.pageSize).offset(win.offset).all();
      return { rows, total };
    },

    versions(principal: Principal, id: string): VersionRow[] {
      const w = requireWorkflow(principal, id);
      return db.select().from(workflowVersions).where(eq(workflowVersions.workflowId, w.id)).orderBy(desc(workflowVersions.version)).all();
    },

    create(principal: Principal, input: { productId?: string; name: string; description?: string; graph: Graph; activate?: boolean; agentId?: string | null }): WorkflowRow {
      const productId = productOf(principal, input.productId);
      input = { ...input, graph: keepSecrets(input.graph, undefined, registry) };
      validateIn(input.graph, productId);
      const now = new Date(clock.now());
      const w: WorkflowRow = {
        id: crypto.randomUUID(),
        productId,
        name: input.name.trim(),
        description: input.description?.trim() || null,
        activeVersionId: null,
        latestVersion: 0,
        agentId: input.agentId ?? null,
        createdBy: actor(principal),
        createdAt: now,
        updatedAt: now,
      };
      db.transaction((tx) => {
        tx.insert(workflows).values(w).run();
        const v = addVersion(tx, w, input.graph, actor(principal));
        if (input.activate !== false) {
          activate(tx, w, v);
          w.activeVersionId = v.id;
        }
      });
      return requireWorkflow(principal, w.id);
    },

    /** Renames, saves a new version (active unless activate: false), or rolls back to an older one. */
    update(principal: Principal, id: string, patch: { name?: string; description?: string | null; graph?: Graph; activate?: boolean; activeVersionId?: string }): WorkflowRow {
      const w = requireWorkflow(principal, id);
      if (patch.graph && patch.activeVersionId) throw invalid("Send graph (a new version) or active_version_id (a rollback), not both");
      // Secrets come back as read (hidden): they keep what the active version (else the latest) had.
      if (patch.graph) patch = { ...patch, graph: keepSecrets(patch.graph, activeGraph(w) ?? latestGraph(w), registry) };
      if (patch.graph) validateIn(patch.graph, w.productId);
      db.transaction((tx) => {
        if (patch.name !== undefined || patch.description !== undefined) {
          tx.update(workflows)
            .set({ name: patch.name?.trim() ?? w.name, description: patch.description === undefined ? w.description : patch.description?.trim() || null, updatedAt: new Date(clock.now()) })
            .where(eq(workflows.id, w.id))
            .run();
        }
        if (patch.graph) {
          const v = addVersion(tx, w, patch.graph, actor(principal));
          if (patch.activate !== false) activate(tx, w, v);
        }
        if (patch.activeVersionId) {
          const v = tx.select().from(workflowVersions).where(and(eq(workflowVersions.id, patch.activeVersionId.toLowerCase()), eq(workflowVersions.workflowId, w.id))).get();
          if (!v) throw notFound("Workflow version");
          activate(tx, w, v);
        }
      });
      return requireWorkflow(principal, w.id);
    },

    /** Removes the workflow's ended executions a slice at a time (before `remove`, which takes the rest at once). */
    drainHistory: (id: string) => drainOfWorkflow(id),

    /** Deletes the workflow with its versions, triggers and executions (stop running ones first). */
    remove(principal: Principal, id: string): WorkflowRow {
      const w = requireWorkflow(principal, id);
      db.delete(workflows).where(eq(workflows.id, w.id)).run();
      return w;
    },
  };
}

export type WorkflowsService = ReturnType<typeof createWorkflowsService>;
