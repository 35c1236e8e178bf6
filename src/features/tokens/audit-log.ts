// The token audit log. Lifecycle rows are written inside the change's own transaction; `used`
// rows are queued and written together once per event-loop turn, after the response has gone
// out, so a request never waits for its audit row and a burst costs one transaction.
import { desc, eq, inArray } from "drizzle-orm";
import type { Db } from "../../platform/db/database";
import type { Clock } from "../../platform/clock";
import type { Logger } from "../../platform/log";
import { apiTokenAuditLogs, apiTokens } from "./table";

export type AuditAction = (typeof apiTokenAuditLogs.$inferInsert)["action"];
export type AuditRow = typeof apiTokenAuditLogs.$inferSelect;

export interface RequestInfo {
  ipAddress: string | null;
  userAgent: string | null;
  endpoint: string;
}

export interface AuditEntry extends Partial<RequestInfo> {
  tokenId: string;
  action: AuditAction;
  statusCode?: number | null;
  at?: number;
}

export function createTokenAuditLog({ db, clock, log }: { db: Db; clock: Clock; log: Logger }) {
  let queue: AuditEntry[] = [];
  let scheduled: unknown;

  const toRow = (e: AuditEntry) => ({
    tokenId: e.tokenId,
    action: e.action,
    ipAddress: e.ipAddress ?? null,
    userAgent: e.userAgent ?? null,
    endpoint: e.endpoint ?? null,
    statusCode: e.statusCode ?? null,
    createdAt: new Date(e.at ?? clock.now()),
  });

  /** Writes queued rows in one transaction; on failure keeps them for the next attempt. */
  const flush = () => {
    scheduled = undefined;
    if (queue.length === 0) return;
    const batch = queue;
    queue = [];
    try {
      db.transaction((tx) => {
        // Rows of a token deleted meanwhile would break the foreign key; its log is gone with it.
        const ids = [...new Set(batch.map((e) => e.tokenId))];
        const alive = new Set(tx.select({ id: apiTokens.id }).from(apiTokens).where(inArray(apiTokens.id, ids)).all().map((r) => r.id));
        const rows = batch.filter((e) => alive.has(e.tokenId)).map(toRow);
        for (let i = 0; i < rows.length; i += 500) tx.insert(apiTokenAuditLogs).values(rows.slice(i, i + 500)).run();
        const used = batch.filter((e) => e.action === "used" && alive.has(e.tokenId) && (e.statusCode ?? 0) < 400);
        for (const id of new Set(used.map((e) => e.tokenId))) {
          const last = Math.max(...used.filter((e) => e.tokenId === id).map((e) => e.at ?? 0));
          tx.update(apiTokens).set({ lastUsedAt: new Date(last) }).where(eq(apiTokens.id, id)).run();
        }
      });
    } catch (e) {
      log.error("token audit write failed; will retry", { error: String(e), rows: batch.length });
      queue = batch.concat(queue);
      scheduled ??= setTimeout(flush, 100);
    }
  };

  return {
    /** Queues a row; it is written within this event-loop turn. */
    enqueue(entry: AuditEntry) {
      queue.push({ ...entry, at: entry.at ?? clock.now() });
      scheduled ??= setImmediate(flush);
    },

    /** Writes a row now, inside the caller's transaction (see `transaction`). */
    write(entry: AuditEntry, tx: Pick<Db, "insert">) {
      tx.insert(apiTokenAuditLogs).values(toRow(entry)).run();
    },

    /**
     * Runs a change and its audit rows in one transaction, after writing what is queued, so the
     * log keeps the order in which things happened.
     */
    transaction(fn: (tx: Parameters<Parameters<Db["transaction"]>[0]>[0]) => void) {
      flush();
      db.transaction(fn);
    },

    flush,

    list(tokenId: string, limit: number): AuditRow[] {
      return db.select().from(apiTokenAuditLogs).where(eq(apiTokenAuditLogs.tokenId, tokenId)).orderBy(desc(apiTokenAuditLogs.id)).limit(limit).all();
    },

    pending: () => queue.length,
  };
}

export type TokenAuditLog = ReturnType<typeof createTokenAuditLog>;
