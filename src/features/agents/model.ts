// Schemas of agents, the catalog and agent executions.
import { t } from "elysia";
import { Timestamp, Uuid, Int } from "../../platform/http/schemas";
import { PaginationQuery } from "../../platform/http/pagination";
import { GraphSchema } from "../workflows/model";

const ToolNames = t.Array(t.String({ minLength: 1, maxLength: 128 }), { maxItems: 64, description: "Tool names (GET /api/agent-base/tools)" });
const KbIds = t.Array(Uuid, { maxItems: 50 });

export const Agent = t.Object({
  id: Uuid,
  product_id: Uuid,
  name: t.String(),
  description: t.String(),
  template: t.Union([t.String(), t.Null()]),
  workflow_id: t.Union([Uuid, t.Null()]),
  system_prompt: t.String(),
  model: t.Union([t.String(), t.Null()]),
  tools: t.Array(t.String()),
  knowledge_base_ids: t.Array(Uuid),
  settings: t.Record(t.String(), t.Unknown()),
  status: t.UnionEnum(["active", "disabled"]),
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const CatalogEntry = t.Object({
  id: t.String(),
  name: t.String(),
  description: t.String(),
  settings_schema: t.Unknown(),
  input_schema: t.Unknown({ description: "JSON Schema of the invoke's input (an addition); its required fields are checked at invoke (422)" }),
  triggers: t.Array(t.String()),
  tools: t.Array(t.String()),
});

export const InstallBody = t.Object(
  {
    product_id: t.Optional(Uuid),
    template: t.String({ minLength: 1, maxLength: 64, description: "A catalog id" }),
    name: t.Optional(t.String({ minLength: 1, maxLength: 200 })),
    settings: t.Optional(t.Record(t.String(), t.Unknown())),
  },
  { additionalProperties: false },
);

export const CreateAgentBody = t.Object(
  {
    product_id: t.Optional(Uuid),
    name: t.String({ minLength: 1, maxLength: 200 }),
    description: t.Optional(t.String({ maxLength: 2000 })),
    system_prompt: t.String({ minLength: 1, maxLength: 20_000 }),
    tools: t.Optional(ToolNames),
    knowledge_base_ids: t.Optional(KbIds),
    model: t.Optional(t.String({ minLength: 1, maxLength: 200 })),
    graph: t.Optional(GraphSchema),
  },
  { additionalProperties: false },
);

export const UpdateAgentBody = t.Object(
  {
    name: t.Optional(t.String({ minLength: 1, maxLength: 200 })),
    description: t.Optional(t.String({ maxLength: 2000 })),
    system_prompt: t.Optional(t.String({ minLength: 1, maxLength: 20_000 })),
    tools: t.Optional(ToolNames),
    knowledge_base_ids: t.Optional(KbIds),
    model: t.Optional(t.Union([t.String({ minLength: 1, maxLength: 200 }), t.Null()])),
    status: t.Optional(t.Union([t.Literal("active"), t.Literal("disabled")])),
    graph: t.Optional(GraphSchema),
  },
  { additionalProperties: false },
);

export const InvokeBody = t.Object(
  {
    input: t.Record(t.String(), t.Unknown(), { description: "{query, ...}" }),
    wait: t.Optional(t.Boolean({ description: "Answer when the execution ends (at most 120 s, then 202)" })),
  },
  { additionalProperties: false },
);

export const AgentListQuery = t.Object({ product_id: t.Optional(Uuid), id: t.Optional(Uuid), ...PaginationQuery.properties }, { additionalProperties: false });

export const ToolCallView = t.Object({ tool: t.String(), arguments: t.Unknown(), result: t.Optional(t.String()), error: t.Optional(t.String()), duration_ms: Int(), step: Int() });

export const AgentExecution = t.Object({
  id: Uuid,
  status: t.String(),
  trigger: t.Object({ type: t.String(), id: t.Optional(t.String()) }),
  input: t.Unknown(),
  output: t.Optional(t.Unknown()),
  error: t.Optional(t.String()),
  tool_calls: t.Array(ToolCallView),
  usage: t.Object({ prompt_tokens: Int(), completion_tokens: Int() }),
  started_at: t.Union([Timestamp, t.Null()]),
  finished_at: t.Union([Timestamp, t.Null()]),
  duration_ms: t.Union([Int(), t.Null()]),
});
