// Commits without an fsync: only inside relaxed(), which puts the connection's durability back after.
import { afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openStorage, type Storage } from "../../src/platform/db/database";
import { relaxed } from "../../src/platform/db/relaxed";

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
