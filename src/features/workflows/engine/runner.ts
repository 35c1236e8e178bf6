// Runs one execution: starts every node whose predecessors are settled (branches in parallel),
// commits each node's result before its successors start, retries with backoff, and settles the
// execution as waiting, paused or ended. Knows node types only through the registry; a node is
// called by invoke.ts. A write the database refuses (a full disk) makes the runner let go of its
// execution, which the engine takes up again from what was committed once writes work.
import type { Db } from "../../../platform/db/database";
import type { Clock } from "../../../platform/clock";
import type { Logger } from "../../../platform/log";
import { storageFailure } from "../../../platform/db/write-failures";
import type { Graph, GraphNodeDef } from "../model";
import type { NodeRegistry } from "../nodes/node-type";
import type { nodeRuns, workflowExecutions, ExecutionStatus } from "../table";
import type { EventLog } from "./events";
import { invokeNode } from "./invoke";
import { executionRecords, type ExecutionRecords, type Tx, type Wait } from "./records";
import { backoffMs, isRetryable } from "./retry";

export type ExecutionRow = typeof workflowExecutions.$inferSelect;
export type NodeRunRow = typeof nodeRuns.$inferSelect;
type Edge = NonNullable<Graph["edges"]>[number];

export interface RunnerDeps {
  db: Db;
  /** The connection without an fsync per commit, for writes a crash may lose (node started). */
  hotDb: Db;
  clock: Clock;
  log: Logger;
  registry: NodeRegistry;
  events: EventLog;
  organizationOf(productId: string): string | undefined;
  onExit(runner: ExecutionRunner): void;
  /** The runner let go of its execution after a failed write (instead of onExit): it must be taken up again. */
  onLost(runner: ExecutionRunner, error: unknown): void;
}

const iso = (ms: number) => new Date(ms).toISOString();

export class ExecutionRunner {
  readonly id: string;
  private readonly defs = new Map<string, GraphNodeDef>();
  private readonly incoming = new Map<string, Edge[]>();
  private readonly runs = new Map<string, NodeRunRow>();
  private readonly active = new Map<string, AbortController>();
  private readonly outputs: Record<string, { output: unknown }> = {};
  private readonly hasManual: boolean;
  private readonly records: ExecutionRecords;
  /** No new node starts: the execution is paused, or queued for a slot of its workspace. */
  private held = false;
  private ended = false;
  private shuttingDown = false;
  private abandoned = false;
  private advancing = false;
  private readonly pending: { run: NodeRunRow; output: unknown; branch: string | null; startedAt: number; resolve(): void; reject(e: Error): void }[] = [];

  constructor(
    private readonly deps: RunnerDeps,
    private exec: ExecutionRow,
    private readonly graph: Graph,
    runs: NodeRunRow[],
  ) {
    this.id = exec.id;
    this.records = executionRecords(deps, exec.id);
    for (const n of graph.nodes) this.defs.set(n.id, n);
    for (const e of graph.edges ?? []) (this.incoming.get(e.to) ?? this.incoming.set(e.to, []).get(e.to)!).push(e);
    for (const r of runs) {
      this.runs.set(r.nodeId, r);
      if (r.status === "succeeded") this.outputs[r.nodeId] = { output: r.output };
    }
    this.hasManual = graph.nodes.some((n) => deps.registry.get(n.type)?.trigger === "manual");
    this.held = exec.status === "paused" || exec.status === "queued";
  }

  get productId() {
    return this.exec.productId;
  }

  get status(): ExecutionStatus {
    return this.exec.status;
  }

  /**
   * Starts what is ready; when nothing runs any more, settles the execution's status. Never throws:
   * it runs from timers and after nodes, so a failed write lets go of the execution instead.
   */
  advance(): void {
    if (this.ended || this.advancing) return;
    this.advancing = true;
    try {
      if (!this.held) {
        for (let changed = true; changed; ) {
          changed = false;
          for (const run of this.runs.values()) {
            if (run.status !== "pending") continue;
            const d = this.decide(run);
            if (d === "skip") {
              this.skip(run);
              changed = true;
            } else if (d === "ready") this.launch(run);
          }
        }
      }
      if (this.active.size === 0) this.settle();
    } catch (e) {
      this.abandon(e);
    } finally {
      this.advancing = false;
    }
  }

  private decide(run: NodeRunRow): "ready" | "skip" | "wait" {
    if (run.wakeAt && run.wakeAt.getTime() > this.deps.clock.now()) return "wait";
    const def = this.defs.get(run.nodeId)!;
    const edges = this.incoming.get(run.nodeId) ?? [];
    if (edges.length === 0) {
      const trigger = this.deps.registry.get(def.type)?.trigger;
      if (!trigger) return "ready";
      const fires = this.exec.triggerNodeId ? this.exec.triggerNodeId === def.id : !this.hasManual || trigger === "manual";
      return fires ? "ready" : "skip";
    }
    let taken = false;
    for (const e of edges) {
      const source = this.runs.get(e.from)!;
      if (source.status === "succeeded") taken ||= !e.when || e.when === source.branch;
      else if (source.status !== "skipped") return "wait";
    }
    return taken ? "ready" : "skip";
  }

