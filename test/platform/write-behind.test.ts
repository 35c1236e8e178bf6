// The write-behind journal: rows acknowledged before they reach SQLite come back after a crash,
// exactly once, and never out of a torn line.
import { afterAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { appendFileSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createWriteBehind } from "../../src/platform/db/write-behind";
import { createLogger } from "../../src/platform/log";

const dirs: string[] = [];
const opened: { close(): void }[] = [];
afterAll(() => {
  // Journals a test left open as if crashed are closed before their folders go.
  for (const wb of opened) wb.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const log = createLogger(true);

/** A database with a rows table and the applied mark, and a journal over it. */
function fixture(dir = mkdtempSync(join(tmpdir(), "hearth-wb-"))) {
  dirs.push(dir);
  const db = new Database(join(dir, "t.db"));
  db.exec("CREATE TABLE IF NOT EXISTS rows (id INTEGER PRIMARY KEY, v TEXT NOT NULL)");
  db.exec("CREATE TABLE IF NOT EXISTS mark (k INTEGER PRIMARY KEY CHECK (k = 1), seq INTEGER NOT NULL)");
  let failing = false;
  const open = (delayMs = 60_000) => {
    const wb = createWriteBehind<{ v: string }>({
      path: join(dir, "t.journal"),
      log,
      delayMs,
      applied: () => (db.query("SELECT seq FROM mark").get() as { seq: number } | null)?.seq ?? 0,
      apply(rows, lastSeq) {
        if (failing) throw new Error("disk full");
        db.transaction(() => {
          for (const r of rows) db.query("INSERT INTO rows (v) VALUES (?)").run(r.v);
          db.query("INSERT INTO mark (k, seq) VALUES (1, ?) ON CONFLICT (k) DO UPDATE SET seq = excluded.seq").run(lastSeq);
        })();
      },
    });
    opened.push(wb);
    return wb;
  };
  const values = () => (db.query("SELECT v FROM rows ORDER BY id").all() as { v: string }[]).map((r) => r.v);
  return { dir, db, open, values, journal: join(dir, "t.journal"), fail: (on: boolean) => void (failing = on) };
}

describe("write-behind journal", () => {
  test("rows are in the journal at once and in the database after a flush; the journal is emptied", () => {
    const f = fixture();
    const wb = f.open();
    wb.append({ v: "a" });
    wb.append({ v: "b" });
    expect(f.values()).toEqual([]);
    expect(readFileSync(f.journal, "utf8").trim().split("\n")).toHaveLength(2);
    wb.flush();
    expect(f.values()).toEqual(["a", "b"]);
    expect(statSync(f.journal).size).toBe(0);
    wb.close();
  });

  test("folds on its own after the delay", async () => {
    const f = fixture();
    const wb = f.open(5);
    wb.append({ v: "soon" });
    await Bun.sleep(50);
    expect(f.values()).toEqual(["soon"]);
    wb.close();
  });

  test("a crash before the fold: the next start folds every acknowledged row, once", () => {
    const f = fixture();
    const crashed = f.open();
    for (let i = 0; i < 5; i++) crashed.append({ v: `r${i}` });
    // No flush, no close: the process died here.
    const next = f.open();
    expect(f.values()).toEqual(["r0", "r1", "r2", "r3", "r4"]);
    next.append({ v: "r5" });
    next.close();
    const third = f.open();
    expect(f.values()).toEqual(["r0", "r1", "r2", "r3", "r4", "r5"]);
    third.close();
  });

  test("a crash between the fold's commit and the journal's truncation folds nothing twice", () => {
    const f = fixture();
    const wb = f.open();
    wb.append({ v: "x" });
    wb.append({ v: "y" });
    const lines = readFileSync(f.journal, "utf8");
    wb.flush();
    // As if the truncation never happened, plus one row after the fold.
    appendFileSync(f.journal, lines + JSON.stringify({ q: 3, r: { v: "z" } }) + "\n");
    const next = f.open();
    expect(f.values()).toEqual(["x", "y", "z"]);
    next.close();
  });

  test("a line torn by a crash inside write() is skipped; whole lines are kept", () => {
    const f = fixture();
    const wb = f.open();
    wb.append({ v: "whole" });
    appendFileSync(f.journal, '{"q":2,"r":{"v":"to');
    const next = f.open();
    expect(f.values()).toEqual(["whole"]);
    next.append({ v: "after" });
    next.flush();
    expect(f.values()).toEqual(["whole", "after"]);
    next.close();
  });

  test("a failing fold keeps the rows in memory and in the journal, and a later flush writes them", () => {
    const f = fixture();
    const wb = f.open();
    wb.append({ v: "kept" });
    f.fail(true);
    wb.flush();
    expect(f.values()).toEqual([]);
    expect(readFileSync(f.journal, "utf8")).toContain("kept");
    f.fail(false);
    wb.append({ v: "next" });
    wb.flush();
    expect(f.values()).toEqual(["kept", "next"]);
    wb.close();
  });

  test("the journal file is private to Hearth's user", () => {
    const f = fixture();
    const wb = f.open();
    expect(statSync(f.journal).mode & 0o777).toBe(0o600);
    wb.close();
  });
});
