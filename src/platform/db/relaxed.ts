// Commits without an fsync, for work that is redone when lost: a job's intermediate rows (chunks,
// vectors, progress) and its claim. Each such commit costs the HTTP thread an fsync otherwise
// (5–30 ms on a busy disk, while every request waits).
//
// Why this keeps the guarantees: in WAL mode a commit with synchronous = NORMAL is written to the
// WAL with write() before it returns, so a crash or kill -9 of Hearth loses nothing. A power cut
// may lose the last such commits, but WAL frames are ordered: the next FULL commit (the job's end,
// or any acknowledged write) makes every earlier one durable, and what is lost without one is only
// work the job queue runs again (a job that did not reach `done` is queued again at start).
import { sql } from "drizzle-orm";
import type { Db } from "./database";

/** Runs `fn` (synchronous: nothing else may commit meanwhile) with commits that skip the fsync. */
export function relaxed<T>(db: Db, fn: () => T): T {
  const level = db.values<[number]>(sql`PRAGMA synchronous`)[0]?.[0];
  if (level === undefined || level <= 1) return fn(); // already OFF or NORMAL
  db.run(sql`PRAGMA synchronous = NORMAL`);
  try {
    const result = fn();
    if (result instanceof Promise) throw new Error("relaxed() takes a synchronous function");
    return result;
  } finally {
    db.run(sql.raw(`PRAGMA synchronous = ${level}`));
  }
}
