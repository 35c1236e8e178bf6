// The fold thread: big batches folded off the event loop, in order, once, and what happens when it
// cannot commit, crashes or is never started.
import { afterAll, describe, expect, test } from "bun:test";
import { appendFileSync } from "node:fs";
import { appendOneByOne, appendTogether, cleanup, fixture, journalText, rows, until } from "../support/write-behind-fixture";

afterAll(cleanup);

describe("write-behind journal with a folding thread", () => {
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
    await until(() => f.values().length === 50 && journalText(f.journal) === "");
    expect(f.values()).toEqual(rows(50));
    expect(journalText(f.journal)).toBe("");
    wb.close();
  }, 15_000);

  test("the thread skips a refused row alone, as the fold in place does", async () => {
    const f = fixture();
    const wb = f.open(1, {});
    const vs = [...rows(33), "refused", ...rows(40, 100)];
    for (const v of vs) wb.append({ v });
    await until(() => f.values().length === vs.length - 1 && journalText(f.journal) === "");
    expect(f.values()).toEqual(vs.filter((v) => v !== "refused"));
    expect(journalText(f.journal)).toBe("");
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
    expect(journalText(f.journal)).toBe("");
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
