// Chat sessions of a workspace and their messages, each answer with the sources it cited.
import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { products } from "../workspaces/table";

export const chatSessions = sqliteTable(
  "chat_sessions",
  {
    // Client-chosen ids are allowed (the spec's session_id), so this is text, not a UUID.
    id: text("id").primaryKey(),
    productId: text("product_id")
      .notNull()
      .references(() => products.id, { onDelete: "cascade" }),
    title: text("title").notNull(),
    createdAt: integer("created_at", { mode: "timestamp_ms" }).notNull(),
    updatedAt: integer("updated_at", { mode: "timestamp_ms" }).notNull(),
  },
  (t) => [index("chat_sessions_product_idx").on(t.productId, t.updatedAt)],
);

export interface StoredSource {
  index: number;
  fileId: string;
  fileName: string;
  chunkId: number;
  page: number | null;
  score: number;
  excerpt: string;
}

export interface AnswerMetadata {
  model: string;
  mode: "llm" | "retrieval-only";
  latencyMs: number;
  ttftMs?: number;
  promptTokens?: number;
  completionTokens?: number;
}

export const chatMessages = sqliteTable(
  "chat_messages",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    sessionId: text("session_id")
      .notNull()
      .references(() => chatSessions.id, { onDelete: "cascade" }),
    role: text("role", { enum: ["user", "assistant"] }).notNull(),
    content: text("content").notNull(),
    // complete: a whole answer; interrupted: the model failed or the caller left mid-answer (kept,
    // marked, and never fed back into later prompts as if it were an answer).
    status: text("status", { enum: ["complete", "interrupted"] }).notNull().default("complete"),
    sources: text("sources", { mode: "json" }).$type<StoredSource[]>(),
    metadata: text("metadata", { mode: "json" }).$type<AnswerMetadata>(),
    createdAt: integer("created_at", { mode: "timestamp_ms" }).notNull(),
  },
  (t) => [index("chat_messages_session_idx").on(t.sessionId, t.id)],
);
