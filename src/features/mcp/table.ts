// MCP settings of a workspace: tools switched off, the default number of passages.
import { integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { products } from "../workspaces/table";

export const mcpSettings = sqliteTable("mcp_settings", {
  productId: text("product_id")
    .primaryKey()
    .references(() => products.id, { onDelete: "cascade" }),
  disabledTools: text("disabled_tools", { mode: "json" }).$type<string[]>().notNull(),
  defaultTopK: integer("default_top_k").notNull().default(5),
  updatedAt: integer("updated_at", { mode: "timestamp_ms" }).notNull(),
});
