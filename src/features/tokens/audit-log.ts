// The token audit log. Lifecycle rows are written inside the change's own transaction; a `used`
// row is appended to a write-behind journal before its response leaves (a copy into the mapped
// file, durable against a crash of Hearth; see platform/db/write-behind.ts) and folded into the
// table in batches on a connection whose commits do not wait for the disk, within ~50 ms or
// before the log is read. A refused token's uses (401) fold into one row per token per minute whose count grows,
// so a leaked revoked secret cannot flood the disk.
import { availableParallelism } from "node:os";
import { and, count, desc, eq, inArray, max, sql } from "drizzle-orm";
import { pragmaStatements, type Db } from "../../platform/db/database";
import { createWriteBehind } from "../../platform/db/write-behind";
import type { Clock } from "../../platform/clock";
import type { Logger } from "../../platform/log";
import { settings } from "../../platform/settings/table";
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

/**
 * Cores from which the fold's thread is free to use while the event loop is saturated. With fewer,
 * concurrent requests fold in place (`inPlaceWhenBusy`); sequential ones still hand their batches
 * to the thread, which keeps the fold's stalls (~1 ms a batch there) out of their latency. Measured
 * on 2 vCPUs, 32 token requests in flight, one server toggled between the two: with the thread the
 * event loop waited 1.1-1.5 µs a request for a core (0.3-0.4 without), and the thread spent ~1.8 µs
 * a row plus ~0.8 in JSC's and mimalloc's helper threads, where in place the fold costs the event
 * loop ~0.9 µs a row; requests/s +9-18 % in place.
 */
const FOLD_THREAD_FREE_CORES = 4;

/** Refused uses of one token within this window share one row. */
export const REFUSED_WINDOW_MS = 60_000;

/** Where the last journaled use folded into the table is kept (settings row, same transaction). */
const JOURNAL_MARK = "token_use_journal_seq";

interface Deps {
  db: Db;
  hotDb: Db;
  clock: Clock;
  log: Logger;
  /** The write-behind journal of `used` rows (in the data dir, next to the database). */
  journalPath: string;
}

