// The write-behind journal: rows acknowledged before they reach SQLite come back after a crash,
// exactly once, and never out of a torn line.
import { afterAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { appendFileSync, closeSync, mkdtempSync, openSync, readFileSync, rmSync, statSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createWriteBehind } from "../../src/platform/db/write-behind";
import type { FoldThreadOptions } from "../../src/platform/db/fold-thread";
import { createLogger } from "../../src/platform/log";
import { appliedMark, JOURNAL_SQL } from "../support/journal-fixture";

const dirs: string[] = [];
const opened: { close(): void }[] = [];
afterAll(() => {
  // Journals a test left open as if crashed are closed before their folders go.
  for (const wb of opened) wb.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const log = createLogger(true);

/** The journal's lines as text, without the zeros of the room allocated after them. */
function journalText(path: string): string {
  const text = readFileSync(path, "utf8");
  const room = text.indexOf("\0");
  return room < 0 ? text : text.slice(0, room);
}

/** Writes `text` where the next row would go: what a crash in the middle of copying a row leaves. */
function tear(path: string, text: string) {
  const fd = openSync(path, "r+");
  writeSync(fd, text, Buffer.byteLength(journalText(path)));
  closeSync(fd);
}

/** A database with a rows table and the applied mark, and a journal over it. */
function fixture(dir = mkdtempSync(join(tmpdir(), "hearth-wb-"))) {
  dirs.push(dir);
  const db = new Database(join(dir, "t.db"));
  db.exec("PRAGMA journal_mode = WAL");
  db.exec("PRAGMA busy_timeout = 5000");
  // The database refuses the value "refused" (as it refuses a row whose token was deleted meanwhile).
  db.exec("CREATE TABLE IF NOT EXISTS rows (id INTEGER PRIMARY KEY, v TEXT NOT NULL CHECK (v <> 'refused'))");
  db.exec("CREATE TABLE IF NOT EXISTS mark (k INTEGER PRIMARY KEY CHECK (k = 1), seq INTEGER NOT NULL)");
  db.exec("CREATE TABLE IF NOT EXISTS flags (fail INTEGER NOT NULL)");
  db.exec("INSERT INTO flags SELECT 0 WHERE NOT EXISTS (SELECT 1 FROM flags)");
  // Folds fail to commit while flags.fail is set (as on a full disk), in place or on the thread.
  db.exec(`CREATE TRIGGER IF NOT EXISTS mark_fails BEFORE INSERT ON mark WHEN (SELECT fail FROM flags) = 1
    BEGIN SELECT RAISE(ABORT, 'disk full'); END`);
  db.exec(`CREATE TRIGGER IF NOT EXISTS mark_update_fails BEFORE UPDATE ON mark WHEN (SELECT fail FROM flags) = 1
    BEGIN SELECT RAISE(ABORT, 'disk full'); END`);
  // Each fold's commit writes the mark once: counting mark writes counts folds.
  db.exec("CREATE TABLE IF NOT EXISTS folds (n INTEGER NOT NULL)");
  db.exec("INSERT INTO folds SELECT 0 WHERE NOT EXISTS (SELECT 1 FROM folds)");
  db.exec("CREATE TRIGGER IF NOT EXISTS count_mark_insert AFTER INSERT ON mark BEGIN UPDATE folds SET n = n + 1; END");
  db.exec("CREATE TRIGGER IF NOT EXISTS count_mark_update AFTER UPDATE ON mark BEGIN UPDATE folds SET n = n + 1; END");
  const open = (delayMs = 60_000, thread?: Partial<FoldThreadOptions>, more: { maxPending?: number; sliceRows?: number } = {}) => {
    const wb = createWriteBehind<{ v: string }>({
      path: join(dir, "t.journal"),
      log,
      delayMs,
      db,
      sql: JOURNAL_SQL,
      params: (r) => {
        if (r.v === "unwritable") throw new Error("cannot encode this row");
        return [r.v];
      },
      applied: () => appliedMark(db),
      ...more,
      thread: thread && { pragmas: ["PRAGMA journal_mode = WAL", "PRAGMA busy_timeout = 5000"], threadRows: 4, ...thread },
    });
    opened.push(wb);
    return wb;
  };
  const values = () => (db.query("SELECT v FROM rows ORDER BY id").all() as { v: string }[]).map((r) => r.v);
  const fail = (on: boolean) => db.exec(`UPDATE flags SET fail = ${on ? 1 : 0}`);
  const folds = () => (db.query("SELECT n FROM folds").get() as { n: number }).n;
  return { dir, db, open, values, journal: join(dir, "t.journal"), fail, folds };
}

describe("write-behind journal", () => {
  test("rows are in the journal at once and in the database after a flush; the journal is emptied", () => {
    const f = fixture();
    const wb = f.open();
    wb.append({ v: "a" });
    wb.append({ v: "b" });
    expect(f.values()).toEqual([]);
    expect(journalText(f.journal).trim().split("\n")).toHaveLength(2);
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
    const lines = journalText(f.journal);
    wb.flush();
    // As if the truncation never happened, plus one row after the fold.
    appendFileSync(f.journal, lines + JSON.stringify({ q: 3, p: ["z"] }) + "\n");
    const next = f.open();
    expect(f.values()).toEqual(["x", "y", "z"]);
    next.close();
  });

  test("a line torn by a crash inside its copy is skipped; whole lines are kept", () => {
    const f = fixture();
    const wb = f.open();
    wb.append({ v: "whole" });
    tear(f.journal, '{"q":2,"r":{"v":"to');
    const next = f.open();
    expect(f.values()).toEqual(["whole"]);
    next.append({ v: "after" });
    next.flush();
    expect(f.values()).toEqual(["whole", "after"]);
    next.close();
  });

  test("rows appended after a torn line are whole lines: a second crash loses none of them", () => {
    const f = fixture();
    const wb = f.open();
    wb.append({ v: "whole" });
    tear(f.journal, '{"q":2,"p":["to');
    f.fail(true); // the start's fold fails, so the journal keeps its lines
    const next = f.open();
    next.append({ v: "after" });
    // Crashed again, then started with a working disk.
    f.fail(false);
    const third = f.open();
    expect(f.values()).toEqual(["whole", "after"]);
    third.close();
  });

  test("a journal written by the older format (rows, not parameters) is folded at start", () => {
    const f = fixture();
    appendFileSync(f.journal, [{ q: 1, r: { v: "old-1" } }, { q: 2, r: { v: "old-2" } }].map((l) => JSON.stringify(l) + "\n").join(""));
    const wb = f.open();
    expect(f.values()).toEqual(["old-1", "old-2"]);
    wb.append({ v: "new" });
    wb.flush();
    expect(f.values()).toEqual(["old-1", "old-2", "new"]);
    wb.close();
  });

  test("a failing fold keeps the rows in the journal, and a later flush writes them", () => {
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

  describe("group commit (appendInGroup)", () => {
    const lines = (f: ReturnType<typeof fixture>) => journalText(f.journal).trim().split("\n").filter(Boolean);

    test("a turn's first row is written at once; the rows after it wait for the turn's end and go in one write", async () => {
      const f = fixture();
      const wb = f.open();
      expect(wb.appendInGroup({ v: "first" })).toBeUndefined();
      expect(lines(f)).toHaveLength(1);
      const second = wb.appendInGroup({ v: "second" });
      const third = wb.appendInGroup({ v: "third" });
      expect(second).toBeInstanceOf(Promise);
      expect(third).toBe(second!);
      // Not acknowledged yet, and not in the journal yet.
      expect(lines(f)).toHaveLength(1);
      await second;
      expect(lines(f)).toHaveLength(3);
      // A new turn starts with a row written at once again.
      expect(wb.appendInGroup({ v: "next turn" })).toBeUndefined();
      expect(lines(f)).toHaveLength(4);
      wb.flush();
      expect(f.values()).toEqual(["first", "second", "third", "next turn"]);
      wb.close();
    });

    test("a row appended or a flush while a group waits writes the group first: the journal keeps the order", async () => {
      const f = fixture();
      const wb = f.open();
      wb.appendInGroup({ v: "a" });
      const waiting = wb.appendInGroup({ v: "b" });
      wb.append({ v: "c" });
      expect(lines(f)).toHaveLength(3);
      await waiting;
      const again = wb.appendInGroup({ v: "d" });
      wb.flush();
      await again;
      expect(f.values()).toEqual(["a", "b", "c", "d"]);
      wb.close();
    });

    test("a group that cannot be written rejects its promise and leaves nothing of it in the journal", async () => {
      const f = fixture();
      const wb = f.open();
      wb.appendInGroup({ v: "ok" });
      const failed = wb.appendInGroup({ v: "unwritable" });
      const sibling = wb.appendInGroup({ v: "same group" });
      expect(failed).toBe(sibling!);
      await expect(failed!).rejects.toThrow("cannot encode this row");
      expect(lines(f)).toHaveLength(1);
      // The journal goes on: the next rows are numbered after the last written one.
      wb.append({ v: "after" });
      wb.flush();
      expect(f.values()).toEqual(["ok", "after"]);
      wb.close();
    });

    test("a crash after the group's promise resolved loses none of its rows", async () => {
      const f = fixture();
      const crashed = f.open();
      crashed.appendInGroup({ v: "g0" });
      const rest = Array.from({ length: 20 }, (_, i) => crashed.appendInGroup({ v: `g${i + 1}` }));
      await Promise.all(rest);
      // No flush, no close: the process died here.
      const next = f.open();
      expect(f.values()).toEqual(Array.from({ length: 21 }, (_, i) => `g${i}`));
      next.close();
    });
  });

  test("a row the database refuses is skipped alone; the rows sharing its INSERT statement go in, in order", () => {
    const f = fixture();
    const wb = f.open();
    // 70 rows: two whole statements of 32 (the refused one in the second) and 6 inserted one by one.
    const vs = Array.from({ length: 70 }, (_, i) => (i === 40 ? "refused" : `r${i}`));
    for (const v of vs) wb.append({ v });
    wb.flush();
    expect(f.values()).toEqual(vs.filter((v) => v !== "refused"));
    expect(statSync(f.journal).size).toBe(0);
    wb.close();
  });

  test("the room after the rows is allocated on the disk (zeros written, not a sparse hole) before a row is copied in", () => {
    const f = fixture();
    const wb = f.open();
    wb.append({ v: "a" });
    const st = statSync(f.journal);
    expect(st.size).toBeGreaterThanOrEqual(64 * 1024);
    // A hole would be allocated at the copy into the mapping, where a full disk kills the process.
    expect(st.blocks * 512).toBeGreaterThanOrEqual(st.size);
    const bytes = readFileSync(f.journal);
    const end = bytes.indexOf(10) + 1;
    expect(bytes.subarray(end).every((b) => b === 0)).toBe(true);
    wb.close();
  });

  test("rows past the first allocation grow the file and its mapping; every row is folded once, in order", () => {
    const f = fixture();
    const wb = f.open();
    const vs = Array.from({ length: 3000 }, (_, i) => `row-${i}-${"x".repeat(60)}`);
    for (const v of vs) wb.append({ v });
    expect(journalText(f.journal).trim().split("\n")).toHaveLength(3000);
    expect(statSync(f.journal).size).toBeGreaterThan(128 * 1024);
    wb.flush();
    expect(f.values()).toEqual(vs);
    expect(statSync(f.journal).size).toBe(0);
    // Emptied, the journal takes rows again through the mapping it kept.
    wb.append({ v: "again" });
    wb.flush();
    expect(f.values().at(-1)).toBe("again");
    wb.close();
  });

  test("rows in any script, up to the allocation's end, come back byte for byte; a lone surrogate as U+FFFD", () => {
    const f = fixture();
    const crashed = f.open();
    // Two-, three- and four-byte characters: each row is encoded straight into the mapping, and the
    // next row starts where its bytes (not its UTF-16 length) end.
    const vs = Array.from({ length: 1500 }, (_, i) => `${i} Grüße ✓ 日本語 😀 ${"é".repeat(i % 40)}`);
    for (const v of vs) crashed.append({ v });
    crashed.append({ v: "half \ud83d pair" });
    // No flush, no close: the next start reads the file as the process left it.
    const next = f.open();
    expect(f.values()).toEqual([...vs, "half \ufffd pair"]);
    next.close();
  });

  test("a process killed (SIGKILL) after its rows were copied in loses none of them: the mapping is the file's pages", async () => {
    const f = fixture();
    const writer = Bun.spawn([process.execPath, join(import.meta.dir, "../support/journal-writer.ts"), f.dir, "5000"], { stdout: "pipe", stderr: "inherit" });
    const reader = writer.stdout.getReader();
    let said = "";
    while (!said.includes("appended")) {
      const { value, done } = await reader.read();
      if (done) break;
      said += new TextDecoder().decode(value);
    }
    expect(said).toContain("appended");
    writer.kill("SIGKILL");
    expect(await writer.exited).not.toBe(0);
    // Nothing was folded (the writer's delay is an hour): every row comes from the journal.
    expect(f.values()).toEqual([]);
    const wb = f.open();
    expect(f.values()).toEqual(Array.from({ length: 5000 }, (_, i) => `r${i}`));
    wb.close();
  }, 30_000);

  test("the journal file is private to Hearth's user", () => {
    const f = fixture();
    const wb = f.open();
    expect(statSync(f.journal).mode & 0o777).toBe(0o600);
    wb.close();
  });

  const until = async (ok: () => boolean, ms = 5_000) => {
    const end = Date.now() + ms;
    while (!ok() && Date.now() < end) await Bun.sleep(5);
  };
  const rows = (n: number, from = 0) => Array.from({ length: n }, (_, i) => `r${from + i}`);
  /** Appends rows as requests of one turn of the event loop do (a group commit), and waits until they are written. */
  const appendTogether = (wb: { appendInGroup(r: { v: string }): Promise<void> | undefined }, vs: string[]) => Promise.all(vs.map((v) => wb.appendInGroup({ v })));
  /** Appends rows as one request per turn does. */
  const appendOneByOne = async (wb: { appendInGroup(r: { v: string }): Promise<void> | undefined }, vs: string[]) => {
    for (const v of vs) {
      await wb.appendInGroup({ v });
      await new Promise((resolve) => setImmediate(resolve));
    }
  };

  test("the timer's fold in place takes sliceRows at a time, a commit each, and folds every row in order", async () => {
    const f = fixture();
    const wb = f.open(1, undefined, { sliceRows: 4 });
    for (const v of rows(10)) wb.append({ v });
    await until(() => f.values().length === 10 && statSync(f.journal).size === 0);
    expect(f.values()).toEqual(rows(10));
    expect(f.folds()).toBe(3); // 4 + 4 + 2
    expect(statSync(f.journal).size).toBe(0);
    wb.close();
  });

  test("a slice's last line may cross the 64 KB the journal is read in: it is taken whole", async () => {
    const f = fixture();
    const wb = f.open(1, undefined, { sliceRows: 700 });
    const vs = Array.from({ length: 1000 }, (_, i) => `${i}:`.padEnd(100, "x")); // ~120 bytes a line
    for (const v of vs) wb.append({ v });
    await until(() => f.values().length === 1000 && statSync(f.journal).size === 0);
    expect(f.values()).toEqual(vs);
    expect(f.folds()).toBe(2);
    wb.close();
  });

  test("a slice that cannot commit stays journaled with the rows after it, and is folded once when the disk is back", async () => {
    const f = fixture();
    const wb = f.open(1, undefined, { sliceRows: 4 });
    f.fail(true);
    for (const v of rows(10)) wb.append({ v });
    await Bun.sleep(50);
    expect(f.values()).toEqual([]);
    f.fail(false);
    wb.flush();
    expect(f.values()).toEqual(rows(10));
    wb.close();
    const next = f.open(60_000);
    expect(f.values()).toEqual(rows(10));
    next.close();
  });

  describe("with a folding thread", () => {
    test("inPlaceWhenBusy: rows that came together are folded in place in slices, rows that came one per turn by the thread", async () => {
      const f = fixture();
      const wb = f.open(60_000, { inPlaceWhenBusy: true }, { maxPending: 20, sliceRows: 4 });
      await appendTogether(wb, rows(20));
      await until(() => f.values().length === 20);
      expect(f.values()).toEqual(rows(20));
      expect(f.folds()).toBe(5); // in place, 4 at a time
      await appendOneByOne(wb, rows(20, 20));
      await until(() => f.values().length === 40);
      expect(f.values()).toEqual(rows(40));
      expect(f.folds()).toBe(6); // the thread's one batch
      wb.close();
    }, 15_000);

    test("without inPlaceWhenBusy rows that came together still go to the thread", async () => {
      const f = fixture();
      const wb = f.open(60_000, {}, { maxPending: 20, sliceRows: 4 });
      await appendTogether(wb, rows(20));
      await until(() => f.values().length === 20);
      expect(f.values()).toEqual(rows(20));
      expect(f.folds()).toBe(1);
      wb.close();
    }, 15_000);

    test("a big batch is folded by the thread, in order, and the journal is emptied after it", async () => {
      const f = fixture();
      const wb = f.open(1, {});
      for (const v of rows(50)) wb.append({ v });
      await until(() => f.values().length === 50 && statSync(f.journal).size === 0);
      expect(f.values()).toEqual(rows(50));
      expect(statSync(f.journal).size).toBe(0);
      wb.close();
    }, 15_000);

    test("the thread skips a refused row alone, as the fold in place does", async () => {
      const f = fixture();
      const wb = f.open(1, {});
      const vs = [...rows(33), "refused", ...rows(40, 100)];
      for (const v of vs) wb.append({ v });
      await until(() => f.values().length === vs.length - 1 && statSync(f.journal).size === 0);
      expect(f.values()).toEqual(vs.filter((v) => v !== "refused"));
      expect(statSync(f.journal).size).toBe(0);
      wb.close();
    }, 15_000);

    test("flush waits for the batch in flight, then folds the rest after it: every row once, in order", async () => {
      const f = fixture();
      const wb = f.open(1, {});
      for (let round = 0; round < 20; round++) {
        for (const v of rows(40, round * 40)) wb.append({ v });
        await Bun.sleep(2); // the timer hands the batch to the thread
        for (const v of rows(3, 10_000 + round * 3)) wb.append({ v });
        wb.flush(); // as before a read of the table
        const expected = Array.from({ length: round + 1 }, (_, r) => [...rows(40, r * 40), ...rows(3, 10_000 + r * 3)]).flat();
        expect(f.values()).toEqual(expected);
      }
      expect(statSync(f.journal).size).toBe(0);
      wb.close();
    }, 20_000);

    test("a batch the thread could not commit stays journaled and is folded once when the disk is back", async () => {
      const f = fixture();
      const wb = f.open(1, {});
      f.fail(true);
      for (const v of rows(10)) wb.append({ v });
      await Bun.sleep(200);
      expect(f.values()).toEqual([]);
      expect(journalText(f.journal).trim().split("\n")).toHaveLength(10);
      f.fail(false);
      wb.append({ v: "after" });
      wb.flush();
      expect(f.values()).toEqual([...rows(10), "after"]);
      wb.close();
      // A start after this finds nothing left to fold.
      const next = f.open(1, {});
      expect(f.values()).toEqual([...rows(10), "after"]);
      next.close();
    }, 15_000);

    test("a crash after the thread's commit and before the truncation folds nothing twice", async () => {
      const f = fixture();
      const wb = f.open(1, {});
      for (const v of rows(20)) wb.append({ v });
      const lines = journalText(f.journal);
      await until(() => f.values().length === 20);
      // As if the process died before it emptied the journal (the lines may land after its room).
      appendFileSync(f.journal, lines);
      const next = f.open(60_000);
      expect(f.values()).toEqual(rows(20));
      next.close();
      wb.close();
    }, 15_000);

    test("a thread that cannot run leaves the folding to the event loop; nothing is lost", async () => {
      const f = fixture();
      const wb = f.open(1, { pragmas: ["PRAGMA journal_mode = WAL", "THIS IS NOT SQL"] });
      for (const v of rows(10)) wb.append({ v });
      await Bun.sleep(200);
      for (const v of rows(10, 10)) wb.append({ v });
      wb.flush();
      expect(f.values()).toEqual(rows(20));
      wb.close();
    }, 15_000);
  });
});
