// API tokens and their audit log.
import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { users } from "../accounts/table";
import { products } from "../workspaces/table";

export const apiTokens = sqliteTable(
  "api_tokens",
  {
    id: text("id").primaryKey(),
    productId: text("product_id")
      .notNull()
      .references(() => products.id, { onDelete: "cascade" }),
    // The user who created the token; the token acts as that user inside its workspace.
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    tokenName: text("token_name").notNull(),
    tokenPrefix: text("token_prefix").notNull(),
    // SHA-256 of the full secret, hex. The secret itself is never stored.
    tokenHash: text("token_hash").notNull().unique(),
    role: text("role", { enum: ["USER", "SYSTEM"] }).notNull().default("USER"),
    isActive: integer("is_active", { mode: "boolean" }).notNull().default(true),
    expiresAt: integer("expires_at", { mode: "timestamp_ms" }),
    revokedAt: integer("revoked_at", { mode: "timestamp_ms" }),
    // Set when the `expired` audit row has been written, so it is written once per expiry.
    expiryLoggedAt: integer("expiry_logged_at", { mode: "timestamp_ms" }),
    // Set by DELETE: the row stays so that its audit log outlives it; a deleted token is unusable,
    // unlisted and unchangeable.
    deletedAt: integer("deleted_at", { mode: "timestamp_ms" }),
    createdAt: integer("created_at", { mode: "timestamp_ms" }).notNull(),
    updatedAt: integer("updated_at", { mode: "timestamp_ms" }).notNull(),
  },
  (t) => [index("api_tokens_product_idx").on(t.productId), index("api_tokens_expiry_idx").on(t.expiresAt)],
);

export const apiTokenAuditLogs = sqliteTable(
  "api_token_audit_logs",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    tokenId: text("token_id")
      .notNull()
      .references(() => apiTokens.id, { onDelete: "cascade" }),
    // After the spec's six: deleted, and PUT's activated, deactivated and updated (name, or an earlier expiry).
    action: text("action", { enum: ["created", "used", "revoked", "expired", "renewed", "regenerated", "deleted", "activated", "deactivated", "updated"] }).notNull(),
    ipAddress: text("ip_address"),
    userAgent: text("user_agent"),
    endpoint: text("endpoint"),
    statusCode: integer("status_code"),
    // Attempts this row stands for: 1, except for a refused token's uses, folded into one row a minute.
    count: integer("count").notNull().default(1),
    createdAt: integer("created_at", { mode: "timestamp_ms" }).notNull(),
  },
  (t) => [index("api_token_audit_token_idx").on(t.tokenId, t.id)],
);
