// HTTP routes of spec §4.4: integrations of the organization and workspace, the effective set of a
// workspace (shadow rule), the organization's active ones, and the connector types.
import { Elysia, t } from "elysia";
import type { AuthPlugin } from "../../platform/auth/plugin";
import type { AllowList } from "../../platform/net/safe-fetch";
import { whileWorking } from "../../platform/http/long-request";
import { pageWindow } from "../../platform/http/pagination";
import { errors, IdParams, ok, okList, Uuid } from "../../platform/http/schemas";
import { CreateIntegrationBody, Integration, IntegrationQuery, IntegrationType, UpdateIntegrationBody } from "./model";
import type { IntegrationRow, IntegrationsService } from "./service";

export function integrationRoutes({ auth, integrations: service, allow }: { auth: AuthPlugin; integrations: IntegrationsService; allow: AllowList }) {
  const view = (r: IntegrationRow) => ({
    id: r.id,
    title: r.title,
    type: r.type,
    product_id: r.productId,
    scope: r.scope,
    status: r.status,
    config: r.config,
    has_credentials: r.credentials !== null,
    tools: service.toolsOf(r).map((x) => x.name),
    created_at: r.createdAt.toISOString(),
    updated_at: r.updatedAt.toISOString(),
  });
  const all = (rows: IntegrationRow[]) => ({ success: true as const, data: rows.map(view), pagination: { page: 1, pageSize: rows.length, total: rows.length } });
  const One = ok(Integration);
  return new Elysia()
    .use(auth)
    .guard({ detail: { tags: ["Integrations"] } })
    .get("/api/integrations-base/types", () => {
      const types = service.types();
      return { success: true as const, data: types, pagination: { page: 1, pageSize: types.length, total: types.length } };
    }, { auth: "any", response: { 200: okList(IntegrationType), ...errors(401, 429) }, detail: { summary: "Connector types with their config and credentials schemas and tools" } })
    .get(
      "/api/integrations-base",
      ({ principal, query }) => {
        const win = pageWindow(query);
        const { rows, total } = service.list(principal, query.product_id, win);
        return { success: true as const, data: rows.map(view), pagination: { page: win.page, pageSize: win.pageSize, total } };
      },
      { auth: "any", query: IntegrationQuery, response: { 200: okList(Integration), ...errors(400, 401, 404, 422, 429) }, detail: { summary: "Integrations of the organization, or of a workspace with the global ones (product_id)" } },
    )
    .post(
      "/api/integrations-base",
      ({ principal, body, set }) => {
        set.status = 201;
        const row = service.create(principal, { title: body.title, type: body.type, productId: body.product_id, config: body.config, credentials: body.credentials });
        return { success: true as const, message: row.status === "template" ? "Integration template created; give it credentials to activate it" : "Integration created", data: view(row) };
      },
      { auth: "any", body: CreateIntegrationBody, response: { 201: One, ...errors(400, 401, 403, 404, 409, 422, 429) }, detail: { summary: "Create an integration: local with product_id, global without (scope is set by the service)" } },
    )
    .get("/api/integrations-base/product/:productId/active", ({ principal, params }) => all(service.effectiveFor(principal, params.productId)), {
      auth: "any",
      params: t.Object({ productId: Uuid }),
      response: { 200: okList(Integration), ...errors(401, 404, 422, 429) },
      detail: { summary: "The workspace's effective active integrations: its local ones replace global ones of the same type" },
    })
    .get("/api/external/integrations", ({ principal }) => all(service.organizationActive(principal)), {
      auth: "any",
      response: { 200: okList(Integration), ...errors(401, 429) },
      detail: { summary: "The organization's active integrations" },
    })
    .get("/api/integrations-base/:id", ({ principal, params }) => ({ success: true as const, data: view(service.requireIntegration(principal, params.id)) }), {
      auth: "any",
      params: IdParams,
      response: { 200: One, ...errors(401, 404, 422, 429) },
      detail: { summary: "One integration (credentials never returned)" },
    })
    .put("/api/integrations-base/:id", ({ principal, params, body }) => ({ success: true as const, message: "Integration updated", data: view(service.update(principal, params.id, body)) }), {
      auth: "any",
      params: IdParams,
      body: UpdateIntegrationBody,
      response: { 200: One, ...errors(400, 401, 403, 404, 409, 422, 429) },
      detail: { summary: "Update; credentials activate a template" },
    })
    .post(
      "/api/integrations-base/:id/test",
      async ({ principal, params, request, server }) => {
        const r = await whileWorking(server, request, () => service.test(principal, params.id, request.signal, allow));
        return { success: true as const, message: r.message, data: { ok: r.ok } };
      },
      { auth: "any", params: IdParams, response: { 200: ok(t.Object({ ok: t.Boolean() })), ...errors(401, 403, 404, 422, 429) }, detail: { summary: "Check an integration's config and credentials against its service (an addition)" } },
    )
    .delete("/api/integrations-base/:id", ({ principal, params }) => ({ success: true as const, message: "Integration deleted", data: { id: service.remove(principal, params.id).id } }), {
      auth: "any",
      params: IdParams,
      response: { 200: ok(t.Object({ id: t.String() })), ...errors(401, 403, 404, 422, 429) },
      detail: { summary: "Delete an integration" },
    });
}
