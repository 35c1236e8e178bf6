// Schemas of workflows, versions, executions, node runs and their requests (validation = types = docs).
import { t, type Static } from "elysia";
import { Timestamp, Uuid, Int } from "../../platform/http/schemas";
import { PaginationQuery } from "../../platform/http/pagination";

/** Graphs larger than this are refused at save: a workflow is a program a person reads, not data. */
export const MAX_NODES = 2000;

const NodeId = t.String({ minLength: 1, maxLength: 64, pattern: "^[A-Za-z0-9_.-]+$", error: "node ids are 1 to 64 characters: letters, digits, _ . or -", description: "Unique in the graph: letters, digits, _ . -" });

export const RetrySchema = t.Object(
  {
    max_attempts: t.Integer({ minimum: 1, maximum: 20, description: "Attempts in all (default 1: no retry)" }),
    backoff_ms: t.Optional(t.Integer({ minimum: 0, maximum: 3_600_000, description: "First wait; doubles each attempt, with jitter (default 1000)" })),
    max_backoff_ms: t.Optional(t.Integer({ minimum: 0, maximum: 86_400_000, description: "Cap on one wait (default 60000)" })),
  },
  { additionalProperties: false },
);

export const GraphNode = t.Object(
  {
    id: NodeId,
    type: t.String({ minLength: 1, maxLength: 64, description: "A node type of GET /api/nodes/types" }),
    name: t.Optional(t.String({ maxLength: 200 })),
    config: t.Optional(t.Record(t.String(), t.Unknown(), { description: "The node type's settings; strings may hold {{ JSONata }}" })),
    retry: t.Optional(RetrySchema),
    timeout_ms: t.Optional(t.Integer({ minimum: 1, maximum: 86_400_000 })),
  },
  { additionalProperties: false },
);

export const GraphEdge = t.Object(
  {
    from: NodeId,
    to: NodeId,
    when: t.Optional(t.String({ minLength: 1, maxLength: 64, description: 'Followed only when the source chose this branch (condition: "true" | "false")' })),
  },
  { additionalProperties: false },
);

export const GraphSchema = t.Object(
  {
    nodes: t.Array(GraphNode, { minItems: 1, maxItems: MAX_NODES }),
    edges: t.Optional(t.Array(GraphEdge, { maxItems: MAX_NODES * 4 })),
  },
  { additionalProperties: false },
);

export type Graph = Static<typeof GraphSchema>;
export type GraphNodeDef = Static<typeof GraphNode>;
export type RetryPolicy = Static<typeof RetrySchema>;

export const WorkflowVersion = t.Object({ id: Uuid, workflow_id: Uuid, version: Int(), graph: GraphSchema, created_at: Timestamp });

