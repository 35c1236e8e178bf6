// Writes the database refused because its disk is full or failing: telling them from other errors,
// what a person is told, one log line per run of them (not one per attempt), and the last one for
// /health. One Hearth holds a data dir per process (its lock), so the record is the process's.
import type { Logger } from "../log";

export type StorageFailure = "full" | "io" | "damaged";

/**
 * Whether `e` says the data dir's disk is full or failing (SQLite's code or message, or the OS's).
 * "damaged": after a failed read or write (EIO), SQLite reports the pages it got as malformed.
 */
export function storageFailure(e: unknown, depth = 0): StorageFailure | undefined {
  const err = e as { code?: unknown; message?: unknown; cause?: unknown } | null | undefined;
  // drizzle wraps SQLite's error ("Failed to run the query 'COMMIT'") with it as the cause.
  const inner = err?.cause !== undefined && depth < 3 ? storageFailure(err.cause, depth + 1) : undefined;
  if (inner) return inner;
  const code = typeof err?.code === "string" ? err.code : "";
  const message = typeof err?.message === "string" ? err.message : String(e);
  if (code === "SQLITE_FULL" || code === "ENOSPC" || code === "EDQUOT" || /database or disk is full|no space left on device/i.test(message)) return "full";
  if (code.startsWith("SQLITE_IOERR") || code === "EIO" || /disk I\/O error/i.test(message)) return "io";
  if (code.startsWith("SQLITE_CORRUPT") || code === "SQLITE_NOTADB" || /database disk image is malformed|file is not a database/i.test(message)) return "damaged";
  return undefined;
}

/** What a person is told: what is wrong and what to do about it. */
export const STORAGE_FAILURE_MESSAGES: Record<StorageFailure, string> = {
  full: "The disk of Hearth's data dir is full: free space there (delete files, or old executions and knowledge files), then retry",
  io: "Hearth cannot write its database: disk I/O error on the data dir's disk; check the disk (the system log names it), then retry",
  damaged: "Hearth cannot read its database: the data dir's disk is failing or the file is damaged; check the disk (the system log names it), then restart Hearth, or restore a backup (README: Backup and restore)",
};

/** How long a failed write keeps /health's database check unavailable when no write has worked since. */
export const RECENT_FAILURE_MS = 60_000;

let last: { at: number; kind: StorageFailure; error: string } | undefined;

/** The process's record of failed writes, for /health and to log a run of them once. */
export const writeFailures = {
  /** Notes a failed write; true when it begins a run (none in the last minute, or a write worked since). */
  note(e: unknown, now = Date.now()): boolean {
    const kind = storageFailure(e) ?? "io";
    const begins = !last || now - last.at > RECENT_FAILURE_MS;
    const message = (e as { message?: unknown } | null)?.message;
    last = { at: now, kind, error: typeof message === "string" ? message : String(e) };
    return begins;
  },
  /** A write worked again: the run is over. */
  cleared(): void {
    last = undefined;
  },
  /** The last failed write, if it is recent and none has worked since. */
  recent(now = Date.now()): { kind: StorageFailure; error: string; agoMs: number } | undefined {
    if (!last || now - last.at > RECENT_FAILURE_MS) return undefined;
    return { kind: last.kind, error: last.error, agoMs: now - last.at };
  },
};

/**
 * A background loop's run of failures (a job queue's claim, an engine's bookkeeping): logged once
 * when it begins and once when the loop works again, never per attempt; `failed` answers how long
 * to wait before the next attempt, doubling from `firstMs` up to `maxMs`.
 */
export function failureRun(log: Pick<Logger, "error" | "info">, what: string, { firstMs = 1000, maxMs = 5000 } = {}) {
  let failures = 0;
  let since = 0;
  return {
    failed(e: unknown): number {
      failures++;
      const kind = storageFailure(e);
      if (kind) writeFailures.note(e);
      if (failures === 1) {
        since = Date.now();
        log.error(`${what} failed; retrying until it works (logged once until then)`, { error: String(e), ...(kind ? { hint: STORAGE_FAILURE_MESSAGES[kind] } : {}) });
      }
      return Math.min(maxMs, firstMs * 2 ** Math.min(failures - 1, 20));
    },
    /** The loop worked: ends the run (logged with how many attempts failed). */
    ok(): void {
      if (failures === 0) return;
      log.info(`${what} works again`, { failed_attempts: failures, after_ms: Date.now() - since });
      failures = 0;
      writeFailures.cleared();
    },
    /** Attempts failed in this run so far (0: none). */
    get failures() {
      return failures;
    },
  };
}
