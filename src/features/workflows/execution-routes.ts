// HTTP routes of spec §4.2 (executions) and §4.3 (single nodes): start, status, live events
// (SSE, replayable with Last-Event-ID), stop, pause, continue, list; run one node.
import { Elysia, t } from "elysia";
import type { AuthPlugin } from "../../platform/auth/plugin";
import { pageWindow } from "../../platform/http/pagination";
import { errors, eventStream, IdParams, ok, okList, otherResponses } from "../../platform/http/schemas";
import { sseResponse, type SseEvent } from "../../platform/http/sse";
import type { EventLog, StoredEvent } from "./engine/events";
import { executionView, nodeRunView, type ExecutionsService } from "./executions";
import { ContinueBody, ExecuteBody, ExecutionsQuery, ExecutionView, NodeExecuteBody, NodeStatusView, NodeTypeView } from "./model";
import type { NodeRegistry } from "./nodes/node-type";

/**
 * Replays stored events after `after`, then follows live ones until `done`; never one twice. A
 * client that has seen the `done` already (a reconnect after the stream closed) gets an empty
 * stream that closes; a Last-Event-ID past the latest event counts as the latest.
 */
async function* follow(events: EventLog, executionId: string, after: number, signal: AbortSignal): AsyncGenerator<SseEvent> {
  const live: StoredEvent[] = [];
  let wake: (() => void) | undefined;
  const off = events.subscribe(executionId, (e) => {
    live.push(e);
    wake?.();
  });
  const onAbort = () => wake?.();
  signal.addEventListener("abort", onAbort);
  try {
    const latest = events.latest(executionId);
    if (latest && after >= latest.seq && latest.event === "done") return;
    let last = Math.min(after, latest?.seq ?? 0);
    const emit = function* (list: StoredEvent[]) {
      for (const e of list) {
        if (e.seq <= last) continue;
        last = e.seq;
        yield { id: e.seq, event: e.event, data: e.data };
      }
    };
    for (const e of emit(events.since(executionId, last))) {
      yield e;
      if (e.event === "done") return;
    }
    while (!signal.aborted) {
      if (live.length === 0) {
        await new Promise<void>((r) => (wake = r));
        wake = undefined;
        continue;
      }
      const batch = live.splice(0);
      // An event committed between the replay and the subscription would be a gap: read it back.
      const missing = batch[0]!.seq > last + 1 ? events.since(executionId, last).filter((e) => e.seq < batch[0]!.seq) : [];
      for (const e of emit([...missing, ...batch])) {
        yield e;
        if (e.event === "done") return;
      }
    }
  } finally {
    off();
    signal.removeEventListener("abort", onAbort);
  }
}

