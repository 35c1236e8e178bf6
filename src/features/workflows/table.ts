// Workflows, their immutable versions, executions with one row per node run, the stored event log
// of each execution, the trigger nodes of active versions, and inbound webhook deliveries.
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { products } from "../workspaces/table";
import type { Graph } from "./model";

export const workflows = sqliteTable(
  "workflows",
  {
    id: text("id").primaryKey(),
    productId: text("product_id")
      .notNull()
      .references(() => products.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    description: text("description"),
    activeVersionId: text("active_version_id"),
    latestVersion: integer("latest_version").notNull().default(0),
    agentId: text("agent_id"),
    createdBy: text("created_by"),
    createdAt: integer("created_at", { mode: "timestamp_ms" }).notNull(),
    updatedAt: integer("updated_at", { mode: "timestamp_ms" }).notNull(),
  },
  (t) => [index("workflows_product_idx").on(t.productId, t.createdAt)],
);

export const workflowVersions = sqliteTable(
  "workflow_versions",
  {
    id: text("id").primaryKey(),
    workflowId: text("workflow_id")
      .notNull()
      .references(() => workflows.id, { onDelete: "cascade" }),
    version: integer("version").notNull(),
    graph: text("graph", { mode: "json" }).$type<Graph>().notNull(),
    createdBy: text("created_by"),
    createdAt: integer("created_at", { mode: "timestamp_ms" }).notNull(),
  },
  (t) => [uniqueIndex("workflow_versions_number_idx").on(t.workflowId, t.version)],
);

export type ExecutionStatus = "queued" | "running" | "paused" | "waiting" | "succeeded" | "failed" | "stopped";
export type TriggerType = "manual" | "schedule" | "webhook" | "api" | "mcp" | "communicator" | "node";

export const workflowExecutions = sqliteTable(
  "workflow_executions",
  {
    id: text("id").primaryKey(),
    productId: text("product_id")
      .notNull()
      .references(() => products.id, { onDelete: "cascade" }),
    workflowId: text("workflow_id").references(() => workflows.id, { onDelete: "cascade" }),
    versionId: text("version_id").references(() => workflowVersions.id, { onDelete: "cascade" }),
    agentId: text("agent_id"),
    // Only for inline test runs and single nodes; a version's graph is read from its version.
    graph: text("graph", { mode: "json" }).$type<Graph>(),
    // workflow: a graph run; node: POST /api/nodes/execute (not listed among executions).
    mode: text("mode", { enum: ["workflow", "node"] }).notNull().default("workflow"),
    status: text("status").$type<ExecutionStatus>().notNull(),
    triggerType: text("trigger_type").$type<TriggerType>().notNull(),
    triggerId: text("trigger_id"),
    // The trigger node that fired (others are skipped); null: every manual trigger (or every trigger).
    triggerNodeId: text("trigger_node_id"),
    // (trigger, scheduled time) of a schedule fire: a crash between fire and commit never fires twice.
    fireKey: text("fire_key"),
    input: text("input", { mode: "json" }).notNull(),
    output: text("output", { mode: "json" }),
    error: text("error"),
    createdBy: text("created_by"),
    createdAt: integer("created_at", { mode: "timestamp_ms" }).notNull(),
    startedAt: integer("started_at", { mode: "timestamp_ms" }),
    finishedAt: integer("finished_at", { mode: "timestamp_ms" }),
  },
  (t) => [
    index("workflow_executions_product_idx").on(t.productId, t.createdAt),
    index("workflow_executions_status_idx").on(t.status, t.createdAt),
    index("workflow_executions_workflow_idx").on(t.workflowId, t.createdAt),
    uniqueIndex("workflow_executions_fire_idx").on(t.fireKey),
  ],
);

export type NodeStatus = "pending" | "running" | "waiting" | "succeeded" | "failed" | "skipped";

export const nodeRuns = sqliteTable(
  "workflow_node_runs",
  {
    id: text("id").primaryKey(),
    executionId: text("execution_id")
      .notNull()
      .references(() => workflowExecutions.id, { onDelete: "cascade" }),
    nodeId: text("node_id").notNull(),
    type: text("type").notNull(),
    status: text("status").$type<NodeStatus>().notNull(),
    attempt: integer("attempt").notNull().default(0),
    output: text("output", { mode: "json" }),
    // The edge label a node chose (condition: "true" | "false").
    branch: text("branch"),
    error: text("error"),
    // When a waiting timer or a retry backoff ends (a durable timer: it survives a restart).
    wakeAt: integer("wake_at", { mode: "timestamp_ms" }),
    // approval: waits for a person; timer: waits for wake_at.
    waitKind: text("wait_kind", { enum: ["approval", "timer"] }),
    startedAt: integer("started_at", { mode: "timestamp_ms" }),
    finishedAt: integer("finished_at", { mode: "timestamp_ms" }),
  },
  (t) => [uniqueIndex("workflow_node_runs_node_idx").on(t.executionId, t.nodeId), index("workflow_node_runs_wake_idx").on(t.wakeAt)],
);

export const executionEvents = sqliteTable(
  "workflow_events",
  {
    executionId: text("execution_id")
      .notNull()
      .references(() => workflowExecutions.id, { onDelete: "cascade" }),
    seq: integer("seq").notNull(),
    event: text("event").notNull(),
    data: text("data", { mode: "json" }).notNull(),
    createdAt: integer("created_at", { mode: "timestamp_ms" }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.executionId, t.seq] })],
);

/** The trigger nodes of active versions; the id is stable across versions (workflow + node id). */
export const workflowTriggers = sqliteTable(
  "workflow_triggers",
  {
    id: text("id").primaryKey(),
    productId: text("product_id")
      .notNull()
      .references(() => products.id, { onDelete: "cascade" }),
    workflowId: text("workflow_id")
      .notNull()
      .references(() => workflows.id, { onDelete: "cascade" }),
    versionId: text("version_id").notNull(),
    nodeId: text("node_id").notNull(),
    type: text("type", { enum: ["manual", "schedule", "webhook"] }).notNull(),
    config: text("config", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
    // Unique per instance: the path is how a delivery finds its workflow.
    webhookPath: text("webhook_path"),
    nextRunAt: integer("next_run_at", { mode: "timestamp_ms" }),
    lastRunAt: integer("last_run_at", { mode: "timestamp_ms" }),
    createdAt: integer("created_at", { mode: "timestamp_ms" }).notNull(),
  },
  (t) => [
    uniqueIndex("workflow_triggers_path_idx").on(t.webhookPath),
    uniqueIndex("workflow_triggers_node_idx").on(t.workflowId, t.nodeId),
    index("workflow_triggers_due_idx").on(t.type, t.nextRunAt),
  ],
);

export const webhookDeliveries = sqliteTable(
  "webhook_deliveries",
  {
    id: text("id").primaryKey(),
    triggerId: text("trigger_id")
      .notNull()
      .references(() => workflowTriggers.id, { onDelete: "cascade" }),
    // webhook-id, X-GitHub-Delivery or Idempotency-Key: a repeated delivery starts nothing.
    deliveryKey: text("delivery_key"),
    event: text("event"),
    status: text("status", { enum: ["accepted", "ignored"] }).notNull(),
    executionId: text("execution_id"),
    receivedAt: integer("received_at", { mode: "timestamp_ms" }).notNull(),
  },
  (t) => [uniqueIndex("webhook_deliveries_key_idx").on(t.triggerId, t.deliveryKey)],
);
