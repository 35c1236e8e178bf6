// Request and response schemas of the API token endpoints (validation, types and docs in one).
import { t } from "elysia";
import { Int, Timestamp, Uuid } from "../../platform/http/schemas";

export const TokenRole = t.UnionEnum(["USER", "SYSTEM"], { description: "USER (default) or SYSTEM (needed by the MCP admin tools)" });

export const CreateTokenBody = t.Object(
  {
    product_id: Uuid,
    token_name: t.String({ minLength: 1, maxLength: 200 }),
    expires_at: t.Optional(t.Union([Timestamp, t.Null()])),
    role: t.Optional(TokenRole),
  },
  { additionalProperties: false },
);

export const UpdateTokenBody = t.Object(
  {
    token_name: t.Optional(t.String({ minLength: 1, maxLength: 200 })),
    is_active: t.Optional(t.Boolean()),
    expires_at: t.Optional(t.Union([Timestamp, t.Null()], { description: "null removes the expiry" })),
  },
  { additionalProperties: false, minProperties: 1 },
);

export const RenewTokenBody = t.Object({ expires_at: Timestamp }, { additionalProperties: false });

/** Newest entries first: `limit` alone (default 100) is the newest ones; `page`/`pageSize` reach older ones (an addition). */
export { PaginationQuery as AuditQuery } from "../../platform/http/pagination";

export const Token = t.Object({
  id: Uuid,
  token_name: t.String(),
  token_prefix: t.String({ description: "First 12 characters, for display; not secret" }),
  product_id: Uuid,
  role: TokenRole,
  is_active: t.Boolean(),
  status: t.UnionEnum(["active", "inactive", "revoked", "expired"]),
  expires_at: t.Nullable(Timestamp),
  revoked_at: t.Nullable(Timestamp),
  last_used_at: t.Nullable(Timestamp),
  created_by: Uuid,
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const TokenWithSecret = t.Composite([
  Token,
  t.Object({ token: t.String({ description: "The full secret, svc_...; shown only in this response" }) }),
]);

export const AuditEntry = t.Object({
  action: t.UnionEnum(["created", "used", "revoked", "expired", "renewed", "regenerated", "deleted", "activated", "deactivated", "updated"], {
    description:
      "Additions to the spec's list: deleted; activated and deactivated (PUT is_active); updated (PUT token_name, or an expires_at earlier than the current one). A PUT that moves expires_at later or removes it is `renewed`",
  }),
  ip_address: t.Nullable(t.String()),
  user_agent: t.Nullable(t.String()),
  endpoint: t.Nullable(t.String()),
  status_code: t.Nullable(Int()),
  count: Int({ description: "Attempts this entry stands for: 1, except a refused token's uses, folded into one entry a minute (an addition to the spec)" }),
  created_at: Timestamp,
});

export const Validation = t.Object({
  success: t.Literal(true),
  authType: t.Literal("api_token"),
  userId: Uuid,
  productId: Uuid,
  organizationId: Uuid,
  apiTokenId: Uuid,
  role: TokenRole,
});
