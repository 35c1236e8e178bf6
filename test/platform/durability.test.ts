// Commits that keep the event loop out of fsync: relaxed() commits without one and puts the
// connection's durability back after; the WAL sync makes them durable from the I/O pool, and a job's
// end is synced before the next job of its slot starts.
import { afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openStorage, type Storage } from "../../src/platform/db/database";
import { createWalSync, relaxed } from "../../src/platform/db/durability";
import { migrate } from "../../src/platform/db/migrate";
import { manualClock } from "../../src/platform/clock";
import { silentLogger } from "../../src/platform/log";
import { createJobQueue, jobKind } from "../../src/platform/jobs/queue";

const WORK = jobKind<{ n: number }>("work");

const opened: { storage: Storage; dir: string }[] = [];
afterEach(() => {
  for (const o of opened.splice(0)) {
    o.storage.close();
    rmSync(o.dir, { recursive: true, force: true });
  }
});

async function open() {
  const dir = mkdtempSync(join(tmpdir(), "hearth-relaxed-"));
  const storage = await openStorage(dir);
  opened.push({ storage, dir });
  const level = () => (storage.sqlite.query("PRAGMA synchronous").get() as { synchronous: number }).synchronous;
  return { storage, level };
}

describe("relaxed commits", () => {
  test("NORMAL inside, FULL again after, also when the work throws", async () => {
    const { storage, level } = await open();
    expect(level()).toBe(2);
    storage.sqlite.run("CREATE TABLE t (x)");
    expect(relaxed(storage.db, () => (storage.sqlite.run("INSERT INTO t VALUES (1)"), level()))).toBe(1);
    expect(level()).toBe(2);
    expect(() => relaxed(storage.db, () => { throw new Error("boom"); })).toThrow("boom");
    expect(level()).toBe(2);
    expect(storage.sqlite.query("SELECT count(*) AS n FROM t").get()).toEqual({ n: 1 });
  });

  test("a connection that is already NORMAL stays NORMAL", async () => {
    const { storage } = await open();
    const hot = storage.openConnection("NORMAL");
    const level = () => (hot.sqlite.query("PRAGMA synchronous").get() as { synchronous: number }).synchronous;
    relaxed(hot.db, () => level());
    expect(level()).toBe(1);
  });

  test("refuses asynchronous work: other code would commit without an fsync meanwhile", async () => {
    const { storage, level } = await open();
    expect(() => relaxed(storage.db, (async () => 1) as unknown as () => number)).toThrow("synchronous");
    expect(level()).toBe(2);
  });
});

describe("WAL sync", () => {
  test("resolves once the WAL is on disk; calls while one runs share the next one", async () => {
    const { storage } = await open();
    storage.sqlite.run("CREATE TABLE t (x)");
    const sync = createWalSync(storage.path);
    relaxed(storage.db, () => storage.sqlite.run("INSERT INTO t VALUES (1)"));
    const first = sync();
    // Started before these callers' commits could be in it: they wait for one more, together.
    const later = [sync(), sync(), sync()];
    expect(new Set([first, ...later]).size).toBe(2);
    await Promise.all([first, ...later]);
    expect(sync()).not.toBe(first); // nothing running: a new one
  });

  test("no WAL file (nothing written since the last checkpoint closed it) is nothing to sync", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hearth-nowal-"));
    await createWalSync(join(dir, "absent.db"))();
    rmSync(dir, { recursive: true, force: true });
  });

  test("a job's end is committed and synced before the next job of its slot starts", async () => {
    const { storage } = await open();
    migrate(storage.db);
    const events: string[] = [];
    const walSync = createWalSync(storage.path);
    const sync = async () => {
      events.push("sync");
      await walSync();
      events.push("synced");
    };
    const queue = createJobQueue({ db: storage.db, clock: manualClock(), log: silentLogger, sync });
    queue.register(WORK, async (p) => void events.push(`run ${p.n}`));
    queue.enqueue(WORK, { n: 1 });
    queue.enqueue(WORK, { n: 2 });
    queue.start();
    await queue.idle();
    await queue.stop();
    expect(events).toEqual(["run 1", "sync", "synced", "run 2", "sync", "synced"]);
    const rows = storage.sqlite.query("SELECT status FROM jobs").all() as { status: string }[];
    expect(rows.map((r) => r.status)).toEqual(["done", "done"]);
    expect((storage.sqlite.query("PRAGMA synchronous").get() as { synchronous: number }).synchronous).toBe(2);
  });
});
