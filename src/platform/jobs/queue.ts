// The in-process job runner: picks durable job rows, taking turns between their groups (workspaces),
// runs their handlers with an AbortSignal, retries with backoff, and on start puts back jobs that a
// crash left running. A job's end is durable before the next job of its slot starts (fsynced from the
// I/O pool when `sync` is given, else by a full commit); its claim is not: a claim lost to a power
// cut leaves the job queued, which is what start() makes of a running one anyway. A write the
// database refuses (a full disk) never ends the process: the queue backs off, logs the run of
// failures once, and goes on by itself when writes work again.
import { and, eq, inArray, lte } from "drizzle-orm";
import type { Db } from "../db/database";
import type { Clock } from "../clock";
import type { Logger } from "../log";
import { relaxed } from "../db/durability";
import { failureRun, storageFailure } from "../db/write-failures";
import { jobs } from "./table";
import { jobStatements } from "./statements";

export type JobRow = typeof jobs.$inferSelect;

/** Thrown by a handler when retrying cannot help (a corrupt file): the job fails at once. */
export class PermanentJobError extends Error {}

export interface JobContext {
  signal: AbortSignal;
  attempt: number;
}

/**
 * A kind of job and the payload it carries, so that what is queued and what its handler takes are
 * checked against each other: `const INGEST_JOB = jobKind<{ fileId: string }>("knowledge.ingest")`.
 * The name is what the job row stores.
 */
export interface JobKind<P> {
  readonly name: string;
  /** Type only: never set. */
  readonly payload?: P;
}

export const jobKind = <P>(name: string): JobKind<P> => ({ name });

export type JobHandler<P> = (payload: P, ctx: JobContext) => Promise<void>;

/** Called when a job ends for good, so its owner can record the outcome on its own rows (synchronously: in the job's commit). */
export type JobFailed<P> = (payload: P, error: string) => void;

interface Registration {
  // A payload read back from its row is the one `enqueue` wrote for the same kind.
  handler: JobHandler<any>;
  concurrency: number;
  /** Most jobs of one group running at once: below `concurrency`, a slot stays free for other groups. */
  perGroup: number;
  onFailed?: JobFailed<any>;
}

const IDLE_POLL_MS = 1000;
const backoffMs = (attempt: number) => Math.min(60_000, 1000 * 2 ** (attempt - 1));
/** When a job the disk failed (full, I/O error) runs again; its attempt is not spent. */
const STORAGE_RETRY_MS = 30_000;
/** How long a finished job's row stays (to see what ran), and how often older ones are removed. */
const DONE_KEPT_MS = 7 * 24 * 3600_000;
const SWEEP_EVERY_MS = 3600_000;

/**
 * `sync` makes every commit so far durable off the event loop (platform/db/durability.ts); without
 * it a job's end is a full commit on the event loop. `pollMs`: how often it looks for due work when
 * idle, and the first wait after a failed write (then doubling, up to five times that).
 */
