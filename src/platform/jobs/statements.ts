// The job queue's statements, built and compiled once: the queue runs them for every job and every
// look for work (four looks after each upload), and the query builder spent ~250 µs building and
// compiling each one, several milliseconds of the event loop per ingested file.
import { and, asc, eq, isNull, lte, sql } from "drizzle-orm";
import type { Db } from "../db/database";
import { jobs } from "./table";

const at = sql.placeholder("at");
const id = sql.placeholder("id");
const kind = sql.placeholder("kind");
/** A placeholder as a value of `set()`, which takes SQL but not a bare placeholder. */
const value = (name: string) => sql`${sql.placeholder(name)}`;

export function jobStatements(db: Db) {
  const due = and(eq(jobs.status, "queued"), eq(jobs.kind, kind), lte(jobs.runAfter, at));
  const oldestDue = (inGroup: ReturnType<typeof eq>) =>
    db
      .select({ id: jobs.id })
      .from(jobs)
      .where(and(due, inGroup))
      .orderBy(asc(jobs.runAfter), asc(jobs.createdAt), sql`rowid`)
      .limit(1)
      .prepare();
  return {
    /** Groups with due jobs of `kind` and each one's oldest (params: kind, at). */
    dueGroups: db
      .select({ group: jobs.groupKey, first: sql<number>`min(rowid)` })
      .from(jobs)
      .where(due)
      .groupBy(jobs.groupKey)
      .prepare(),
    /** The next due job of `kind` in a group (params: kind, at, group) or outside any (kind, at). */
    nextInGroup: oldestDue(eq(jobs.groupKey, sql.placeholder("group"))),
    nextUngrouped: oldestDue(isNull(jobs.groupKey)),
    /** Takes a queued job (params: id, at); no row when another picker took it first. */
    claim: db
      .update(jobs)
      .set({ status: "running", attempts: sql`${jobs.attempts} + 1`, updatedAt: value("at") })
      .where(and(eq(jobs.id, id), eq(jobs.status, "queued")))
      .returning()
      .prepare(),
    /** (params: id, at) */
    done: db.update(jobs).set({ status: "done", lastError: null, updatedAt: value("at") }).where(eq(jobs.id, id)).prepare(),
    /** Removes jobs that ended well before `before` (ms). */
    sweepDone: db.delete(jobs).where(and(eq(jobs.status, "done"), lte(jobs.updatedAt, sql.placeholder("before")))).prepare(),
    /** (params: id, at, error) */
    failed: db.update(jobs).set({ status: "failed", lastError: value("error"), updatedAt: value("at") }).where(eq(jobs.id, id)).prepare(),
    /** Back in the queue after a failure (params: id, at, error, runAfter). */
    retry: db
      .update(jobs)
      .set({ status: "queued", lastError: value("error"), runAfter: value("runAfter"), updatedAt: value("at") })
      .where(eq(jobs.id, id))
      .prepare(),
    /** Queued again without spending the attempt: the failure was the disk's, not the job's. */
    retryFree: db
      .update(jobs)
      .set({ status: "queued", attempts: sql`max(${jobs.attempts} - 1, 0)`, lastError: value("error"), runAfter: value("runAfter"), updatedAt: value("at") })
      .where(eq(jobs.id, id))
      .prepare(),
  };
}
