// Schemas of the trigger endpoints (spec §4.6) and of inbound webhook answers (spec §4.7).
import { t } from "elysia";
import { Timestamp, Uuid } from "../../platform/http/schemas";
import { PaginationQuery } from "../../platform/http/pagination";
import { ExecutionView } from "./model";

export const TriggerView = t.Object({
  id: Uuid,
  type: t.UnionEnum(["manual", "schedule", "webhook"]),
  workflow_id: Uuid,
  version_id: Uuid,
  agent_id: t.Optional(Uuid),
  node_id: t.String(),
  config: t.Record(t.String(), t.Unknown(), { description: "The trigger node's config; a webhook's secret is never shown (see has_secret)" }),
  has_secret: t.Optional(t.Boolean()),
  next_run_at: t.Optional(t.Union([Timestamp, t.Null()])),
  last_run_at: t.Optional(t.Union([Timestamp, t.Null()])),
  webhook_url: t.Optional(t.String()),
});

export const TriggerDetail = t.Object({
  ...TriggerView.properties,
  last_runs: t.Array(t.Omit(ExecutionView, ["nodes"]), { description: "The trigger's latest executions, newest first" }),
});

export const TriggersQuery = t.Object({ product_id: t.Optional(Uuid), ...PaginationQuery.properties }, { additionalProperties: false });

const Input = t.Optional(t.Record(t.String(), t.Unknown(), { description: "The execution's input" }));
export const RunTriggerBody = t.Object({ trigger_id: Uuid, input: Input }, { additionalProperties: false });
export const ExecuteTriggerBody = t.Object({ input: Input }, { additionalProperties: false });
export const VersionParams = t.Object({ versionId: Uuid });

export const WebhookParams = t.Object({ custom_path: t.String({ maxLength: 256 }) });
export const WebhookAnswer = t.Object({
  success: t.Literal(true),
  message: t.String({ description: "accepted, ignored (event filtered out) or duplicate" }),
  data: t.Object({ delivery_id: Uuid, execution_id: t.Union([Uuid, t.Null()]) }),
});
