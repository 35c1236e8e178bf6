// Chat sessions of a workspace and their messages, each answer with the sources it cited.
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { products } from "../workspaces/table";

export const chatSessions = sqliteTable(
  "chat_sessions",
  {
    // Internal key: the client's id is unique only within its workspace.
    key: integer("key").primaryKey({ autoIncrement: true }),
    // Client-chosen ids are allowed (the spec's session_id), so this is text, not a UUID.
    id: text("id").notNull(),
    productId: text("product_id")
      .notNull()
      .references(() => products.id, { onDelete: "cascade" }),
    // Who started the session: a user (JWT) or an API token. Null for sessions from before owners
    // were recorded: only owners, admins and SYSTEM tokens see those.
    ownerKind: text("owner_kind", { enum: ["user", "token"] }),
    ownerId: text("owner_id"),
    title: text("title").notNull(),
    createdAt: integer("created_at", { mode: "timestamp_ms" }).notNull(),
    updatedAt: integer("updated_at", { mode: "timestamp_ms" }).notNull(),
  },
  (t) => [
    // id first: a user may name a session by id alone (the one of its workspaces that has it).
    uniqueIndex("chat_sessions_id_product_idx").on(t.id, t.productId),
    index("chat_sessions_product_idx").on(t.productId, t.updatedAt),
  ],
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
    sessionKey: integer("session_key")
      .notNull()
      .references(() => chatSessions.key, { onDelete: "cascade" }),
    role: text("role", { enum: ["user", "assistant"] }).notNull(),
    content: text("content").notNull(),
    // complete: a whole answer; interrupted: the model failed or the caller left mid-answer (kept,
    // marked, and never fed back into later prompts as if it were an answer).
    status: text("status", { enum: ["complete", "interrupted"] }).notNull().default("complete"),
    sources: text("sources", { mode: "json" }).$type<StoredSource[]>(),
    metadata: text("metadata", { mode: "json" }).$type<AnswerMetadata>(),
    createdAt: integer("created_at", { mode: "timestamp_ms" }).notNull(),
  },
  (t) => [index("chat_messages_session_idx").on(t.sessionKey, t.id)],
);
