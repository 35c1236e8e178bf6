// The write-behind journal: rows acknowledged before they reach SQLite come back after a crash,
// exactly once; rows of one turn share one copy; folds in place take slices.
import { afterAll, describe, expect, test } from "bun:test";
import { appendFileSync, readFileSync } from "node:fs";
import { cleanup, fixture, journalText, rows, until } from "../support/write-behind-fixture";

afterAll(cleanup);

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
    expect(journalText(f.journal)).toBe("");
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
    expect(journalText(f.journal)).toBe("");
    wb.close();
  });

  test("the timer's fold in place takes sliceRows at a time, a commit each, and folds every row in order", async () => {
    const f = fixture();
    const wb = f.open(1, undefined, { sliceRows: 4 });
    for (const v of rows(10)) wb.append({ v });
    await until(() => f.values().length === 10 && journalText(f.journal) === "");
    expect(f.values()).toEqual(rows(10));
    expect(f.folds()).toBe(3); // 4 + 4 + 2
    expect(journalText(f.journal)).toBe("");
    wb.close();
  });

  test("a slice's last line may cross the 64 KB the journal is read in: it is taken whole", async () => {
    const f = fixture();
    const wb = f.open(1, undefined, { sliceRows: 700 });
    const vs = Array.from({ length: 1000 }, (_, i) => `${i}:`.padEnd(100, "x")); // ~120 bytes a line
    for (const v of vs) wb.append({ v });
    await until(() => f.values().length === 1000 && journalText(f.journal) === "");
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
});
