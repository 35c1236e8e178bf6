// Durable background jobs: a job is a row first, then work, so a restart resumes it.
import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

export const jobs = sqliteTable(
  "jobs",
  {
    id: text("id").primaryKey(),
    kind: text("kind").notNull(),
    payload: text("payload", { mode: "json" }).notNull(),
    /** Fairness key (a workspace): the queue takes turns between groups with due jobs of a kind. */
    groupKey: text("group_key"),
    status: text("status", { enum: ["queued", "running", "done", "failed"] }).notNull(),
    attempts: integer("attempts").notNull().default(0),
    maxAttempts: integer("max_attempts").notNull().default(3),
    runAfter: integer("run_after", { mode: "timestamp_ms" }).notNull(),
    lastError: text("last_error"),
    createdAt: integer("created_at", { mode: "timestamp_ms" }).notNull(),
    updatedAt: integer("updated_at", { mode: "timestamp_ms" }).notNull(),
  },
  (t) => [index("jobs_pick_idx").on(t.status, t.kind, t.runAfter)],
);