export function executionRoutes({ auth, executions, events, registry, heartbeatMs }: { auth: AuthPlugin; executions: ExecutionsService; events: EventLog; registry: NodeRegistry; heartbeatMs?: number }) {
  const Status = ok(ExecutionView);
  const accepted = (e: Parameters<typeof executionView>[0]) => ({ success: true as const, message: "Execution queued", data: { id: e.id, status: e.status, workflow_id: e.workflowId, version_id: e.versionId } });

  return new Elysia()
    .use(auth)
    .guard({ detail: { tags: ["Workflow executions"] } })
    .post(
      "/api/workflow/execute",
      ({ principal, body, set }) => {
        set.status = 202;
        return accepted(executions.execute(principal, body));
      },
      {
        auth: "any:strict",
        body: ExecuteBody,
        response: { 202: ok(t.Object({ id: t.String(), status: t.String(), workflow_id: t.Union([t.String(), t.Null()]), version_id: t.Union([t.String(), t.Null()]) })), ...errors(400, 401, 404, 409, 413, 422, 429) },
        detail: { summary: "Run a workflow: its active version (workflow_id), a pinned version (version_id), or an inline graph (a test run)" },
      },
    )
    .get(
      "/api/workflow/executions",
      ({ principal, query }) => {
        const win = pageWindow(query);
        const { rows, total } = executions.list(principal, query, win);
        return { success: true as const, data: rows.map((e) => executionView(e)), pagination: { page: win.page, pageSize: win.pageSize, total } };
      },
      { auth: "any", query: ExecutionsQuery, response: { 200: okList(ExecutionView), ...errors(400, 401, 404, 422, 429) }, detail: { summary: "Executions of a workspace or workflow, newest first" } },
    )
    .get(
      "/api/workflow/:id/status",
      ({ principal, params }) => {
        const { execution, nodes } = executions.status(principal, params.id);
        return { success: true as const, data: executionView(execution, nodes) };
      },
      { auth: "any", params: IdParams, response: { 200: Status, ...errors(401, 404, 422, 429) }, detail: { summary: "An execution's status, input, output and every node run" } },
    )
    .get(
      "/api/workflow/:id/events",
      ({ principal, params, request, query, credentialsLive }) => {
        const e = executions.requireExecution(principal, params.id);
        const header = request.headers.get("last-event-id") ?? query.last_event_id;
        const after = Number.isInteger(Number(header)) && Number(header) > 0 ? Number(header) : 0;
        return sseResponse(request, (signal) => follow(events, e.id, after, signal), () => [], { heartbeatMs, live: credentialsLive(request, principal) });
      },
      {
        auth: "any",
        params: IdParams,
        query: t.Object({ last_event_id: t.Optional(t.String({ maxLength: 20 })) }),
        detail: {
          summary: "Live events of an execution (SSE); Last-Event-ID replays what was missed",
          description:
            "Events: `status` {status}, `node_started` {node_id, type, attempt}, `node_finished` {node_id, status, output?, error?, duration_ms}, `node_retry` {node_id, attempt, delay_ms, error}, " +
            "`node_waiting` {node_id, kind: timer | approval, until? | message?}, `token` {node_id, delta}, and last `done` {status, output?, error?}, after which the stream closes.",
          responses: otherResponses(eventStream("The execution's events, replayed then live, each with its id (Last-Event-ID)"), 401, 404, 422, 429),
        },
      },
    )
    .post("/api/workflow/:id/stop", ({ principal, params }) => ({ success: true as const, message: "Execution stopped", data: executionView(executions.stop(principal, params.id)) }), {
      auth: "any",
      params: IdParams,
      response: { 200: Status, ...errors(401, 404, 409, 422, 429) },
      detail: { summary: "Stop an execution (queued, running, paused or waiting); the running node's work is aborted" },
    })
    .post("/api/workflow/:id/pause", ({ principal, params }) => ({ success: true as const, message: "Execution paused", data: executionView(executions.pause(principal, params.id)) }), {
      auth: "any",
      params: IdParams,
      response: { 200: Status, ...errors(401, 404, 409, 422, 429) },
      detail: { summary: "Pause a running execution: no new node starts; the running one finishes" },
    })
    .post(
      "/api/workflow/:id/continue",
      ({ principal, params, body }) => ({ success: true as const, message: "Execution continued", data: executionView(executions.continue(principal, params.id, body?.input, body?.node_id)) }),
      {
        auth: "any",
        params: IdParams,
        body: t.Optional(ContinueBody),
        response: { 200: Status, ...errors(400, 401, 404, 409, 413, 422, 429) },
        detail: { summary: "Resume a paused execution, or approve a waiting approval ({input} becomes its output)" },
      },
    )
    .post(
      "/api/nodes/execute",
      ({ principal, body, set }) => {
        const { run, execution } = executions.executeNode(principal, body);
        set.status = 202;
        return { success: true as const, message: "Node queued", data: { id: run.id, status: run.status, execution_id: execution.id } };
      },
      {
        auth: "any:strict",
        body: NodeExecuteBody,
        response: { 202: ok(t.Object({ id: t.String(), status: t.String(), execution_id: t.String() })), ...errors(400, 401, 404, 413, 422, 429) },
        detail: { summary: "Run one node alone (status at GET /api/nodes/status/{id})" },
      },
    )
    .get(
      "/api/nodes/status/:id",
      ({ principal, params }) => {
        const { run, execution } = executions.nodeStatus(principal, params.id);
        return { success: true as const, data: { ...nodeRunView(run), execution_id: execution.id } };
      },
      { auth: "any", params: IdParams, response: { 200: ok(NodeStatusView), ...errors(401, 404, 422, 429) }, detail: { summary: "A node run's status and output (single nodes and nodes of executions)" } },
    )
    .get(
      "/api/nodes/types",
      () => {
        const types = registry.list().map((n) => ({ type: n.type, description: n.description, trigger: Boolean(n.trigger), config_schema: n.config }));
        return { success: true as const, data: types, pagination: { page: 1, pageSize: types.length, total: types.length } };
      },
      { auth: "any", response: { 200: okList(NodeTypeView), ...errors(401, 429) }, detail: { summary: "Node types with their config schemas" } },
    );
}
