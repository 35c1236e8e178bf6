// The in-process scheduler: fires due schedule triggers from the injected clock. A fire is one
// transaction (its execution keyed by trigger and scheduled time, plus the next fire time), so a
// crash never fires twice; a fire missed while Hearth was down runs once, then the schedule goes
// on from now; a fire while the trigger's previous run is unfinished is skipped.
import { and, asc, eq, lte, notInArray } from "drizzle-orm";
import type { Db } from "../../platform/db/database";
import type { Clock } from "../../platform/clock";
import type { Logger } from "../../platform/log";
import { ENDED, type WorkflowEngine } from "./engine/engine";
import { nextFire } from "./nodes/triggers";
import { workflowExecutions, workflows, workflowTriggers, workflowVersions } from "./table";
import type { TriggerRow } from "./triggers";

/** How often production polls for due schedules; cron has one-second resolution at best. */
export const SCHEDULER_POLL_MS = 1000;

export type FireOutcome = { trigger: string; scheduledAt: number; outcome: "fired" | "repeat" | "skipped"; executionId?: string };

export function createScheduler(deps: { db: Db; clock: Clock; log: Logger; engine: WorkflowEngine; pollMs?: number }) {
  const { db, clock, log, engine } = deps;
  let timer: ReturnType<typeof setInterval> | undefined;

  const fireKey = (triggerId: string, at: number) => `${triggerId}:${at}`;

  /** Fires one due trigger; everything it writes commits together or not at all. */
  const fire = (due: TriggerRow, now: number): FireOutcome | undefined =>
    db.transaction((tx) => {
      // Re-read inside the transaction: another tick (or process) may have advanced it already.
      const row = tx.select().from(workflowTriggers).where(eq(workflowTriggers.id, due.id)).get();
      if (!row || row.type !== "schedule" || !row.nextRunAt || row.nextRunAt.getTime() > now) return undefined;
      const scheduledAt = row.nextRunAt.getTime();
      // From now, not from the missed slot: a long outage catches up with one run, not one per slot.
      const next = nextFire(String(row.config.cron), row.config.timezone as string | undefined, now);
      const key = fireKey(row.id, scheduledAt);
      const advance = (fired: boolean) =>
        tx
          .update(workflowTriggers)
          .set({ nextRunAt: next === null ? null : new Date(next), ...(fired ? { lastRunAt: new Date(scheduledAt) } : {}) })
          .where(eq(workflowTriggers.id, row.id))
          .run();

      const repeat = tx.select({ id: workflowExecutions.id }).from(workflowExecutions).where(eq(workflowExecutions.fireKey, key)).get();
      if (repeat) {
        advance(false);
        return { trigger: row.id, scheduledAt, outcome: "repeat" as const, executionId: repeat.id };
      }
      const running = tx
        .select({ id: workflowExecutions.id })
        .from(workflowExecutions)
        .where(and(eq(workflowExecutions.triggerId, row.id), notInArray(workflowExecutions.status, ENDED)))
        .get();
      if (running) {
        advance(false);
        return { trigger: row.id, scheduledAt, outcome: "skipped" as const, executionId: running.id };
      }
      const version = tx.select({ graph: workflowVersions.graph }).from(workflowVersions).where(eq(workflowVersions.id, row.versionId)).get();
      const agentId = tx.select({ agentId: workflows.agentId }).from(workflows).where(eq(workflows.id, row.workflowId)).get()?.agentId ?? null;
      if (!version) throw new Error(`version ${row.versionId} of trigger ${row.id} is gone`);
      const exec = engine.create(
        {
          productId: row.productId,
          workflowId: row.workflowId,
          versionId: row.versionId,
          agentId,
          graph: null,
          graphForNodes: version.graph,
          triggerType: "schedule",
          triggerId: row.id,
          triggerNodeId: row.nodeId,
          fireKey: key,
          input: { trigger_id: row.id, scheduled_at: new Date(scheduledAt).toISOString(), fired_at: new Date(now).toISOString() },
          createdBy: null,
        },
        tx,
      );
      advance(true);
      return { trigger: row.id, scheduledAt, outcome: "fired" as const, executionId: exec.id };
    });

  /** Fires every schedule due at the clock's now; returns what each did (tests, logs). */
  function tick(): FireOutcome[] {
    const now = clock.now();
    const due = db
      .select()
      .from(workflowTriggers)
      .where(and(eq(workflowTriggers.type, "schedule"), lte(workflowTriggers.nextRunAt, new Date(now))))
      .orderBy(asc(workflowTriggers.nextRunAt))
      .all();
    const outcomes: FireOutcome[] = [];
    for (const row of due) {
      try {
        const o = fire(row, now);
        if (!o) continue;
        outcomes.push(o);
        const at = new Date(o.scheduledAt).toISOString();
        if (o.outcome === "skipped") log.warn("schedule.skipped", { trigger: o.trigger, scheduled_at: at, running_execution: o.executionId, reason: "the previous run of this trigger has not ended" });
        else if (o.outcome === "repeat") log.warn("schedule.repeat", { trigger: o.trigger, scheduled_at: at, execution: o.executionId });
        else log.info("schedule.fired", { trigger: o.trigger, scheduled_at: at, execution: o.executionId });
      } catch (e) {
        // Another process took the same fire (unique fire_key), or storage failed: the next tick retries.
        log.error("schedule.fire_failed", { trigger: row.id, error: String(e) });
      }
    }
    if (outcomes.some((o) => o.outcome === "fired")) engine.wake();
    return outcomes;
  }

  return {
    tick,
    /** Fires what came due while Hearth was down (once per trigger), then polls. */
    start() {
      tick();
      timer = setInterval(tick, deps.pollMs ?? SCHEDULER_POLL_MS);
      timer.unref?.();
    },
    stop() {
      clearInterval(timer);
      timer = undefined;
    },
  };
}

export type Scheduler = ReturnType<typeof createScheduler>;