  private skip(run: NodeRunRow) {
    run.status = "skipped";
    this.records.skipped(run);
  }

  private launch(run: NodeRunRow) {
    const def = this.defs.get(run.nodeId)!;
    const now = this.deps.clock.now();
    run.status = "running";
    run.attempt += 1;
    run.wakeAt = null;
    run.startedAt ??= new Date(now);
    this.records.started(run, def.type);
    const abort = new AbortController();
    this.active.set(run.nodeId, abort);
    void this.execute(run, def, abort, now)
      .catch((e) => this.abandon(e))
      .finally(() => {
        this.active.delete(run.nodeId);
        // A macrotask, not a microtask: a chain of quick nodes (transforms resolve in microtasks)
        // would otherwise hold the event loop to its end, with no socket written and no request read.
        setImmediate(() => this.advance());
      });
  }

  /** Rejects only when the execution's state could not be written (then launch lets go of it). */
  private async execute(run: NodeRunRow, def: GraphNodeDef, abort: AbortController, startedAt: number) {
    try {
      const organizationId = this.deps.organizationOf(this.exec.productId) ?? "";
      const outcome = await invokeNode(this.deps, { def, exec: this.exec, run, organizationId, scope: this.scope(), abort });
      if (this.ended || this.shuttingDown) return;
      if ("wait" in outcome) return this.wait(run, outcome.wait);
      await this.commitResult(run, outcome.output, outcome.branch ?? null, startedAt);
    } catch (e) {
      if (this.ended || this.shuttingDown) return;
      // The disk, not the node: the node runs again once the execution is taken up again.
      if (storageFailure(e)) throw e;
      const error = abort.signal.aborted && abort.signal.reason instanceof Error ? abort.signal.reason : (e as Error);
      this.fail(run, def, error, startedAt);
    }
  }

  /** What a node's expressions see: the execution's input, the outputs so far, the execution. */
  private scope() {
    return { input: this.exec.input, nodes: this.outputs, execution: { id: this.id, started_at: this.exec.startedAt ? iso(this.exec.startedAt.getTime()) : null } };
  }

  private succeed(run: NodeRunRow, output: unknown, branch: string | null, startedAt: number) {
    this.deps.db.transaction((tx) => this.recordSuccess(tx, run, output, branch, startedAt))();
  }

  /** Writes a node's success with `tx` and marks it in memory; returns the publisher of its event. */
  private recordSuccess(tx: Tx, run: NodeRunRow, output: unknown, branch: string | null, startedAt: number) {
    const now = this.deps.clock.now();
    Object.assign(run, { status: "succeeded", output, branch, error: null, waitKind: null, finishedAt: new Date(now) });
    this.outputs[run.nodeId] = { output };
    return this.records.succeeded(tx, run, now - startedAt);
  }

  /**
   * Group commit: results of nodes that finish in the same turn (a fan-out) are written in one
   * transaction, so one fsync, in the next macrotask; the node counts as running until then, so
   * no successor starts before its result is durable.
   */
  private commitResult(run: NodeRunRow, output: unknown, branch: string | null, startedAt: number): Promise<void> {
    return new Promise((resolve, reject) => {
      this.pending.push({ run, output, branch, startedAt, resolve, reject });
      if (this.pending.length === 1) setImmediate(() => this.flush());
    });
  }

  /** Commits the results waiting in `pending` (dropped when the execution ended meanwhile: they run again or were stopped). */
  private flush() {
    const batch = this.pending.splice(0);
    if (batch.length === 0) return;
    try {
      if (!this.ended && !this.shuttingDown) {
        const publishers = this.deps.db.transaction((tx) => batch.map((b) => this.recordSuccess(tx, b.run, b.output, b.branch, b.startedAt)));
        for (const publish of publishers) publish();
      }
      for (const b of batch) b.resolve();
    } catch (e) {
      for (const b of batch) b.reject(e as Error);
    }
  }

  private wait(run: NodeRunRow, wait: Wait) {
    this.flush();
    run.status = "waiting";
    run.waitKind = wait.kind;
    run.wakeAt = wait.kind === "timer" ? new Date(wait.until) : null;
    this.records.waiting(run, wait);
  }

