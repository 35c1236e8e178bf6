// Schemas of login, the caller's profile, organizations and their users.
import { t } from "elysia";
import { Int, QueryInt, Timestamp, Uuid } from "../../platform/http/schemas";
import { ACTIVITY_ACTIONS } from "../activity/table";

const ROLES = ["owner", "admin", "member"] as const;
export const Role = t.UnionEnum(ROLES);

export const LoginBody = t.Object(
  { email: t.String({ minLength: 3, maxLength: 320 }), password: t.String({ minLength: 1, maxLength: 1024 }) },
  { additionalProperties: false },
);

export const User = t.Object({
  id: Uuid,
  email: t.String(),
  name: t.String(),
  organization_id: Uuid,
  role: Role,
  is_super_admin: t.Boolean(),
  created_at: Timestamp,
});

export const Session = t.Object({ token: t.String({ description: "JWT for Authorization: Bearer" }), expires_at: Timestamp, user: User });

export const Me = t.Object({
  auth_type: t.UnionEnum(["jwt", "api_token"]),
  user: User,
  acting_organization_id: Uuid,
  product_id: t.Optional(Uuid),
  api_token_id: t.Optional(Uuid),
});

export const CreateOrganizationBody = t.Object({ name: t.String({ minLength: 1, maxLength: 200 }) }, { additionalProperties: false });

export const Organization = t.Object({ id: Uuid, name: t.String(), created_at: Timestamp });

export const CreateUserBody = t.Object(
  {
    // Any local@domain, as HEARTH_ADMIN_EMAIL takes: the default first owner is admin@localhost,
    // which the "email" format (a dotted domain) refused, so it could not be added again.
    email: t.String({ pattern: "^[^\\s@]+@[^\\s@]+$", maxLength: 320, error: "email must be an address of the form name@domain" }),
    password: t.String({ minLength: 8, maxLength: 1024 }),
    name: t.Optional(t.String({ minLength: 1, maxLength: 200 })),
    role: Role,
  },
  { additionalProperties: false },
);


export const ActivityQuery = t.Object({
  // A union of literals, not t.UnionEnum: Elysia fills a missing optional UnionEnum in a query
  // with its first value, which turned "every action" into "overrides only".
  action: t.Optional(t.Union(ACTIVITY_ACTIONS.map((a) => t.Literal(a)))),
  limit: t.Optional(QueryInt("limit", { minimum: 1, maximum: 1000 })),
});

export const ActivityEntry = t.Object({
  action: t.String(),
  actor_user_id: t.Nullable(t.String()),
  target_organization_id: t.Nullable(t.String()),
  method: t.Nullable(t.String()),
  endpoint: t.Nullable(t.String()),
  status_code: t.Nullable(Int()),
  ip_address: t.Nullable(t.String()),
  user_agent: t.Nullable(t.String()),
  detail: t.Nullable(t.String()),
  created_at: Timestamp,
});

export const UpdateUserBody = t.Object(
  {
    name: t.Optional(t.String({ minLength: 1, maxLength: 200 })),
    // Literals, not t.UnionEnum: Elysia fills a missing optional UnionEnum with its first value,
    // which made every rename a promotion to owner.
    role: t.Optional(t.Union(ROLES.map((r) => t.Literal(r)))),
    password: t.Optional(t.String({ minLength: 8, maxLength: 1024, description: "A new password; every session of the user ends" })),
  },
  { additionalProperties: false, minProperties: 1 },
);

export const ChangePasswordBody = t.Object(
  {
    current_password: t.String({ minLength: 1, maxLength: 1024 }),
    new_password: t.String({ minLength: 8, maxLength: 1024 }),
  },
  { additionalProperties: false },
);

export const UserParams = t.Object({ id: Uuid, user_id: Uuid });
