// Security events of an organization that are not tied to one token (super-admin overrides, logins,
// users added, changed or removed, passwords changed or reset).
import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

/** What the trail records: super-admin overrides, sign-ins, and changes of users and passwords. */
export const ACTIVITY_ACTIONS = [
  "organization_override",
  "login_succeeded",
  "login_failed",
  "login_throttled",
  "user_added",
  "user_updated",
  "user_removed",
  "password_changed",
  "password_reset",
] as const;
export type ActivityAction = (typeof ACTIVITY_ACTIONS)[number];

export const activityEvents = sqliteTable(
  "activity_events",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    // No foreign keys: the trail must outlive the users and organizations it mentions.
    organizationId: text("organization_id"),
    actorUserId: text("actor_user_id"),
    action: text("action", { enum: ACTIVITY_ACTIONS }).notNull(),
    targetOrganizationId: text("target_organization_id"),
    method: text("method"),
    endpoint: text("endpoint"),
    statusCode: integer("status_code"),
    ipAddress: text("ip_address"),
    userAgent: text("user_agent"),
    detail: text("detail"),
    createdAt: integer("created_at", { mode: "timestamp_ms" }).notNull(),
  },
  (t) => [index("activity_org_idx").on(t.organizationId, t.id)],
);
