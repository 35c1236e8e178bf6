// The in-process workflow engine: queues executions per workspace under a concurrency cap, keeps
// one runner per execution in progress, wakes durable timers from the injected clock, resumes
// what a crash interrupted, and carries out stop, pause, continue and approvals. A write the
// database refuses (a full disk) never ends the process: the engine backs off, logs the run of
// failures once, and takes up the executions it had to let go once writes work again.
import { and, asc, count, eq, inArray, lte, sql } from "drizzle-orm";
import type { Db } from "../../../platform/db/database";
import type { Clock } from "../../../platform/clock";
import type { Logger } from "../../../platform/log";
import { failureRun, storageFailure } from "../../../platform/db/write-failures";
import { conflict, notFound } from "../../../platform/errors";
import type { Graph } from "../model";
import type { NodeRegistry } from "../nodes/node-type";
import { nodeRuns, workflowExecutions, workflowVersions, type ExecutionStatus, type TriggerType } from "../table";
import type { EventLog } from "./events";
import { ExecutionRunner, type ExecutionRow } from "./runner";

const TICK_MS = 250;
export const ENDED: ExecutionStatus[] = ["succeeded", "failed", "stopped"];
/** The statuses of an execution not ended yet (the status index finds them; NOT IN ENDED would scan). */
export const IN_PROGRESS: ExecutionStatus[] = ["queued", "running", "paused", "waiting"];
/** ENDED as a condition of raw SQL on workflow_executions (the drainers'). */
export const ENDED_SQL = `status IN (${ENDED.map((s) => `'${s}'`).join(", ")})`;

export interface NewExecution {
  productId: string;
  workflowId: string | null;
  versionId: string | null;
  agentId?: string | null;
  /** Inline graphs (test runs, single nodes); a version's graph is read from the version. */
  graph: Graph | null;
  graphForNodes: Graph;
  mode?: "workflow" | "node";
  triggerType: TriggerType;
  triggerId?: string | null;
  triggerNodeId?: string | null;
  fireKey?: string | null;
  input: Record<string, unknown>;
  createdBy: string | null;
}

type Writer = Pick<Db, "insert">;

export interface EngineDeps {
  db: Db;
  hotDb: Db;
  clock: Clock;
  log: Logger;
  registry: NodeRegistry;
  events: EventLog;
  /** Executions running at once per workspace; more wait `queued`. */
  concurrency: number;
  organizationOf(productId: string): string | undefined;
}