export function createJobQueue({ db, clock, log, sync, pollMs = IDLE_POLL_MS }: { db: Db; clock: Clock; log: Logger; sync?: () => Promise<void>; pollMs?: number }) {
  const statements = jobStatements(db);
  const kinds = new Map<string, Registration>();
  const running = new Map<string, { kind: string; group: string | null; abort: AbortController; done: Promise<void> }>();
  let started = false;
  /** Whether start() could put back the jobs a crash left running (a full disk at start: the pump tries again). */
  let reclaimed = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let idleWaiters: (() => void)[] = [];
  const trouble = failureRun(log, "job queue", { firstMs: pollMs, maxMs: 5 * pollMs });
  /**
   * Jobs that ran but whose end the database refused: recorded before anything new is claimed, so
   * none stays `running` until a restart, nor runs again for nothing.
   */
  const unrecorded: { job: JobRow; reg: Registration; failure?: { error: unknown } }[] = [];

  const busy = (kind: string, group?: string | null) => [...running.values()].filter((r) => r.kind === kind && (group === undefined || r.group === group)).length;

  /** When each group (per kind) last had a job claimed; groups never served come first. */
  const served = new Map<string, number>();
  let turn = 0;

  /**
   * The group whose turn it is among those with due jobs of `kind`: the one served longest ago,
   * ties to the oldest waiting job. So one workspace's backlog of files cannot hold back another
   * workspace's upload for longer than one job per other busy group.
   */
  const nextGroup = (kind: string, perGroup: number, at: number): { group: string | null } | undefined => {
    const groups = statements.dueGroups.all({ kind, at });
    let best: (typeof groups)[number] | undefined;
    let bestServed = Infinity;
    for (const g of groups) {
      if (busy(kind, g.group) >= perGroup) continue;
      const last = served.get(JSON.stringify([kind, g.group])) ?? -1;
      if (last < bestServed || (last === bestServed && g.first < best!.first)) [best, bestServed] = [g, last];
    }
    return best;
  };

  /** Claims the next due job of `kind` in one statement, so two pickers never take the same row. */
  const claim = (kind: string, perGroup: number): JobRow | undefined => {
    const at = clock.now();
    const turnOf = nextGroup(kind, perGroup, at);
    if (!turnOf) return undefined;
    const next = turnOf.group === null ? statements.nextUngrouped.get({ kind, at }) : statements.nextInGroup.get({ kind, at, group: turnOf.group });
    if (!next) return undefined;
    served.set(JSON.stringify([kind, turnOf.group]), turn++);
    return relaxed(db, () => statements.claim.get({ id: next.id, at }));
  };

  /**
   * The job's end, committed (and the handler's own relaxed commits with it) before it resolves. A
   * commit the database refuses waits in `unrecorded`; a failed fsync of a commit that went in is
   * only logged (the next full commit covers it).
   */
  const finish = async (job: JobRow, reg: Registration, failure?: { error: unknown }) => {
    try {
      if (!sync) return end(job, reg, failure);
      relaxed(db, () => end(job, reg, failure));
    } catch (e) {
      unrecorded.push({ job, reg, failure });
      trouble.failed(e);
      return;
    }
    await sync().catch((e) => log.error("job end not synced to disk", { kind: job.kind, id: job.id, error: String(e) }));
  };

  let sweptAt = -Infinity;
  /** Finished jobs' rows go after DONE_KEPT_MS, an hour's sweep at a time (a row per upload, for ever, before). */
  const sweepDone = () => {
    const at = clock.now();
    if (at - sweptAt < SWEEP_EVERY_MS) return;
    sweptAt = at; // a sweep the disk refuses waits for the next hour, it does not hold back the pump
    statements.sweepDone.run({ before: at - DONE_KEPT_MS });
  };

  /** Puts back jobs a crash left running (once per start) and records the ends the database refused before. */
  const catchUp = () => {
    if (!reclaimed) {
      db.update(jobs).set({ status: "queued", updatedAt: new Date(clock.now()) }).where(eq(jobs.status, "running")).run();
      reclaimed = true;
    }
    while (unrecorded.length > 0) {
      const { job, reg, failure } = unrecorded[0]!;
      end(job, reg, failure);
      unrecorded.shift();
    }
  };

  const end = (job: JobRow, reg: Registration, failure?: { error: unknown }) => {
    const at = clock.now();
    if (!failure) {
      statements.done.run({ id: job.id, at });
      return;
    }
    const { error } = failure;
    const message = error instanceof Error ? error.message : String(error);
    // A full or failing disk is not the job's fault: it waits and runs again without spending an
    // attempt (before, a long full disk failed uploads for good after three tries).
    if (storageFailure(error) && !(error instanceof PermanentJobError)) {
      statements.retryFree.run({ id: job.id, at, error: message, runAfter: at + STORAGE_RETRY_MS });
      return;
    }
    const final = error instanceof PermanentJobError || job.attempts >= job.maxAttempts;
    // One commit for the job's row and its owner's record of the failure (one fsync, not two).
    db.transaction(() => {
      if (final) statements.failed.run({ id: job.id, at, error: message });
      else statements.retry.run({ id: job.id, at, error: message, runAfter: at + backoffMs(job.attempts) });
      if (!final) return;
      try {
        reg.onFailed?.(job.payload, message);
      } catch (e) {
        log.error("job failure hook failed", { kind: job.kind, id: job.id, error: String(e) });
      }
    });
    if (final) log.warn("job failed", { kind: job.kind, id: job.id, error: message });
  };

  /** Claims and starts what is due; a write the database refuses waits out a growing delay instead of throwing. */
  const pump = () => {
    if (!started) return;
    clearTimeout(timer);
    let delay = pollMs;
    try {
      catchUp();
      claimDue();
      sweepDone();
      trouble.ok();
    } catch (e) {
      delay = trouble.failed(e);
    }
    timer = setTimeout(pump, delay);
    timer.unref?.();
  };

  const claimDue = () => {
    for (const [kind, reg] of kinds) {
      while (busy(kind) < reg.concurrency) {
        const job = claim(kind, reg.perGroup);
        if (!job) break;
        const abort = new AbortController();
        const done = (async () => {
          let failure: { error: unknown } | undefined;
          try {
            await reg.handler(job.payload, { signal: abort.signal, attempt: job.attempts });
          } catch (error) {
            failure = { error };
          }
          try {
            // A job stopped by shutdown stays `running`; the next start puts it back in the queue.
            if (!abort.signal.aborted) await finish(job, reg, failure);
          } finally {
            running.delete(job.id);
            queueMicrotask(pump);
          }
        })();
        running.set(job.id, { kind, group: job.groupKey, abort, done });
      }
    }
    if (running.size === 0 && idleWaiters.length > 0 && !hasDue()) {
      const waiters = idleWaiters;
      idleWaiters = [];
      waiters.forEach((w) => w());
    }
  };

  const hasDue = () =>
    db
      .select({ id: jobs.id })
      .from(jobs)
      .where(and(eq(jobs.status, "queued"), inArray(jobs.kind, [...kinds.keys()]), lte(jobs.runAfter, new Date(clock.now()))))
      .limit(1)
      .get() !== undefined;

  return {
    register<P>(kind: JobKind<P>, handler: JobHandler<P>, options: { concurrency?: number; perGroup?: number; onFailed?: JobFailed<P> } = {}) {
      const concurrency = options.concurrency ?? 1;
      kinds.set(kind.name, { handler, concurrency, perGroup: options.perGroup ?? concurrency, onFailed: options.onFailed });
    },

    /**
     * Writes the job row (inside `tx` when given, so it commits with the caller's own rows).
     * `group` is the fairness key (a workspace): due jobs of a kind are taken in turns between groups.
     */
    enqueue<P>(kind: JobKind<P>, payload: P, options: { tx?: Pick<Db, "insert">; maxAttempts?: number; group?: string } = {}): string {
      const now = new Date(clock.now());
      const id = crypto.randomUUID();
      (options.tx ?? db)
        .insert(jobs)
        .values({ id, kind: kind.name, payload, groupKey: options.group ?? null, status: "queued", maxAttempts: options.maxAttempts ?? 3, runAfter: now, createdAt: now, updatedAt: now })
        .run();
      return id;
    },

    /**
     * Looks for work soon instead of at the next poll; call after the enqueueing transaction commits.
     * A macrotask, not a microtask: the response that acknowledged the job is written first.
     */
    wake: () => void setImmediate(pump),

    get: (id: string) => db.select().from(jobs).where(eq(jobs.id, id)).get(),

    // A part of Hearth (platform/parts.ts): started after the features that queue work, stopped before them.
    name: "jobs",

    start() {
      // Jobs a crash or kill left `running` were never finished: run them again (catchUp, in the
      // first pump, so a database that refuses writes at start delays it instead of stopping Hearth).
      reclaimed = false;
      started = true;
      pump();
    },

    /** Stops picking, aborts running handlers and waits for them (they resume at the next start). */
    async stop(timeoutMs = 5000) {
      started = false;
      clearTimeout(timer);
      const all = [...running.values()];
      all.forEach((r) => r.abort.abort(new Error("Hearth is stopping")));
      await Promise.race([Promise.allSettled(all.map((r) => r.done)), Bun.sleep(timeoutMs)]);
    },

    /** Resolves once no job is running and none is due (tests, benchmarks). */
    idle(): Promise<void> {
      return new Promise((resolve) => {
        idleWaiters.push(resolve);
        queueMicrotask(pump);
      });
    },
  };
}

export type JobQueue = ReturnType<typeof createJobQueue>;
