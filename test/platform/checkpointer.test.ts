// WAL checkpoints run in a worker thread while the WAL grows, not inside a request's commit.
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openStorage } from "../../src/platform/db/database";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

test("a growing WAL starts the checkpoint worker, which copies it into the database; a quiet one stops it", async () => {
  const dir = mkdtempSync(join(tmpdir(), "hearth-ckpt-"));
  dirs.push(dir);
  const storage = await openStorage(dir);
  const warnings: unknown[] = [];
  const checkpointer = storage.startCheckpointer({ warn: (...a: unknown[]) => void warnings.push(a) }, { watchMs: 50, quietStopMs: 600 });
  const { sqlite } = storage;
  expect(sqlite.query<{ wal_autocheckpoint: number }, []>("PRAGMA wal_autocheckpoint").get()!.wal_autocheckpoint).toBeGreaterThan(1000);
  expect(checkpointer.running()).toBe(false);

  sqlite.exec("CREATE TABLE filler (b BLOB)");
  const dbBytes = statSync(join(dir, "hearth.db")).size;
  // ~6 MB in many small commits: past the start threshold, far below the connections' own.
  const insert = sqlite.query("INSERT INTO filler (b) VALUES (randomblob(8000))");
  for (let i = 0; i < 750; i++) insert.run();
  const deadline = Date.now() + 10_000;
  while (!checkpointer.running() && Date.now() < deadline) await Bun.sleep(20);
  expect(checkpointer.running()).toBe(true);
  // The worker's checkpoint moved the pages into the database file.
  while (statSync(join(dir, "hearth.db")).size < dbBytes + 5_000_000 && Date.now() < deadline) await Bun.sleep(20);
  expect(statSync(join(dir, "hearth.db")).size).toBeGreaterThan(dbBytes + 5_000_000);
  // Once every frame is in the database (made sure here), the next commit starts the WAL over and
  // reuses the file: no truncate inside a request's commit (a 1 MB journal_size_limit cut it here).
  const checkpoint = sqlite.query<{ busy: number; log: number; checkpointed: number }, []>("PRAGMA wal_checkpoint(PASSIVE)");
  let done = checkpoint.get()!;
  while ((done.busy || done.checkpointed < done.log) && Date.now() < deadline) (await Bun.sleep(10), (done = checkpoint.get()!));
  expect(done).toMatchObject({ busy: 0, checkpointed: done.log });
  insert.run();
  expect(statSync(join(dir, "hearth.db-wal")).size).toBeGreaterThan(5_000_000);
  expect((sqlite.query("SELECT count(*) AS n FROM filler").get() as { n: number }).n).toBe(751);

  while (checkpointer.running() && Date.now() < deadline) await Bun.sleep(50);
  expect(checkpointer.running()).toBe(false);
  // Stopping, the worker gave the WAL's space back; every row is there.
  expect(statSync(join(dir, "hearth.db-wal")).size).toBe(0);
  expect((sqlite.query("SELECT count(*) AS n FROM filler").get() as { n: number }).n).toBe(751);
  // A quiet WAL does not start the worker again.
  for (let i = 0; i < 10; i++) {
    await Bun.sleep(50);
    expect(checkpointer.running()).toBe(false);
  }
  expect(warnings).toEqual([]);
  await storage.close();
}, 20_000);
