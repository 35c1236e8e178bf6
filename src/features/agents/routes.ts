// HTTP routes of spec §4.1 (agents and their executions), the catalog, install and invoke.
import { Elysia, t } from "elysia";
import type { AuthPlugin } from "../../platform/auth/plugin";
import { invalid } from "../../platform/errors";
import { whileWorking } from "../../platform/http/long-request";
import { PaginationQuery, pageWindow } from "../../platform/http/pagination";
import { errors, IdParams, ok, okList, Uuid } from "../../platform/http/schemas";
import { executionView as workflowExecutionView } from "../workflows/executions";
import { ExecutionView } from "../workflows/model";
import { Agent, AgentExecution, AgentListQuery, CatalogEntry, CreateAgentBody, InstallBody, InvokeBody, UpdateAgentBody } from "./model";
import { INVOKE_WAIT_MS, type AgentRow, type AgentsService } from "./service";

export const agentView = (a: AgentRow) => ({
  id: a.id,
  product_id: a.productId,
  name: a.name,
  description: a.description,
  template: a.template,
  workflow_id: a.workflowId,
  system_prompt: a.systemPrompt,
  model: a.model,
  tools: a.tools,
  knowledge_base_ids: a.knowledgeBaseIds,
  settings: a.settings,
  status: a.status,
  created_at: a.createdAt.toISOString(),
  updated_at: a.updatedAt.toISOString(),
});

