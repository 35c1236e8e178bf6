// Integrations: connections to a team's own services (Git, tickets, chat), local to a workspace or
// global to the organization; credentials only as AES-256-GCM ciphertext.
import { index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { organizations } from "../accounts/table";
import { products } from "../workspaces/table";

export const integrations = sqliteTable(
  "integrations",
  {
    id: text("id").primaryKey(),
    organizationId: text("organization_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    productId: text("product_id").references(() => products.id, { onDelete: "cascade" }),
    title: text("title").notNull(),
    type: text("type").notNull(),
    scope: text("scope", { enum: ["local", "global"] }).notNull(),
    status: text("status", { enum: ["template", "active", "disabled"] }).notNull(),
    config: text("config", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
    /** secret-box ciphertext of the credentials object, or null (a template). */
    credentials: text("credentials"),
    createdBy: text("created_by"),
    createdAt: integer("created_at", { mode: "timestamp_ms" }).notNull(),
    updatedAt: integer("updated_at", { mode: "timestamp_ms" }).notNull(),
  },
  (t) => [index("integrations_org_idx").on(t.organizationId, t.type), index("integrations_product_idx").on(t.productId)],
);

/** Inbound chat events already taken (Slack retries a delivery it thinks was lost): each answered once. */
export const communicatorEvents = sqliteTable(
  "communicator_events",
  {
    integrationId: text("integration_id")
      .notNull()
      .references(() => integrations.id, { onDelete: "cascade" }),
    eventId: text("event_id").notNull(),
    receivedAt: integer("received_at", { mode: "timestamp_ms" }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.integrationId, t.eventId] })],
);
