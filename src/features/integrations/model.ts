// Schemas of integrations (spec §4.4): `scope` is the service's to set, never the client's.
import { t } from "elysia";
import { Timestamp, Uuid } from "../../platform/http/schemas";
import { PaginationQuery } from "../../platform/http/pagination";

export const Integration = t.Object({
  id: Uuid,
  title: t.String(),
  type: t.String(),
  product_id: t.Union([Uuid, t.Null()]),
  scope: t.UnionEnum(["local", "global"]),
  status: t.UnionEnum(["template", "active", "disabled"]),
  config: t.Record(t.String(), t.Unknown()),
  has_credentials: t.Boolean(),
  tools: t.Array(t.String()),
  created_at: Timestamp,
  updated_at: Timestamp,
});

const Obj = t.Record(t.String(), t.Unknown());

export const CreateIntegrationBody = t.Object(
  {
    title: t.String({ minLength: 1, maxLength: 200 }),
    type: t.String({ minLength: 1, maxLength: 64, description: "github, gitlab, gitea, slack (GET /api/integrations-base/types)" }),
    product_id: t.Optional(Uuid),
    config: t.Optional(Obj),
    credentials: t.Optional(t.Record(t.String(), t.Unknown(), { description: "Write-only: encrypted at rest, never returned" })),
  },
  { additionalProperties: false },
);

export const UpdateIntegrationBody = t.Object(
  {
    title: t.Optional(t.String({ minLength: 1, maxLength: 200 })),
    config: t.Optional(Obj),
    credentials: t.Optional(t.Record(t.String(), t.Unknown())),
    status: t.Optional(t.Union([t.Literal("active"), t.Literal("disabled")])),
  },
  { additionalProperties: false },
);

export const IntegrationQuery = t.Object({ product_id: t.Optional(Uuid), ...PaginationQuery.properties }, { additionalProperties: false });
export const IntegrationType = t.Object({ type: t.String(), description: t.String(), config_schema: t.Unknown(), credentials_schema: t.Unknown(), tools: t.Array(t.Object({ name: t.String(), description: t.String(), input_schema: t.Unknown() })) });
