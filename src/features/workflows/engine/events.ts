// The event log of executions: every event is a numbered row first (so `Last-Event-ID` replays
// exactly what a client missed), then it is handed to live listeners.
import { and, asc, desc, eq, gt, max } from "drizzle-orm";
import type { Db } from "../../../platform/db/database";
import type { Clock } from "../../../platform/clock";
import { executionEvents } from "../table";

export interface StoredEvent {
  seq: number;
  event: string;
  data: Record<string, unknown>;
}

type Listener = (e: StoredEvent) => void;
type Writer = Pick<Db, "insert">;

export function createEventLog({ db, hotDb, clock }: { db: Db; hotDb: Db; clock: Clock }) {
  const seqs = new Map<string, number>();
  const listeners = new Map<string, Set<Listener>>();

  const nextSeq = (executionId: string) => {
    let seq = seqs.get(executionId);
    if (seq === undefined) seq = db.select({ n: max(executionEvents.seq) }).from(executionEvents).where(eq(executionEvents.executionId, executionId)).get()?.n ?? 0;
    seqs.set(executionId, ++seq);
    return seq;
  };

  const publish = (executionId: string, e: StoredEvent) => {
    for (const l of listeners.get(executionId) ?? []) {
      try {
        l(e);
      } catch {
        // a listener's failure is its own
      }
    }
  };

  return {
    /**
     * Writes an event with `tx` (so it commits with the state change it reports) and returns a
     * function that publishes it; call that after the transaction commits.
     */
    append(executionId: string, event: string, data: Record<string, unknown>, tx: Writer = db): () => void {
      const e: StoredEvent = { seq: nextSeq(executionId), event, data };
      tx.insert(executionEvents).values({ executionId, seq: e.seq, event, data, createdAt: new Date(clock.now()) }).run();
      return () => publish(executionId, e);
    },

    /**
     * Token deltas: many, small, and rebuilt by the node's final output anyway, so they go through
     * the connection that does not fsync each commit.
     */
    token(executionId: string, data: Record<string, unknown>) {
      const e: StoredEvent = { seq: nextSeq(executionId), event: "token", data };
      hotDb.insert(executionEvents).values({ executionId, seq: e.seq, event: "token", data, createdAt: new Date(clock.now()) }).run();
      publish(executionId, e);
    },

    since(executionId: string, afterSeq: number): StoredEvent[] {
      return db
        .select({ seq: executionEvents.seq, event: executionEvents.event, data: executionEvents.data })
        .from(executionEvents)
        .where(and(eq(executionEvents.executionId, executionId), gt(executionEvents.seq, afterSeq)))
        .orderBy(asc(executionEvents.seq))
        .all() as StoredEvent[];
    },

    /** The execution's latest stored event (its number and name), if it has any. */
    latest(executionId: string): { seq: number; event: string } | undefined {
      return db
        .select({ seq: executionEvents.seq, event: executionEvents.event })
        .from(executionEvents)
        .where(eq(executionEvents.executionId, executionId))
        .orderBy(desc(executionEvents.seq))
        .limit(1)
        .get();
    },

    subscribe(executionId: string, listener: Listener): () => void {
      let set = listeners.get(executionId);
      if (!set) listeners.set(executionId, (set = new Set()));
      set.add(listener);
      return () => {
        set!.delete(listener);
        if (set!.size === 0) listeners.delete(executionId);
      };
    },

    /** Drops the cached counter of an execution that has ended (its next event reads the table). */
    forget: (executionId: string) => void seqs.delete(executionId),
  };
}

export type EventLog = ReturnType<typeof createEventLog>;
