// Commits that do not hold the HTTP thread in an fsync (5–30 ms on a busy disk, while every
// request waits): relaxed() commits without one, for work that is redone when lost (a job's chunks,
// vectors, progress, its claim); walSync() makes every commit so far durable from a thread of the
// I/O pool, for writes acknowledged once it resolves (an upload's 202, a job's end).
//
// Why this keeps the guarantees: in WAL mode a commit with synchronous = NORMAL is written to the
// WAL with write() before it returns, so a crash or kill -9 of Hearth loses nothing. A power cut
// may lose the last such commits, but WAL frames are ordered: the next FULL commit (the job's end,
// or any acknowledged write) makes every earlier one durable, and what is lost without one is only
// work the job queue runs again (a job that did not reach `done` is queued again at start).
import { open } from "node:fs/promises";
import type { Db } from "./database";

/**
 * Runs `fn` (synchronous: nothing else may commit meanwhile) with commits that skip the fsync. The
 * pragmas go through the connection's statement cache: a job runs this a dozen times per file, and
 * building and compiling the three statements each time cost ~40 µs a call.
 */
export function relaxed<T>(db: Db, fn: () => T): T {
  const level = (db.$client.query("PRAGMA synchronous").values()[0] as [number] | undefined)?.[0];
  if (level === undefined || level <= 1) return fn(); // already OFF or NORMAL
  db.$client.query("PRAGMA synchronous = NORMAL").run();
  try {
    const result = fn();
    if (result instanceof Promise) throw new Error("relaxed() takes a synchronous function");
    return result;
  } finally {
    db.$client.query(`PRAGMA synchronous = ${level}`).run();
  }
}

/**
 * An acknowledged write: committed without holding the event loop in an fsync, then made durable by
 * `sync` (a createWalSync) before it resolves, so the caller answers only once it is. Other requests
 * may see the rows (or their absence) meanwhile. Without `sync` the write is a plain (FULL) commit.
 */
export async function durableCommit(db: Db, sync: (() => Promise<void>) | undefined, write: () => void): Promise<void> {
  if (!sync) return write();
  relaxed(db, write);
  await sync();
}

/**
 * What SQLite's FULL commit does, off the event loop: fdatasync of the database's WAL file (where
 * every commit is, in order, until a checkpoint, which syncs the database file itself first).
 * Calls while one runs share the next (group commit): one that started before a caller's commit
 * cannot cover it.
 */
export function createWalSync(dbPath: string): () => Promise<void> {
  const wal = `${dbPath}-wal`;
  let inFlight: Promise<void> | undefined;
  let queued: Promise<void> | undefined;
  const once = async () => {
    const file = await open(wal, "r").catch((e: NodeJS.ErrnoException) => {
      if (e.code === "ENOENT") return undefined; // no WAL: the last connection checkpointed it into the synced database
      throw e;
    });
    if (!file) return;
    try {
      await file.datasync();
    } finally {
      await file.close();
    }
  };
  const start = () => {
    const p = once();
    inFlight = p;
    p.finally(() => inFlight === p && (inFlight = undefined)).catch(() => undefined);
    return p;
  };
  return () => {
    if (queued) return queued;
    if (!inFlight) return start();
    queued = inFlight
      .catch(() => undefined)
      .then(() => {
        queued = undefined;
        return start();
      });
    return queued;
  };
}
