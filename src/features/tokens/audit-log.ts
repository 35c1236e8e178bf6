// The token audit log. Lifecycle rows are written inside the change's own transaction; a `used`
// row is written before its response leaves, through a prepared statement on a connection whose
// commits do not wait for the disk (see applyPragmas), so no acknowledged use goes unrecorded
// and the request pays microseconds, not an fsync.
import { and, desc, eq, max, sql } from "drizzle-orm";
import type { Db } from "../../platform/db/database";
import type { Clock } from "../../platform/clock";
import type { Logger } from "../../platform/log";
import { apiTokenAuditLogs } from "./table";

export type AuditAction = (typeof apiTokenAuditLogs.$inferInsert)["action"];
export type AuditRow = typeof apiTokenAuditLogs.$inferSelect;
type Tx = Parameters<Parameters<Db["transaction"]>[0]>[0];

export interface RequestInfo {
  ipAddress: string | null;
  userAgent: string | null;
  endpoint: string;
}

export interface AuditEntry extends Partial<RequestInfo> {
  tokenId: string;
  action: AuditAction;
  statusCode?: number | null;
}

export function createTokenAuditLog({ db, hotDb, clock, log }: { db: Db; hotDb: Db; clock: Clock; log: Logger }) {
  const toRow = (e: AuditEntry) => ({
    tokenId: e.tokenId,
    action: e.action,
    ipAddress: e.ipAddress ?? null,
    userAgent: e.userAgent ?? null,
    endpoint: e.endpoint ?? null,
    statusCode: e.statusCode ?? null,
    createdAt: new Date(clock.now()),
  });

  const insertUse = hotDb
    .insert(apiTokenAuditLogs)
    .values({
      tokenId: sql.placeholder("tokenId"),
      action: sql.placeholder("action"),
      ipAddress: sql.placeholder("ipAddress"),
      userAgent: sql.placeholder("userAgent"),
      endpoint: sql.placeholder("endpoint"),
      statusCode: sql.placeholder("statusCode"),
      createdAt: sql.placeholder("createdAt"),
    })
    .prepare();

  return {
    /** Records one use of a token now; called before the response is returned. */
    record(entry: AuditEntry) {
      try {
        insertUse.run(toRow(entry));
      } catch (e) {
        // Only a token deleted during its own request gets here (foreign key); its log is gone too.
        log.warn("token audit row not written", { tokenId: entry.tokenId, error: String(e) });
      }
    },

    /** Writes a lifecycle row inside the caller's transaction (see `transaction`). */
    write(entry: AuditEntry, tx: Pick<Db, "insert">) {
      tx.insert(apiTokenAuditLogs).values(toRow(entry)).run();
    },

    /** Runs a change and its audit rows in one transaction. */
    transaction(fn: (tx: Tx) => void) {
      db.transaction(fn);
    },

    list(tokenId: string, limit: number): AuditRow[] {
      return db.select().from(apiTokenAuditLogs).where(eq(apiTokenAuditLogs.tokenId, tokenId)).orderBy(desc(apiTokenAuditLogs.id)).limit(limit).all();
    },

    /** When the token last authenticated a request that succeeded (derived from the log). */
    lastUsed(tokenId: string): Date | null {
      const row = db
        .select({ at: max(apiTokenAuditLogs.createdAt) })
        .from(apiTokenAuditLogs)
        .where(and(eq(apiTokenAuditLogs.tokenId, tokenId), eq(apiTokenAuditLogs.action, "used"), sql`${apiTokenAuditLogs.statusCode} < 400`))
        .get();
      return row?.at ?? null;
    },
  };
}

export type TokenAuditLog = ReturnType<typeof createTokenAuditLog>;
