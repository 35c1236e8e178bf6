// The durable job queue: runs, retries with backoff, fails for good, resumes after a crash.
import { afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openStorage, type Storage } from "../../src/platform/db/database";
import { migrate } from "../../src/platform/db/migrate";
import { manualClock } from "../../src/platform/clock";
import { silentLogger } from "../../src/platform/log";
import { createJobQueue, PermanentJobError, jobKind } from "../../src/platform/jobs/queue";

const WORK = jobKind<{ n: number }>("work");
const FLAKY = jobKind<Record<string, never>>("flaky");
const BAD = jobKind<Record<string, never>>("bad");
const LONG = jobKind<{ file: string }>("long");

const open: { storage: Storage; dir: string }[] = [];
afterEach(() => {
  for (const o of open.splice(0)) {
    o.storage.close();
    rmSync(o.dir, { recursive: true, force: true });
  }
});

async function setup(dir = mkdtempSync(join(tmpdir(), "hearth-jobs-"))) {
  const storage = await openStorage(dir);
  migrate(storage.db);
  open.push({ storage, dir });
  const clock = manualClock();
  return { dir, storage, clock, queue: createJobQueue({ db: storage.db, clock, log: silentLogger }) };
}

describe("job queue", () => {
  test("runs queued jobs in order, one at a time per kind", async () => {
    const { queue } = await setup();
    const seen: number[] = [];
    let concurrent = 0;
    let maxConcurrent = 0;
    queue.register(WORK, async (p) => {
      concurrent++;
      maxConcurrent = Math.max(maxConcurrent, concurrent);
      await Bun.sleep(2);
      seen.push(p.n);
      concurrent--;
    });
    const ids = [1, 2, 3, 4].map((n) => queue.enqueue(WORK, { n }));
    // A payload that is not the kind's does not compile (tsc runs in CI); never called.
    // @ts-expect-error: WORK carries { n: number }
    const _wrongPayload = () => queue.enqueue(WORK, { file: "x" });
    queue.start();
    await queue.idle();
    expect(seen).toEqual([1, 2, 3, 4]);
    expect(maxConcurrent).toBe(1);
    expect(ids.map((id) => queue.get(id)!.status)).toEqual(["done", "done", "done", "done"]);
    await queue.stop();
  });

  test("retries with backoff, then fails for good and tells the owner", async () => {
    const { queue, clock } = await setup();
    let calls = 0;
    const failures: string[] = [];
    queue.register(
      FLAKY,
      async () => {
        calls++;
        throw new Error(`boom ${calls}`);
      },
      { onFailed: (_p, e) => failures.push(e) },
    );
    const id = queue.enqueue(FLAKY, {}, { maxAttempts: 3 });
    queue.start();
    await queue.idle();
    expect(calls).toBe(1);
    expect(queue.get(id)).toMatchObject({ status: "queued", attempts: 1, lastError: "boom 1" });
    clock.advance(1000);
    await queue.idle();
    expect(calls).toBe(2);
    clock.advance(2000);
    await queue.idle();
    expect(calls).toBe(3);
    expect(queue.get(id)).toMatchObject({ status: "failed", attempts: 3, lastError: "boom 3" });
    expect(failures).toEqual(["boom 3"]);
    await queue.stop();
  });

  test("a failure of the disk (full, I/O error) spends no attempt: the job waits and runs again", async () => {
    // Before: a disk full for longer than three tries failed uploads for good.
    const { queue, clock } = await setup();
    let calls = 0;
    const failures: string[] = [];
    queue.register(
      FLAKY,
      async () => {
        calls++;
        if (calls <= 5) throw Object.assign(new Error(calls % 2 ? "database or disk is full" : "disk I/O error"), { code: calls % 2 ? "SQLITE_FULL" : "SQLITE_IOERR_WRITE" });
      },
      { onFailed: (_p, e) => failures.push(e) },
    );
    const id = queue.enqueue(FLAKY, {}, { maxAttempts: 2 });
    queue.start();
    for (let i = 0; i < 6; i++) {
      await queue.idle();
      clock.advance(30_000);
    }
    await queue.idle();
    expect(calls).toBe(6);
    expect(queue.get(id)).toMatchObject({ status: "done", attempts: 1 });
    expect(failures).toEqual([]);
    await queue.stop();
  });

  test("finished jobs' rows go after a week; failed and queued ones stay", async () => {
    // Before: a row per upload stayed for ever.
    const { queue, clock } = await setup();
    queue.register(WORK, async () => {});
    queue.register(BAD, async () => {
      throw new PermanentJobError("bad");
    });
    const done = queue.enqueue(WORK, { n: 1 });
    const failed = queue.enqueue(BAD, {});
    queue.start();
    await queue.idle();
    clock.advance(7 * 24 * 3600_000 + 1);
    const waiting = queue.enqueue(LONG, { file: "nobody runs this kind here" }); // stays queued
    await queue.idle();
    expect(queue.get(done)).toBeUndefined();
    expect(queue.get(failed)).toMatchObject({ status: "failed" });
    expect(queue.get(waiting)).toBeDefined();
    await queue.stop();
  });

  test("a permanent error fails at once", async () => {
    const { queue } = await setup();
    queue.register(BAD, async () => {
      throw new PermanentJobError("corrupt file");
    });
    const id = queue.enqueue(BAD, {});
    queue.start();
    await queue.idle();
    expect(queue.get(id)).toMatchObject({ status: "failed", attempts: 1, lastError: "corrupt file" });
    await queue.stop();
  });

  test("a job left running by a crash runs again at the next start", async () => {
    const first = await setup();
    let started = false;
    first.queue.register(LONG, async (_p, { signal }) => {
      started = true;
      await new Promise((_, reject) => signal.addEventListener("abort", () => reject(signal.reason)));
    });
    const id = first.queue.enqueue(LONG, { file: "x" });
    first.queue.start();
    while (!started) await Bun.sleep(1);
    expect(first.queue.get(id)!.status).toBe("running");
    await first.queue.stop(); // as a kill would: the row stays `running`
    expect(first.queue.get(id)!.status).toBe("running");

    const second = createJobQueue({ db: first.storage.db, clock: first.clock, log: silentLogger });
    const resumed: unknown[] = [];
    second.register(LONG, async (p) => void resumed.push(p));
    second.start();
    await second.idle();
    expect(resumed).toEqual([{ file: "x" }]);
    expect(second.get(id)).toMatchObject({ status: "done", attempts: 2 });
    await second.stop();
  });
});