export const Workflow = t.Object({
  id: Uuid,
  product_id: Uuid,
  name: t.String(),
  description: t.Union([t.String(), t.Null()]),
  active_version_id: t.Union([Uuid, t.Null()]),
  latest_version: Int(),
  agent_id: t.Optional(t.Union([Uuid, t.Null()])),
  graph: t.Optional(GraphSchema),
  versions: t.Optional(t.Array(t.Omit(WorkflowVersion, ["graph"]))),
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const CreateWorkflowBody = t.Object(
  {
    product_id: t.Optional(Uuid),
    name: t.String({ minLength: 1, maxLength: 200 }),
    description: t.Optional(t.Nullable(t.String({ maxLength: 2000 }))),
    graph: GraphSchema,
    activate: t.Optional(t.Boolean({ description: "Make the new version active (default true)" })),
  },
  { additionalProperties: false },
);

export const UpdateWorkflowBody = t.Object(
  {
    id: t.Optional(Uuid),
    name: t.Optional(t.String({ minLength: 1, maxLength: 200 })),
    description: t.Optional(t.Union([t.String({ maxLength: 2000 }), t.Null()])),
    graph: t.Optional(GraphSchema),
    activate: t.Optional(t.Boolean()),
    active_version_id: t.Optional(Uuid),
  },
  { additionalProperties: false },
);

export const WorkflowQuery = t.Object({ id: t.Optional(Uuid), product_id: t.Optional(Uuid), ...PaginationQuery.properties }, { additionalProperties: false });
export const IdQuery = t.Object({ id: Uuid }, { additionalProperties: false });

const TriggerRef = t.Object({ type: t.String(), id: t.Optional(t.String()) });

export const NodeRunView = t.Object({
  id: Uuid,
  node_id: t.String(),
  type: t.String(),
  status: t.UnionEnum(["pending", "running", "waiting", "succeeded", "failed", "skipped"]),
  attempt: Int(),
  started_at: t.Union([Timestamp, t.Null()]),
  finished_at: t.Union([Timestamp, t.Null()]),
  output: t.Optional(t.Unknown()),
  error: t.Optional(t.String()),
  wake_at: t.Optional(Timestamp),
});

export const ExecutionView = t.Object({
  id: Uuid,
  status: t.UnionEnum(["queued", "running", "paused", "waiting", "succeeded", "failed", "stopped"]),
  product_id: Uuid,
  workflow_id: t.Union([Uuid, t.Null()]),
  version_id: t.Union([Uuid, t.Null()]),
  agent_id: t.Optional(t.Union([Uuid, t.Null()])),
  trigger: TriggerRef,
  input: t.Unknown(),
  output: t.Optional(t.Unknown()),
  error: t.Optional(t.String()),
  nodes: t.Optional(t.Array(NodeRunView)),
  created_at: Timestamp,
  started_at: t.Union([Timestamp, t.Null()]),
  finished_at: t.Union([Timestamp, t.Null()]),
});

/** Inputs are JSON objects of at most this size (characters of their JSON). */
export const MAX_INPUT_CHARS = 256 * 1024;

export const ExecuteBody = t.Object(
  {
    workflow_id: t.Optional(Uuid),
    version_id: t.Optional(Uuid),
    graph: t.Optional(GraphSchema),
    product_id: t.Optional(Uuid),
    input: t.Optional(t.Record(t.String(), t.Unknown())),
  },
  { additionalProperties: false },
);

export const ContinueBody = t.Object(
  {
    input: t.Optional(t.Record(t.String(), t.Unknown(), { description: "Becomes the waiting approval node's output" })),
    node_id: t.Optional(t.String({ description: "Which approval, when several wait" })),
  },
  { additionalProperties: false },
);

export const ExecutionsQuery = t.Object(
  {
    product_id: t.Optional(Uuid),
    workflow_id: t.Optional(Uuid),
    // A union of literals, not t.UnionEnum: Elysia fills a missing optional UnionEnum with its first value.
    status: t.Optional(t.Union(["queued", "running", "paused", "waiting", "succeeded", "failed", "stopped"].map((s) => t.Literal(s)))),
    ...PaginationQuery.properties,
  },
  { additionalProperties: false },
);

export const NodeExecuteBody = t.Object(
  {
    type: t.String({ minLength: 1, maxLength: 64 }),
    config: t.Optional(t.Record(t.String(), t.Unknown())),
    input: t.Optional(t.Record(t.String(), t.Unknown())),
    product_id: t.Optional(Uuid),
    retry: t.Optional(RetrySchema),
    timeout_ms: t.Optional(t.Integer({ minimum: 1, maximum: 86_400_000 })),
  },
  { additionalProperties: false },
);

export const NodeStatusView = t.Object({
  id: Uuid,
  execution_id: Uuid,
  node_id: t.String(),
  type: t.String(),
  status: t.String(),
  attempt: Int(),
  output: t.Optional(t.Unknown()),
  error: t.Optional(t.String()),
  started_at: t.Union([Timestamp, t.Null()]),
  finished_at: t.Union([Timestamp, t.Null()]),
});

export const NodeTypeView = t.Object({ type: t.String(), description: t.String(), trigger: t.Boolean(), config_schema: t.Unknown() });