export function createWorkflowEngine(deps: EngineDeps) {
  const { db, clock, events } = deps;
  const runners = new Map<string, ExecutionRunner>();
  const exitListeners = new Set<(execution: ExecutionRow) => void>();
  let started = false;
  /** Whether start() could put back the nodes a crash left running (a full disk at start: the tick tries again). */
  let resumed = false;
  let timer: ReturnType<typeof setInterval> | undefined;
  const trouble = failureRun(deps.log, "workflow engine");
  /** No tick before this (clock ms): backing off after a failed write. */
  let retryAt = 0;
  /**
   * Executions whose runner let go after a failed write: their rows are as the last commit left
   * them, so they are taken up as a start takes up what a crash left (nodes found running run again).
   */
  const lost = new Set<string>();

  // The tick's queries run four times a second, loaded or idle: built once.
  const runningPerWorkspace = db
    .select({ productId: workflowExecutions.productId, n: count() })
    .from(workflowExecutions)
    .where(eq(workflowExecutions.status, "running"))
    .groupBy(workflowExecutions.productId)
    .prepare();
  const runningIn = db
    .select({ n: count() })
    .from(workflowExecutions)
    .where(and(eq(workflowExecutions.productId, sql.placeholder("productId")), eq(workflowExecutions.status, "running")))
    .prepare();
  const oldestQueued = db
    .select({ id: workflowExecutions.id, productId: workflowExecutions.productId, startedAt: workflowExecutions.startedAt })
    .from(workflowExecutions)
    .where(eq(workflowExecutions.status, "queued"))
    .orderBy(asc(workflowExecutions.createdAt), asc(workflowExecutions.id))
    .limit(500)
    .prepare();
  // wake_at holds epoch milliseconds (timestamp_ms), so the clock's number is compared as is.
  const dueExecutions = db
    .selectDistinct({ id: nodeRuns.executionId })
    .from(nodeRuns)
    .innerJoin(workflowExecutions, eq(workflowExecutions.id, nodeRuns.executionId))
    .where(and(lte(nodeRuns.wakeAt, sql.placeholder("now")), inArray(workflowExecutions.status, ["running", "waiting"])))
    .prepare();

  const getRow = (id: string) => db.select().from(workflowExecutions).where(eq(workflowExecutions.id, id)).get();

  const graphOf = (exec: ExecutionRow): Graph => {
    if (exec.graph) return exec.graph;
    const v = db.select({ graph: workflowVersions.graph }).from(workflowVersions).where(eq(workflowVersions.id, exec.versionId!)).get();
    if (!v) throw new Error(`version ${exec.versionId} of execution ${exec.id} is gone`);
    return v.graph;
  };

  /** A failed write in the background: waits out a growing delay before the next tick (logged once per run). */
  const failed = (e: unknown) => {
    retryAt = clock.now() + trouble.failed(e);
  };

  const onExit = (runner: ExecutionRunner) => {
    if (runners.get(runner.id) === runner) runners.delete(runner.id);
    try {
      const row = getRow(runner.id);
      for (const l of row ? exitListeners : []) {
        try {
          l(row!);
        } catch (e) {
          deps.log.error("workflow.exit_listener_failed", { execution: runner.id, error: String(e) });
        }
      }
    } catch (e) {
      failed(e);
    }
    queueMicrotask(pump);
  };

  /**
   * A runner let go after a failed write. The disk's failure: taken up again once writes work.
   * Any other (rows deleted under a running node) would fail again at once: left to the next start.
   */
  const onLost = (runner: ExecutionRunner, e: unknown) => {
    if (runners.get(runner.id) === runner) runners.delete(runner.id);
    if (!storageFailure(e)) return deps.log.error("workflow.record_failed", { execution: runner.id, error: String(e) });
    lost.add(runner.id);
    failed(e);
  };

  /** Puts lost executions' nodes left running back to pending, as start() does after a crash. */
  const reclaim = (ids: string[]) => {
    for (let i = 0; i < ids.length; i += 500) {
      db.update(nodeRuns).set({ status: "pending" }).where(and(inArray(nodeRuns.executionId, ids.slice(i, i + 500)), eq(nodeRuns.status, "running"))).run();
    }
    ids.forEach((id) => lost.delete(id));
  };

  const load = (id: string): ExecutionRunner => {
    const existing = runners.get(id);
    if (existing) return existing;
    if (lost.has(id)) reclaim([id]);
    const exec = getRow(id);
    if (!exec) throw notFound("Execution");
    const runs = db.select().from(nodeRuns).where(eq(nodeRuns.executionId, id)).all();
    const runner = new ExecutionRunner({ ...deps, onExit, onLost }, exec, graphOf(exec), runs);
    runners.set(id, runner);
    return runner;
  };

  /** Takes up what a crash (once per start) or a failed write left: nodes found running run again. */
  const resume = () => {
    if (!resumed) {
      const open = db.select({ id: workflowExecutions.id }).from(workflowExecutions).where(inArray(workflowExecutions.status, ["running", "paused", "waiting"]));
      db.update(nodeRuns).set({ status: "pending" }).where(and(eq(nodeRuns.status, "running"), inArray(nodeRuns.executionId, open))).run();
      resumed = true;
      // Through `lost`, so those not reached when a write fails halfway are taken up by a later tick.
      for (const { id } of db.select({ id: workflowExecutions.id }).from(workflowExecutions).where(eq(workflowExecutions.status, "running")).all()) lost.add(id);
    }
    for (const id of lost) if (runners.has(id)) lost.delete(id);
    const ids = [...lost];
    reclaim(ids);
    // A runner that cannot write lets go again by itself (onLost); one that cannot be loaded stays lost with those after it.
    for (const [i, id] of ids.entries()) {
      try {
        if (getRow(id)?.status === "running") load(id).advance();
      } catch (e) {
        if (!storageFailure(e)) {
          deps.log.error("workflow.resume_failed", { execution: id, error: String(e) });
          continue;
        }
        ids.slice(i).forEach((x) => lost.add(x));
        throw e;
      }
    }
  };

  const setStatus = (id: string, status: ExecutionStatus, extra: Partial<ExecutionRow> = {}) => {
    const publish = db.transaction((tx) => {
      tx.update(workflowExecutions).set({ status, ...extra }).where(eq(workflowExecutions.id, id)).run();
      return events.append(id, "status", { status }, tx);
    });
    publish();
  };

  /** Starts queued executions, oldest first, while their workspace is under its cap. */
  function pump() {
    if (!started) return;
    try {
      const busy = new Map(runningPerWorkspace.all().map((r) => [r.productId, r.n]));
      const queued = oldestQueued.all();
      for (const q of queued) {
        const n = busy.get(q.productId) ?? 0;
        if (n >= deps.concurrency) continue;
        busy.set(q.productId, n + 1);
        // One queued again for a slot (continued, approved, woken) keeps when it first started.
        setStatus(q.id, "running", { startedAt: q.startedAt ?? new Date(clock.now()) });
        try {
          load(q.id).resume();
        } catch (e) {
          if (!storageFailure(e)) {
            deps.log.error("workflow.resume_failed", { execution: q.id, error: String(e) });
            continue;
          }
          // Running without a runner: taken up by the next tick that can write.
          lost.add(q.id);
          throw e;
        }
      }
    } catch (e) {
      if (storageFailure(e)) failed(e);
      else deps.log.error("workflow.pump_failed", { error: String(e) });
    }
  }

  /** Whether the workspace runs as many executions as it may: one that would go on waits queued instead. */
  const full = (productId: string) => (runningIn.get({ productId })?.n ?? 0) >= deps.concurrency;

  /**
   * Takes up lost executions, ends due timers and retry backoffs of executions in progress, starts
   * queued ones. Never throws (it runs from a timer): a failed write backs off instead.
   */
  function tick() {
    if (!started || clock.now() < retryAt) return;
    const failures = trouble.failures;
    try {
      resume();
      const due = dueExecutions.all({ now: clock.now() });
      for (const { id } of due) {
        try {
          const runner = load(id);
          runner.wakeDue(runner.status === "waiting" && full(runner.productId));
        } catch (e) {
          if (storageFailure(e)) throw e;
          deps.log.error("workflow.wake_failed", { execution: id, error: String(e) });
        }
      }
      pump();
    } catch (e) {
      failed(e);
    }
    // Over once every lost execution is taken up and nothing failed meanwhile.
    if (trouble.failures === failures && lost.size === 0) trouble.ok();
  }

  const requireRow = (id: string) => {
    const row = getRow(id);
    if (!row) throw notFound("Execution");
    return row;
  };

  return {
    graphOf,

    /** Writes a queued execution with a pending row per node (in `tx` when given); call wake() after commit. */
    create(n: NewExecution, tx: Writer = db): ExecutionRow {
      const now = new Date(clock.now());
      const row: ExecutionRow = {
        id: crypto.randomUUID(),
        productId: n.productId,
        workflowId: n.workflowId,
        versionId: n.versionId,
        agentId: n.agentId ?? null,
        graph: n.graph,
        mode: n.mode ?? "workflow",
        status: "queued",
        triggerType: n.triggerType,
        triggerId: n.triggerId ?? null,
        triggerNodeId: n.triggerNodeId ?? null,
        fireKey: n.fireKey ?? null,
        input: n.input,
        output: null,
        error: null,
        createdBy: n.createdBy,
        createdAt: now,
        startedAt: null,
        finishedAt: null,
      };
      tx.insert(workflowExecutions).values(row).run();
      const nodes = n.graphForNodes.nodes.map((node) => ({ id: crypto.randomUUID(), executionId: row.id, nodeId: node.id, type: node.type, status: "pending" as const, attempt: 0 }));
      for (let i = 0; i < nodes.length; i += 200) tx.insert(nodeRuns).values(nodes.slice(i, i + 200)).run();
      events.append(row.id, "status", { status: "queued" }, tx as Db);
      return row;
    },

    /** Looks for work soon; a macrotask, so the response that acknowledged it is written first. */
    wake: () => void setImmediate(pump),
    tick,

    start() {
      // Nodes a crash left running never finished: they run again (same idempotency key), from
      // the first tick (which backs off while the database refuses writes).
      resumed = false;
      retryAt = 0;
      started = true;
      tick();
      timer = setInterval(tick, TICK_MS);
      timer.unref?.();
    },

    /** Stops picking work and aborts running nodes; they run again at the next start. */
    shutdown() {
      started = false;
      clearInterval(timer);
      for (const r of runners.values()) r.shutdown();
      runners.clear();
      // The next start takes up every execution in progress anyway.
      lost.clear();
    },

    pause(id: string) {
      const row = requireRow(id);
      if (row.status !== "running") throw conflict(`The execution is ${row.status}; only a running execution can be paused`);
      setStatus(id, "paused");
      runners.get(id)?.pause();
      return requireRow(id);
    },

    /**
     * paused → running; waiting on an approval → that approval gets `input` as its output. An
     * execution that was not running waits `queued` when its workspace has no free slot.
     */
    continue(id: string, input: Record<string, unknown> | undefined, nodeId?: string) {
      const row = requireRow(id);
      if (row.status === "paused") {
        if (full(row.productId)) {
          setStatus(id, "queued");
          return requireRow(id);
        }
        setStatus(id, "running");
        load(id).resume();
        return requireRow(id);
      }
      if (row.status === "waiting" || row.status === "running") {
        const approvals = db
          .select({ nodeId: nodeRuns.nodeId })
          .from(nodeRuns)
          .where(and(eq(nodeRuns.executionId, id), eq(nodeRuns.status, "waiting"), eq(nodeRuns.waitKind, "approval")))
          .all()
          .map((r) => r.nodeId);
        const target = nodeId ?? approvals[0];
        if (!target || !approvals.includes(target)) {
          throw conflict(nodeId ? `Node "${nodeId}" is not waiting for an approval; the execution is ${row.status}` : `The execution is ${row.status} and no approval is waiting`);
        }
        load(id).completeWait(target, input ?? { approved: true }, row.status === "waiting" && full(row.productId));
        return requireRow(id);
      }
      throw conflict(`The execution is ${row.status}; only a paused execution or a waiting approval can be continued`);
    },

    stop(id: string) {
      const row = requireRow(id);
      if (ENDED.includes(row.status)) throw conflict(`The execution is ${row.status} already`);
      load(id).finish("stopped", "stopped by request");
      return requireRow(id);
    },

    /** Called with the row whenever a runner lets go of an execution (ended, waiting, paused). */
    onExit(listener: (execution: ExecutionRow) => void) {
      exitListeners.add(listener);
      return () => exitListeners.delete(listener);
    },

    /** Resolves with the row once the execution is in one of `statuses` (tests, `wait` callers). */
    until(id: string, statuses: ExecutionStatus[] = ENDED, timeoutMs = 120_000): Promise<ExecutionRow> {
      return new Promise((resolve, reject) => {
        let timeout: ReturnType<typeof setTimeout> | undefined = undefined;
        const check = () => {
          const row = getRow(id);
          if (row && statuses.includes(row.status)) {
            off();
            clearTimeout(timeout);
            resolve(row);
            return true;
          }
          return false;
        };
        const off = events.subscribe(id, (e) => {
          if (e.event === "status" || e.event === "done") check();
        });
        if (check()) return;
        timeout = setTimeout(() => {
          off();
          const row = getRow(id);
          row ? resolve(row) : reject(notFound("Execution"));
        }, timeoutMs);
      });
    },

    /** Executions held in memory right now (tests, benchmarks). */
    activeCount: () => runners.size,
  };
}

export type WorkflowEngine = ReturnType<typeof createWorkflowEngine>;
