// How one execution's state changes are recorded: each is its row (a node run's or the execution's)
// and its event, committed in one transaction; the event reaches live listeners after the commit.
import { and, eq, inArray } from "drizzle-orm";
import type { Db } from "../../../platform/db/database";
import { nodeRuns, workflowExecutions, type ExecutionStatus } from "../table";
import type { EventLog } from "./events";
import type { NodeRunRow } from "./runner";

export type Tx = Parameters<Parameters<Db["transaction"]>[0]>[0];
export type Wait = { kind: "timer"; until: number } | { kind: "approval"; message: string };

export function executionRecords({ db, hotDb, events }: { db: Db; hotDb: Db; events: EventLog }, executionId: string) {
  /** Commits `write` (which returns its event's publisher), then publishes. */
  const commit = (write: (tx: Tx) => () => void) => db.transaction(write)();

  return {
    skipped(run: NodeRunRow) {
      commit((tx) => {
        tx.update(nodeRuns).set({ status: "skipped", wakeAt: null }).where(eq(nodeRuns.id, run.id)).run();
        return events.append(executionId, "node_finished", { node_id: run.nodeId, status: "skipped", duration_ms: 0 }, tx);
      });
    },

    /** Written without an fsync: after a crash a node found "running" or "pending" runs again alike. */
    started(run: NodeRunRow, type: string) {
      hotDb.update(nodeRuns).set({ status: "running", attempt: run.attempt, wakeAt: null, startedAt: run.startedAt }).where(eq(nodeRuns.id, run.id)).run();
      events.append(executionId, "node_started", { node_id: run.nodeId, type, attempt: run.attempt }, hotDb)();
    },

    /** Writes a node's success with `tx` (a batch shares one); returns the publisher of its event. */
    succeeded(tx: Tx, run: NodeRunRow, durationMs: number): () => void {
      tx.update(nodeRuns).set({ status: "succeeded", output: run.output, branch: run.branch, error: null, waitKind: null, wakeAt: null, finishedAt: run.finishedAt }).where(eq(nodeRuns.id, run.id)).run();
      return events.append(executionId, "node_finished", { node_id: run.nodeId, status: "succeeded", output: run.output, duration_ms: durationMs }, tx);
    },

    waiting(run: NodeRunRow, wait: Wait) {
      commit((tx) => {
        tx.update(nodeRuns).set({ status: "waiting", waitKind: run.waitKind, wakeAt: run.wakeAt, output: wait.kind === "approval" ? { message: wait.message } : null }).where(eq(nodeRuns.id, run.id)).run();
        return events.append(executionId, "node_waiting", { node_id: run.nodeId, kind: wait.kind, ...(wait.kind === "timer" ? { until: new Date(wait.until).toISOString() } : { message: wait.message }) }, tx);
      });
    },

    retrying(run: NodeRunRow, delayMs: number) {
      commit((tx) => {
        tx.update(nodeRuns).set({ status: "pending", wakeAt: run.wakeAt, error: run.error }).where(eq(nodeRuns.id, run.id)).run();
        return events.append(executionId, "node_retry", { node_id: run.nodeId, attempt: run.attempt, delay_ms: delayMs, error: run.error }, tx);
      });
    },

    failed(run: NodeRunRow, durationMs: number) {
      commit((tx) => {
        tx.update(nodeRuns).set({ status: "failed", error: run.error, finishedAt: run.finishedAt, wakeAt: null }).where(eq(nodeRuns.id, run.id)).run();
        return events.append(executionId, "node_finished", { node_id: run.nodeId, status: "failed", error: run.error, duration_ms: durationMs }, tx);
      });
    },

    status(status: ExecutionStatus) {
      commit((tx) => {
        tx.update(workflowExecutions).set({ status }).where(eq(workflowExecutions.id, executionId)).run();
        return events.append(executionId, "status", { status }, tx);
      });
    },

    /** The end: nodes still running fail with `cut`, nodes not reached are skipped, then `status` and `done`. */
    finished(end: { status: "succeeded" | "failed" | "stopped"; output?: unknown; error?: string; cut: string; at: Date; running: string[] }) {
      const { status, output, error, cut, at, running } = end;
      commit((tx) => {
        if (running.length) tx.update(nodeRuns).set({ status: "failed", error: cut, finishedAt: at, wakeAt: null }).where(inArray(nodeRuns.id, running)).run();
        tx.update(nodeRuns).set({ status: "skipped", wakeAt: null }).where(and(eq(nodeRuns.executionId, executionId), inArray(nodeRuns.status, ["pending", "waiting"]))).run();
        tx.update(workflowExecutions).set({ status, output: output ?? null, error: error ?? null, finishedAt: at }).where(eq(workflowExecutions.id, executionId)).run();
        const a = events.append(executionId, "status", { status }, tx);
        const b = events.append(executionId, "done", { status, ...(output !== undefined ? { output } : {}), ...(error ? { error } : {}) }, tx);
        return () => (a(), b());
      });
    },
  };
}

export type ExecutionRecords = ReturnType<typeof executionRecords>;
