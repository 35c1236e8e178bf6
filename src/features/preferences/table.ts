// A user's AI preferences: how chat, agents and MCP answers should sound for them.
import { integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { users } from "../accounts/table";

export const aiPreferences = sqliteTable("ai_preferences", {
  userId: text("user_id")
    .primaryKey()
    .references(() => users.id, { onDelete: "cascade" }),
  language: text("language"),
  tone: text("tone"),
  answerLength: text("answer_length"),
  notes: text("notes"),
  updatedAt: integer("updated_at", { mode: "timestamp_ms" }).notNull(),
});
