// Agents (a workflow packaged for a purpose) and what their runs did: every tool call with its
// arguments, result and timing, and the tokens the model used per execution.
import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { products } from "../workspaces/table";
import { workflowExecutions, workflows } from "../workflows/table";

export const agents = sqliteTable(
  "agents",
  {
    id: text("id").primaryKey(),
    productId: text("product_id")
      .notNull()
      .references(() => products.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    description: text("description").notNull().default(""),
    template: text("template"),
    workflowId: text("workflow_id").references(() => workflows.id, { onDelete: "set null" }),
    systemPrompt: text("system_prompt").notNull(),
    model: text("model"),
    tools: text("tools", { mode: "json" }).$type<string[]>().notNull(),
    knowledgeBaseIds: text("knowledge_base_ids", { mode: "json" }).$type<string[]>().notNull(),
    settings: text("settings", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
    status: text("status", { enum: ["active", "disabled"] }).notNull().default("active"),
    createdBy: text("created_by"),
    createdAt: integer("created_at", { mode: "timestamp_ms" }).notNull(),
    updatedAt: integer("updated_at", { mode: "timestamp_ms" }).notNull(),
  },
  (t) => [index("agents_product_idx").on(t.productId, t.createdAt)],
);

export const agentToolCalls = sqliteTable(
  "agent_tool_calls",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    executionId: text("execution_id")
      .notNull()
      .references(() => workflowExecutions.id, { onDelete: "cascade" }),
    nodeId: text("node_id").notNull(),
    step: integer("step").notNull(),
    tool: text("tool").notNull(),
    arguments: text("arguments", { mode: "json" }).notNull(),
    result: text("result"),
    error: text("error"),
    durationMs: integer("duration_ms").notNull(),
    createdAt: integer("created_at", { mode: "timestamp_ms" }).notNull(),
  },
  (t) => [index("agent_tool_calls_execution_idx").on(t.executionId, t.id)],
);

export const agentUsage = sqliteTable("agent_usage", {
  executionId: text("execution_id")
    .primaryKey()
    .references(() => workflowExecutions.id, { onDelete: "cascade" }),
  promptTokens: integer("prompt_tokens").notNull().default(0),
  completionTokens: integer("completion_tokens").notNull().default(0),
});