export function agentRoutes({ auth, agents }: { auth: AuthPlugin; agents: AgentsService }) {
  const list = (principal: Parameters<AgentsService["list"]>[0], productId: string | undefined, q: Parameters<typeof pageWindow>[0]) => {
    const win = pageWindow(q);
    const { rows, total } = agents.list(principal, productId, win);
    return { success: true as const, data: rows.map(agentView), pagination: { page: win.page, pageSize: win.pageSize, total } };
  };
  const One = ok(Agent);

  return new Elysia()
    .use(auth)
    .guard({ detail: { tags: ["Agents"] } })
    .get("/api/agent-base/catalog", () => {
      const data = agents.catalog();
      return { success: true as const, data, pagination: { page: 1, pageSize: data.length, total: data.length } };
    }, { auth: "any", response: { 200: okList(CatalogEntry), ...errors(401, 429) }, detail: { summary: "Ready agents to install, with the settings each asks for" } })
    .get(
      "/api/agent-base",
      ({ principal, query }) => (query.id ? { success: true as const, data: agentView(agents.requireAgent(principal, query.id)) } : list(principal, query.product_id, query)),
      { auth: "any", query: AgentListQuery, response: { 200: t.Union([okList(Agent), One]), ...errors(400, 401, 404, 422, 429) }, detail: { summary: "Agents of a workspace (product_id), or one (id)" } },
    )
    .get("/api/agent-base/product/:productId", ({ principal, params, query }) => list(principal, params.productId, query), {
      auth: "any",
      params: t.Object({ productId: Uuid }),
      query: AgentListQuery,
      response: { 200: okList(Agent), ...errors(401, 404, 422, 429) },
      detail: { summary: "Agents of a workspace" },
    })
    .post(
      "/api/agent-base/install",
      ({ principal, body, set }) => {
        set.status = 201;
        return { success: true as const, message: "Agent installed", data: agentView(agents.install(principal, { productId: body.product_id, template: body.template, name: body.name, settings: body.settings })) };
      },
      { auth: "any", body: InstallBody, response: { 201: One, ...errors(400, 401, 403, 404, 409, 422, 429) }, detail: { summary: "Install an agent from the catalog (owner/admin or SYSTEM token)" } },
    )
    .post(
      "/api/agent-base",
      ({ principal, body, set }) => {
        set.status = 201;
        const a = agents.create(principal, { productId: body.product_id, name: body.name, description: body.description, systemPrompt: body.system_prompt, tools: body.tools, knowledgeBaseIds: body.knowledge_base_ids, model: body.model, graph: body.graph });
        return { success: true as const, message: "Agent created", data: agentView(a) };
      },
      { auth: "any", body: CreateAgentBody, response: { 201: One, ...errors(400, 401, 403, 404, 409, 422, 429) }, detail: { summary: "Create a custom agent (its workflow: manual trigger → agent → output, or your graph)" } },
    )
    .delete(
      "/api/agent-base",
      async ({ principal, query }) => {
        if (!query.id) throw invalid("Name the agent: ?id=");
        const { agent, stopped } = await agents.uninstall(principal, query.id);
        return { success: true as const, message: stopped ? `Agent uninstalled; ${stopped} execution(s) in progress were stopped` : "Agent uninstalled", data: { id: agent.id } };
      },
      { auth: "any", query: t.Object({ id: t.Optional(Uuid) }), response: { 200: ok(t.Object({ id: t.String() })), ...errors(400, 401, 403, 404, 422, 429) }, detail: { summary: "Uninstall an agent (?id=): its triggers stop, its executions in progress stop" } },
    )
    .get("/api/agent-base/:id", ({ principal, params }) => ({ success: true as const, data: agentView(agents.requireAgent(principal, params.id)) }), {
      auth: "any",
      params: IdParams,
      response: { 200: One, ...errors(401, 404, 422, 429) },
      detail: { summary: "An agent" },
    })
    .put(
      "/api/agent-base/:id",
      ({ principal, params, body }) => ({
        success: true as const,
        message: "Agent updated",
        data: agentView(agents.update(principal, params.id, { name: body.name, description: body.description, systemPrompt: body.system_prompt, tools: body.tools, knowledgeBaseIds: body.knowledge_base_ids, model: body.model, status: body.status, graph: body.graph })),
      }),
      { auth: "any", params: IdParams, body: UpdateAgentBody, response: { 200: One, ...errors(400, 401, 403, 404, 409, 422, 429) }, detail: { summary: "Update an agent (owner/admin or SYSTEM token)" } },
    )
    .post(
      "/api/agent-base/:id/invoke",
      async ({ principal, params, body, request, server, set }) => {
        const { execution, ended } = await whileWorking(server, request, () => agents.invoke(principal, params.id, body.input, body.wait ?? false));
        set.status = ended ? 200 : 202;
        const follow = `follow it at GET /api/workflow/${execution.id}/status or /events`;
        const message = ended ? `Execution ${execution.status}` : body.wait ? `Execution still ${execution.status} after ${INVOKE_WAIT_MS / 1000} s; ${follow}` : `Execution ${execution.status}; ${follow}`;
        return { success: true as const, message, data: workflowExecutionView(execution) };
      },
      { auth: "any:strict", params: IdParams, body: InvokeBody, response: { 200: ok(ExecutionView), 202: ok(ExecutionView), ...errors(400, 401, 404, 413, 422, 429) }, detail: { summary: "Invoke an agent; with wait: true the answer comes when the execution ends (at most 120 s)" } },
    )
    .get(
      "/api/agent-base/:id/executions",
      ({ principal, params, query }) => {
        const win = pageWindow(query);
        const { rows, total } = agents.executions(principal, params.id, win);
        return { success: true as const, data: rows, pagination: { page: win.page, pageSize: win.pageSize, total } };
      },
      { auth: "any", params: IdParams, query: PaginationQuery, response: { 200: okList(AgentExecution), ...errors(401, 404, 422, 429) }, detail: { summary: "Executions of an agent, newest first, with every tool call and the tokens used" } },
    )
    .get("/api/agent-base/:id/executions/:executionId", ({ principal, params }) => ({ success: true as const, data: agents.execution(principal, params.id, params.executionId) }), {
      auth: "any",
      params: t.Object({ id: Uuid, executionId: Uuid }),
      response: { 200: ok(AgentExecution), ...errors(401, 404, 422, 429) },
      detail: { summary: "One execution of an agent with its tool calls" },
    });
}
