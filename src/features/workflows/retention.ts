// How long ended executions are kept (HEARTH_EXECUTION_RETENTION_DAYS): older ones, with their node
// runs and events, and older webhook deliveries go a slice at a time, at start and every hour. A
// busy webhook workflow otherwise grows the database without end. 0 keeps everything.
import type { Db } from "../../platform/db/database";
import { drainer } from "../../platform/db/drain";
import type { Clock } from "../../platform/clock";
import type { Logger } from "../../platform/log";
import { ENDED_SQL } from "./engine/engine";

const DAY_MS = 24 * 3600 * 1000;
const SWEEP_EVERY_MS = 3600 * 1000;

export function createRetention(deps: { db: Db; clock: Clock; log: Logger; days: number }) {
  const { db, clock, log, days } = deps;
  // created_at first: the status index finds the candidates; finished_at decides.
  const drainExecutions = drainer<[number, number]>(db.$client, "workflow_executions", `${ENDED_SQL} AND created_at < ? AND finished_at < ?`);
  const drainDeliveries = drainer<[number]>(db.$client, "webhook_deliveries", "received_at < ?");
  let timer: ReturnType<typeof setInterval> | undefined;
  let sweeping: Promise<void> | undefined;

  /** Removes what is older than the retention; resolves when done (one sweep at a time). */
  const sweep = (): Promise<void> => {
    if (days === 0) return Promise.resolve();
    sweeping ??= (async () => {
      const cutoff = clock.now() - days * DAY_MS;
      const removed = await drainExecutions(cutoff, cutoff);
      await drainDeliveries(cutoff);
      if (removed > 0) log.info("workflow.history_removed", { executions: removed, older_than_days: days });
    })()
      .catch((e) => log.error("workflow.history_sweep_failed", { error: String(e) }))
      .finally(() => (sweeping = undefined));
    return sweeping;
  };

  return {
    sweep,
    start() {
      if (days === 0) return;
      setTimeout(() => void sweep(), 0).unref?.();
      timer = setInterval(() => void sweep(), SWEEP_EVERY_MS);
      timer.unref?.();
    },
    stop: () => clearInterval(timer),
  };
}
