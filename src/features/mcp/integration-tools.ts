// The integration catalog tools of the MCP gateway (spec §4.11, SYSTEM tokens only): an assistant
// creates a template, an administrator activates it with real credentials, and its tools appear.
import { t } from "elysia";
import type { IntegrationRow, IntegrationsService } from "../integrations/service";
import type { McpTool } from "./platform-tools";

const view = (r: IntegrationRow) => ({ id: r.id, title: r.title, type: r.type, scope: r.scope, status: r.status, product_id: r.productId, config: r.config, has_credentials: r.credentials !== null });
const Obj = t.Record(t.String(), t.Unknown());

export function integrationManagementTools(service: IntegrationsService): McpTool[] {
  return [
    {
      name: "create_integration",
      description: `Add an integration to this workspace (types: ${service.types().map((x) => x.type).join(", ")}). Without credentials it is a template that an administrator activates with real credentials; its tools then appear.`,
      systemOnly: true,
      input: t.Object({ title: t.String({ minLength: 1, maxLength: 200 }), type: t.String({ minLength: 1, maxLength: 64 }), config: t.Optional(Obj), credentials: t.Optional(Obj) }, { additionalProperties: false }),
      async run(args, ctx) {
        const row = service.create(ctx.principal, { title: args.title, type: args.type, productId: ctx.productId, config: args.config, credentials: args.credentials });
        return { text: `Integration "${row.title}" (${row.type}) created as ${row.status}; id ${row.id}`, data: view(row) };
      },
    },
    {
      name: "update_integration",
      description: "Change an integration of this workspace: title, config, credentials (which activate a template), or status active/disabled.",
      systemOnly: true,
      input: t.Object({ id: t.String({ format: "uuid" }), title: t.Optional(t.String({ minLength: 1, maxLength: 200 })), config: t.Optional(Obj), credentials: t.Optional(Obj), status: t.Optional(t.UnionEnum(["active", "disabled"])) }, { additionalProperties: false }),
      async run(args, ctx) {
        const { id, ...patch } = args;
        const row = service.update(ctx.principal, id, patch);
        return { text: `Integration "${row.title}" is ${row.status}`, data: view(row) };
      },
    },
    {
      name: "delete_integration",
      description: "Delete an integration of this workspace; its tools disappear.",
      systemOnly: true,
      input: t.Object({ id: t.String({ format: "uuid" }) }, { additionalProperties: false }),
      async run(args, ctx) {
        const row = service.remove(ctx.principal, args.id);
        return { text: `Integration "${row.title}" deleted`, data: { id: row.id } };
      },
    },
  ];
}
