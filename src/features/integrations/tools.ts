// The integrations' tools in the one tool registry (agents and MCP see the effective active
// integrations of the caller's workspace), and the `integration` workflow node that calls one.
import { t } from "elysia";
import type { AllowList } from "../../platform/net/safe-fetch";
import type { ToolDef } from "../../platform/tools/registry";
import { literal, type NodeType } from "../workflows/nodes/node-type";
import type { IntegrationRow, IntegrationsService } from "./service";

export function integrationToolProvider(service: IntegrationsService, allow: AllowList) {
  const toolsOf = (row: IntegrationRow): ToolDef<any>[] => {
    return service.toolsOf(row).map((tool) => ({
      name: tool.name,
      description: `${tool.description} Integration: "${row.title}" (${row.type}).`,
      input: tool.input,
      group: { id: row.id, title: row.title },
      run: (args, ctx) => service.run(row, tool, args, ctx.signal, allow),
    }));
  };
  return (ctx: { productId: string; organizationId: string }) => service.effective(ctx.productId, ctx.organizationId).flatMap(toolsOf);
}

export function integrationNode(service: IntegrationsService, allow: AllowList): NodeType<{ integration_id?: string; type?: string; action: string; arguments?: Record<string, unknown> }> {
  return {
    type: "integration",
    description: "Calls a tool of one of the workspace's active integrations: {integration_id | type, action, arguments}.",
    config: t.Object(
      {
        integration_id: t.Optional(t.String({ format: "uuid" })),
        type: t.Optional(t.String({ minLength: 1, maxLength: 64, description: "The effective integration of this type (local over global)" })),
        action: t.String({ minLength: 1, maxLength: 128, description: "A tool of the integration's type, e.g. create_issue" }),
        arguments: t.Optional(t.Record(t.String(), t.Unknown())),
      },
      { additionalProperties: false },
    ),
    check: (c) => (c.integration_id === undefined && c.type === undefined ? "set integration_id or type" : undefined),
    references(c, w) {
      if (!literal(c.integration_id)) return undefined;
      const id = c.integration_id.toLowerCase();
      return service.effective(w.productId, w.organizationId).some((r) => r.id === id) ? undefined : `integration_id: ${c.integration_id} is not an active integration of this workspace`;
    },
    async run(c, ctx) {
      const active = service.effective(ctx.productId, ctx.organizationId);
      const row = c.integration_id ? active.find((r) => r.id === c.integration_id) : active.find((r) => r.type === c.type);
      if (!row) throw new Error(c.integration_id ? `integration ${c.integration_id} is not active in this workspace` : `no active ${c.type} integration in this workspace`);
      const tools = service.toolsOf(row);
      const tool = tools.find((x) => x.name === c.action);
      if (!tool) throw new Error(`${row.type} has no action "${c.action}"; it has: ${tools.map((x) => x.name).join(", ")}`);
      const result = await service.run(row, tool, c.arguments ?? {}, ctx.signal, allow);
      return { output: result.data };
    },
  };
}
