// Tables of organizations and their users.
import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

export const organizations = sqliteTable("organizations", {
  id: text("id").primaryKey(),
  name: text("name").notNull(),
  createdAt: integer("created_at", { mode: "timestamp_ms" }).notNull(),
});

export const users = sqliteTable(
  "users",
  {
    id: text("id").primaryKey(),
    organizationId: text("organization_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    // Stored lower-cased; the unique index makes an email identify one account across Hearth.
    email: text("email").notNull().unique(),
    name: text("name").notNull(),
    passwordHash: text("password_hash").notNull(),
    role: text("role", { enum: ["owner", "admin", "member"] }).notNull(),
    isSuperAdmin: integer("is_super_admin", { mode: "boolean" }).notNull().default(false),
    // Carried by each session (JWT claim `sv`); raised when the password changes or the user is
    // removed, which ends every session signed before.
    sessionVersion: integer("session_version").notNull().default(0),
    // Removed users stay (tokens' audit logs and the security trail name them); their email is
    // replaced by a tombstone, so the address can be added again.
    removedAt: integer("removed_at", { mode: "timestamp_ms" }),
    createdAt: integer("created_at", { mode: "timestamp_ms" }).notNull(),
  },
  (t) => [index("users_organization_idx").on(t.organizationId)],
);
