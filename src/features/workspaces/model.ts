// Schemas of the workspace (product) endpoints.
import { t } from "elysia";
import { Timestamp, Uuid } from "../../platform/http/schemas";

export const CreateWorkspaceBody = t.Object(
  { name: t.String({ minLength: 1, maxLength: 200 }), description: t.Optional(t.Nullable(t.String({ maxLength: 2000 }))) },
  { additionalProperties: false },
);

export const UpdateWorkspaceBody = t.Object(
  { name: t.Optional(t.String({ minLength: 1, maxLength: 200 })), description: t.Optional(t.Nullable(t.String({ maxLength: 2000 }))) },
  { additionalProperties: false, minProperties: 1 },
);

export const Workspace = t.Object({
  id: Uuid,
  name: t.String(),
  description: t.Nullable(t.String()),
  organization_id: Uuid,
  created_by: t.Nullable(Uuid),
  created_at: Timestamp,
  updated_at: Timestamp,
});