export function createTokenAuditLog({ db, hotDb, clock, log, journalPath }: Deps) {
  const toRow = (e: AuditEntry) => ({
    tokenId: e.tokenId,
    action: e.action,
    ipAddress: e.ipAddress ?? null,
    userAgent: e.userAgent ?? null,
    endpoint: e.endpoint ?? null,
    statusCode: e.statusCode ?? null,
    createdAt: new Date(clock.now()),
  });

  const row = {
    tokenId: sql.placeholder("tokenId"),
    action: sql.placeholder("action"),
    ipAddress: sql.placeholder("ipAddress"),
    userAgent: sql.placeholder("userAgent"),
    endpoint: sql.placeholder("endpoint"),
    statusCode: sql.placeholder("statusCode"),
    createdAt: sql.placeholder("createdAt"),
  };
  const insertRefused = hotDb.insert(apiTokenAuditLogs).values(row).returning({ id: apiTokenAuditLogs.id }).prepare();
  const addAttempt = hotDb
    .update(apiTokenAuditLogs)
    .set({ count: sql`${apiTokenAuditLogs.count} + 1` })
    .where(eq(apiTokenAuditLogs.id, sql.placeholder("id")))
    .prepare();
  const readMark = hotDb.select({ value: settings.value }).from(settings).where(eq(settings.key, JOURNAL_MARK)).prepare();

  /** A journaled use: the entry and when it happened. */
  type Use = { e: AuditEntry; at: number };
  // Folding runs often under load: plain statements (no query builder per row), prepared on the
  // connection in place or the folding thread's. A row the database refuses is a token whose
  // workspace or creator was deleted meanwhile (foreign key): it is skipped and logged.
  const journal = createWriteBehind<Use>({
    path: journalPath,
    log,
    db: hotDb.$client,
    sql: {
      rowSql: "INSERT INTO api_token_audit_logs (token_id, action, ip_address, user_agent, endpoint, status_code, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
      markSql: `INSERT INTO settings (key, value, updated_at) VALUES ('${JOURNAL_MARK}', CAST(? AS TEXT), CAST(unixepoch('subsec') * 1000 AS INTEGER))
        ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
    },
    params: (u) => [u.e.tokenId, u.e.action, u.e.ipAddress ?? null, u.e.userAgent ?? null, u.e.endpoint ?? null, u.e.statusCode ?? null, u.at],
    applied: () => Number(readMark.get()?.value ?? 0),
    thread: { pragmas: pragmaStatements("NORMAL"), inPlaceWhenBusy: availableParallelism() < FOLD_THREAD_FREE_CORES },
  });

  // The open row of each refused token (the first attempt's address and agent stand for the window).
  // At most one entry per known token; stale ones are dropped when the map grows.
  const refusedRows = new Map<string, { rowId: number; since: number }>();

  /** Counts a refused use into the token's row of this minute, starting one when there is none. */
  const recordRefused = (entry: AuditEntry) => {
    const at = clock.now();
    const open = refusedRows.get(entry.tokenId);
    if (open && at - open.since < REFUSED_WINDOW_MS) {
      addAttempt.run({ id: open.rowId });
      return;
    }
    if (refusedRows.size >= 10_000) {
      for (const [id, r] of refusedRows) if (at - r.since >= REFUSED_WINDOW_MS) refusedRows.delete(id);
    }
    const row = insertRefused.get(toRow(entry));
    if (row) refusedRows.set(entry.tokenId, { rowId: row.id, since: at });
  };

  return {
    /**
     * Records one use of a token; called before the response is returned, which waits for the
     * promise when there is one (the row is durable when it resolves; see appendInGroup).
     */
    record(entry: AuditEntry): Promise<void> | undefined {
      // Only a refused token's request answers 401 (a valid one has passed authentication); the
      // once-per-expiry `expired` row is journaled like a use.
      if (entry.statusCode === 401 && entry.action === "used") {
        journal.flush(); // rows keep the order of the requests
        try {
          recordRefused(entry);
        } catch (e) {
          log.warn("token audit row not written", { tokenId: entry.tokenId, error: String(e) });
        }
        return undefined;
      }
      return journal.appendInGroup({ e: entry, at: clock.now() });
    },

    /** Folds journaled uses into the table (before reading it directly). */
    flush: () => journal.flush(),
    /** Folds what is journaled and closes the journal (at shutdown, before the database). */
    close: () => journal.close(),

    /** Writes a lifecycle row inside the caller's transaction (see `transaction`). */
    write(entry: AuditEntry, tx: Pick<Db, "insert">) {
      tx.insert(apiTokenAuditLogs).values(toRow(entry)).run();
    },

    /** Runs a change and its audit rows in one transaction (after the uses before it, so rows keep their order). */
    transaction(fn: (tx: Tx) => void) {
      journal.flush();
      db.transaction(fn);
    },

    /** A page of the token's log, newest first, and how many rows it has in all. */
    list(tokenId: string, w: { pageSize: number; offset: number }): { rows: AuditRow[]; total: number } {
      journal.flush();
      const where = eq(apiTokenAuditLogs.tokenId, tokenId);
      const total = db.select({ n: count() }).from(apiTokenAuditLogs).where(where).get()?.n ?? 0;
      const rows = db.select().from(apiTokenAuditLogs).where(where).orderBy(desc(apiTokenAuditLogs.id)).limit(w.pageSize).offset(w.offset).all();
      return { rows, total };
    },

    /**
     * When each of the tokens last authenticated a request that succeeded (derived from the log), in
     * one query for a whole page of tokens; a token never used successfully is absent.
     */
    lastUsed(tokenIds: readonly string[]): Map<string, Date> {
      if (tokenIds.length === 0) return new Map();
      journal.flush();
      const rows = db
        .select({ tokenId: apiTokenAuditLogs.tokenId, at: max(apiTokenAuditLogs.createdAt) })
        .from(apiTokenAuditLogs)
        .where(and(inArray(apiTokenAuditLogs.tokenId, [...tokenIds]), eq(apiTokenAuditLogs.action, "used"), sql`${apiTokenAuditLogs.statusCode} < 400`))
        .groupBy(apiTokenAuditLogs.tokenId)
        .all();
      return new Map(rows.flatMap((r) => (r.at ? [[r.tokenId, r.at] as const] : [])));
    },
  };
}

export type TokenAuditLog = ReturnType<typeof createTokenAuditLog>;
