// Workspace CRUD (DESIGN.md: /api/products).
import { Elysia, t } from "elysia";
import type { AuthPlugin } from "../../platform/auth/plugin";
import { PaginationQuery, pageWindow } from "../../platform/http/pagination";
import { IdParams, errors, ok, okList } from "../../platform/http/schemas";
import { CreateWorkspaceBody, UpdateWorkspaceBody, Workspace } from "./model";
import type { WorkspaceRow, WorkspacesService } from "./service";

export const workspaceView = (w: WorkspaceRow) => ({
  id: w.id,
  name: w.name,
  description: w.description,
  organization_id: w.organizationId,
  created_by: w.createdBy,
  created_at: w.createdAt.toISOString(),
  updated_at: w.updatedAt.toISOString(),
});

export function workspaceRoutes({ auth, workspaces }: { auth: AuthPlugin; workspaces: WorkspacesService }) {
  // A workspace read by id is the service's remembered row (frozen; a change replaces it), so its
  // view is made once per row instead of on every request (two dates formatted, then checked).
  const views = new WeakMap<WorkspaceRow, ReturnType<typeof workspaceView>>();
  const viewOf = (w: WorkspaceRow) => {
    let view = views.get(w);
    if (!view) views.set(w, (view = Object.freeze(workspaceView(w))));
    return view;
  };
  return new Elysia()
    .use(auth)
    .guard({ detail: { tags: ["Workspaces"] } })
    .get(
      "/api/products",
      ({ principal, query }) => {
        const w = pageWindow(query);
        const { rows, total } = workspaces.list(principal, w);
        return { success: true as const, data: rows.map(workspaceView), pagination: { page: w.page, pageSize: w.pageSize, total } };
      },
      { auth: "any", query: PaginationQuery, response: { 200: okList(Workspace), ...errors(400, 401, 429) }, detail: { summary: "List workspaces" } },
    )
    .post(
      "/api/products",
      ({ principal, body, set }) => {
        set.status = 201;
        return { success: true as const, message: "Workspace created", data: workspaceView(workspaces.create(principal, { name: body.name, description: body.description ?? undefined })) };
      },
      { auth: "jwt", body: CreateWorkspaceBody, parse: "json", response: { 201: ok(Workspace, "Created"), ...errors(400, 401, 403, 422, 429) }, detail: { summary: "Create a workspace" } },
    )
    .get("/api/products/:id", ({ principal, params }) => ({ success: true as const, data: viewOf(workspaces.requireVisible(principal, params.id)) }), {
      auth: "any",
      params: IdParams,
      response: { 200: ok(Workspace), ...errors(400, 401, 404, 429) },
      detail: { summary: "Get a workspace" },
    })
    .put(
      "/api/products/:id",
      ({ principal, params, body }) => ({ success: true as const, message: "Workspace updated", data: workspaceView(workspaces.update(principal, params.id, body)) }),
      { auth: "jwt", params: IdParams, body: UpdateWorkspaceBody, parse: "json", response: { 200: ok(Workspace), ...errors(400, 401, 403, 404, 422, 429) }, detail: { summary: "Rename or describe a workspace" } },
    )
    .delete(
      "/api/products/:id",
      async ({ principal, params }) => {
        await workspaces.remove(principal, params.id);
        return { success: true as const, message: "Workspace deleted with everything it held", data: { id: params.id } };
      },
      { auth: "jwt", params: IdParams, response: { 200: ok(t.Object({ id: IdParams.properties.id })), ...errors(400, 401, 403, 404, 429) }, detail: { summary: "Delete a workspace and all it owns" } },
    );
}