  private fail(run: NodeRunRow, def: GraphNodeDef, e: Error, startedAt: number) {
    // Nodes that succeeded before this one failed keep their results.
    this.flush();
    const now = this.deps.clock.now();
    const message = e?.message ?? String(e);
    const maxAttempts = def.retry?.max_attempts ?? 1;
    if (isRetryable(e) && run.attempt < maxAttempts) {
      const delay = backoffMs(def.retry, run.attempt, (e as { retryAfterMs?: number }).retryAfterMs);
      Object.assign(run, { status: "pending", wakeAt: new Date(now + delay), error: message });
      this.records.retrying(run, delay);
      return;
    }
    Object.assign(run, { status: "failed", error: message, finishedAt: new Date(now) });
    this.records.failed(run, now - startedAt);
    this.finish("failed", `node "${run.nodeId}" (${def.type}) failed: ${message}`);
  }

  /**
   * Ends a waiting node with `output` (an approval granted, a timer run out) and goes on; with
   * `queued`, its workspace has no free slot, so the execution waits `queued` until the engine
   * resumes it.
   */
  completeWait(nodeId: string, output: unknown, queued = false) {
    const run = this.runs.get(nodeId);
    if (!run || run.status !== "waiting") return false;
    const started = run.startedAt?.getTime() ?? this.deps.clock.now();
    if (queued) this.held = true;
    // Memory changed before a write failed: this runner lets go, the caller hears of the failure.
    this.orLetGo(() => {
      this.setStatus(queued ? "queued" : "running");
      this.succeed(run, output, null, started);
    });
    this.advance();
    return true;
  }

  /** Due timers (delays and retry backoffs) end now; `queued` as in completeWait. */
  wakeDue(queued = false) {
    const now = this.deps.clock.now();
    for (const run of this.runs.values()) {
      if (run.status === "waiting" && run.waitKind === "timer" && run.wakeAt && run.wakeAt.getTime() <= now) this.completeWait(run.nodeId, { resumed_at: iso(now) }, queued);
    }
    this.advance();
  }

  pause() {
    this.held = true;
  }

  resume() {
    this.held = false;
    this.advance();
  }

  private settle() {
    if (this.held) return this.deps.onExit(this);
    let waiting = false;
    let blocked = false;
    for (const run of this.runs.values()) {
      if (run.status === "waiting") waiting = true;
      else if (run.status === "pending") blocked = true;
    }
    if (waiting) {
      this.setStatus("waiting");
      return this.deps.onExit(this);
    }
    // Only retry backoffs left: still running; the engine's timer brings it back when one is due.
    if (blocked) return this.deps.onExit(this);
    this.finish("succeeded");
  }

  private setStatus(status: ExecutionStatus) {
    if (this.exec.status === status) return;
    this.exec.status = status;
    this.records.status(status);
  }

  /** The output of a `final` node (output), else of the node that finished last. */
  private result(): unknown {
    let last: NodeRunRow | undefined;
    for (const n of this.graph.nodes) {
      const run = this.runs.get(n.id)!;
      if (run.status !== "succeeded") continue;
      if (this.deps.registry.get(n.type)?.final) return run.output;
      if (!last || (run.finishedAt?.getTime() ?? 0) >= (last.finishedAt?.getTime() ?? 0)) last = run;
    }
    return last?.output ?? null;
  }

  /** Ends the execution: running nodes are aborted, nodes not reached are skipped. */
  finish(status: "succeeded" | "failed" | "stopped", error?: string) {
    if (this.ended) return;
    this.ended = true;
    for (const a of this.active.values()) a.abort(new Error(status === "stopped" ? "the execution was stopped" : "another node failed"));
    const output = status === "succeeded" ? this.result() : undefined;
    const cut = status === "stopped" ? "the execution was stopped" : "another node failed";
    const running = [...this.runs.values()].filter((r) => r.status === "running").map((r) => r.id);
    this.exec.status = status;
    this.orLetGo(() => this.records.finished({ status, output, error, cut, at: new Date(this.deps.clock.now()), running }));
    this.deps.events.forget(this.id);
    this.deps.onExit(this);
  }

  /** Runs `write`; when it throws, lets go of the execution and rethrows (so a request hears of it). */
  private orLetGo(write: () => void) {
    try {
      write();
    } catch (e) {
      this.abandon(e);
      throw e;
    }
  }

  /**
   * Writing the execution's state failed (a full disk, or rows deleted under a running node): this
   * runner lets go of the execution as a shutdown does, and the engine takes it up again from what
   * was committed (onLost); Hearth itself goes on.
   */
  private abandon(e: unknown) {
    if (this.abandoned) return;
    this.abandoned = true;
    this.shutdown();
    this.deps.onLost(this, e);
  }

  /** Shutdown: running nodes are aborted and left "running", so the next start runs them again. */
  shutdown() {
    this.shuttingDown = true;
    this.ended = true;
    for (const a of this.active.values()) a.abort(new Error("Hearth is stopping"));
  }
}
