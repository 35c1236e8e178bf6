// HTTP routes of spec §4.2 (workflow definitions): /api/workflow-base with ?id= as DESIGN.md names
// it, and the same under /api/workflow-base/{id}.
import { Elysia, t } from "elysia";
import type { AuthPlugin } from "../../platform/auth/plugin";
import { invalid } from "../../platform/errors";
import { pageWindow } from "../../platform/http/pagination";
import { errors, IdParams, ok, okList } from "../../platform/http/schemas";
import { CreateWorkflowBody, IdQuery, UpdateWorkflowBody, Workflow, WorkflowQuery, WorkflowVersion } from "./model";
import type { ExecutionsService } from "./executions";
import type { VersionRow, WorkflowRow, WorkflowsService } from "./service";

const versionSummary = (v: VersionRow) => ({ id: v.id, workflow_id: v.workflowId, version: v.version, created_at: v.createdAt.toISOString() });
export function workflowRoutes({ auth, workflows, executions }: { auth: AuthPlugin; workflows: WorkflowsService; executions: ExecutionsService }) {
  const versionView = (v: VersionRow) => ({ ...versionSummary(v), graph: workflows.shown(v.graph) });
  const activeShown = (w: WorkflowRow) => {
    const graph = workflows.activeGraph(w);
    return graph && workflows.shown(graph);
  };
  const view = (w: WorkflowRow, detail?: { versions: VersionRow[] }) => ({
    id: w.id,
    product_id: w.productId,
    name: w.name,
    description: w.description,
    active_version_id: w.activeVersionId,
    latest_version: w.latestVersion,
    agent_id: w.agentId,
    ...(detail ? { graph: activeShown(w), versions: detail.versions.map(versionSummary) } : {}),
    created_at: w.createdAt.toISOString(),
    updated_at: w.updatedAt.toISOString(),
  });

  const one = (principal: Parameters<WorkflowsService["requireWorkflow"]>[0], id: string) => ({
    success: true as const,
    data: view(workflows.requireWorkflow(principal, id), { versions: workflows.versions(principal, id) }),
  });

  const update = (principal: Parameters<WorkflowsService["requireWorkflow"]>[0], id: string, body: typeof UpdateWorkflowBody.static) => {
    const w = workflows.update(principal, id, { name: body.name, description: body.description, graph: body.graph, activate: body.activate, activeVersionId: body.active_version_id });
    return { success: true as const, message: "Workflow saved", data: view(w, { versions: workflows.versions(principal, w.id) }) };
  };

  const remove = async (principal: Parameters<WorkflowsService["requireWorkflow"]>[0], id: string) => {
    const w = workflows.requireWorkflow(principal, id);
    await workflows.drainHistory(w.id);
    // In one turn from here: no trigger starts an execution between the stop and the delete.
    const stopped = executions.stopAllOf(w.id);
    workflows.remove(principal, w.id);
    return { success: true as const, message: stopped ? `Workflow deleted; ${stopped} execution(s) in progress were stopped` : "Workflow deleted", data: { id: w.id } };
  };

  const Detail = ok(Workflow);
  return new Elysia()
    .use(auth)
    .guard({ detail: { tags: ["Workflows"] } })
    .get(
      "/api/workflow-base",
      ({ principal, query }) => {
        if (query.id) return one(principal, query.id);
        const win = pageWindow(query);
        const { rows, total } = workflows.list(principal, query.product_id, win);
        return { success: true as const, data: rows.map((w) => view(w)), pagination: { page: win.page, pageSize: win.pageSize, total } };
      },
      {
        auth: "any",
        query: WorkflowQuery,
        response: { 200: t.Union([okList(Workflow), Detail]), ...errors(400, 401, 404, 422, 429) },
        detail: { summary: "List the workflows of a workspace (product_id), or get one with its versions (id)" },
      },
    )
    .post(
      "/api/workflow-base",
      ({ principal, body, set }) => {
        const w = workflows.create(principal, { productId: body.product_id, name: body.name, description: body.description ?? undefined, graph: body.graph, activate: body.activate });
        set.status = 201;
        return { success: true as const, message: "Workflow created", data: view(w, { versions: workflows.versions(principal, w.id) }) };
      },
      { auth: "any", body: CreateWorkflowBody, response: { 201: Detail, ...errors(400, 401, 404, 409, 422, 429) }, detail: { summary: "Create a workflow; its graph becomes version 1" } },
    )
    .put(
      "/api/workflow-base",
      ({ principal, body, query }) => {
        const id = body.id ?? query.id;
        if (!id) throw invalid("Name the workflow: id in the body or ?id=");
        return update(principal, id, body);
      },
      {
        auth: "any",
        body: UpdateWorkflowBody,
        query: t.Object({ id: t.Optional(t.String({ format: "uuid" })) }),
        response: { 200: Detail, ...errors(400, 401, 404, 409, 422, 429) },
        detail: { summary: "Rename, save a new version (graph), or roll back (active_version_id)" },
      },
    )
    .delete("/api/workflow-base", ({ principal, query }) => remove(principal, query.id), {
      auth: "any",
      query: IdQuery,
      response: { 200: ok(t.Object({ id: t.String() })), ...errors(401, 404, 422, 429) },
      detail: { summary: "Delete a workflow (?id=): its executions in progress stop, its triggers go" },
    })
    .get("/api/workflow-base/:id", ({ principal, params }) => one(principal, params.id), {
      auth: "any",
      params: IdParams,
      response: { 200: Detail, ...errors(401, 404, 422, 429) },
      detail: { summary: "A workflow with its active graph and versions" },
    })
    .put("/api/workflow-base/:id", ({ principal, params, body }) => update(principal, params.id, body), {
      auth: "any",
      params: IdParams,
      body: UpdateWorkflowBody,
      response: { 200: Detail, ...errors(400, 401, 404, 409, 422, 429) },
      detail: { summary: "Rename, save a new version (graph), or roll back (active_version_id)" },
    })
    .delete("/api/workflow-base/:id", ({ principal, params }) => remove(principal, params.id), {
      auth: "any",
      params: IdParams,
      response: { 200: ok(t.Object({ id: t.String() })), ...errors(401, 404, 422, 429) },
      detail: { summary: "Delete a workflow" },
    })
    .get(
      "/api/workflow-base/:id/versions",
      ({ principal, params }) => {
        const rows = workflows.versions(principal, params.id);
        return { success: true as const, data: rows.map((v) => versionView(v)), pagination: { page: 1, pageSize: rows.length, total: rows.length } };
      },
      { auth: "any", params: IdParams, response: { 200: okList(WorkflowVersion), ...errors(401, 404, 422, 429) }, detail: { summary: "Every version of a workflow, newest first, with its graph" } },
    );
}
