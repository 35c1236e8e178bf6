// The journal file: a line torn by a crash is dropped and the next rows are whole; the room after
// the lines is on the disk before a copy; lines in any script come back byte for byte; a SIGKILL
// after the copy loses nothing; the file is private.
import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync, statSync, writeSync } from "node:fs";
import { join } from "node:path";
import { openJournalFile } from "../../src/platform/db/journal-file";
import { createLogger } from "../../src/platform/log";
import { cleanup, fixture, journalText, tear } from "../support/write-behind-fixture";

afterAll(cleanup);

describe("write-behind journal file", () => {
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
    // Folded, the lines are zeroed and the room kept, up to 1 MB.
    expect(statSync(f.journal).size).toBe(512 * 1024);
    expect(readFileSync(f.journal).every((b) => b === 0)).toBe(true);
    // Emptied, the journal takes rows again through the mapping it kept.
    wb.append({ v: "again" });
    wb.flush();
    expect(f.values().at(-1)).toBe("again");
    wb.close();
  });

  test("after a fold the room stays allocated: a full disk still takes rows until it is used, and refuses them then", () => {
    const f = fixture();
    let full = false;
    const write = (fd: number, bytes: Uint8Array, offset: number, length: number, position: number) => {
      if (full) throw Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" });
      return writeSync(fd, bytes, offset, length, position);
    };
    const { file } = openJournalFile(f.journal, createLogger(true), write);
    file.append('{"q":1,"p":["a"]}\n');
    file.empty();
    full = true;
    // The 64 KB allocated for the first line is there for the next ones (a token request, a read included).
    const line = '{"q":2,"p":["b"]}\n';
    file.append(line);
    expect(journalText(f.journal)).toBe(line);
    let taken = 1;
    // 64 KB hold ~3,600 such lines: 10,000 would need room the disk refuses.
    const fill = () => {
      for (let i = 0; i < 10_000; i++) {
        file.append(line);
        taken += 1;
      }
    };
    expect(fill).toThrow("ENOSPC");
    // Rows up to the allocation's end (each needs room for its longest encoding) and not one past it.
    expect(taken * line.length).toBeGreaterThan(64 * 1024 - 3 * line.length);
    expect(statSync(f.journal).size).toBe(64 * 1024);
    expect(file.size).toBe(taken * line.length);
    file.close();
  });

  test("rows folded, zeroed, then rows after them and a crash: the next start folds each later row once, in order", () => {
    const f = fixture();
    const crashed = f.open();
    for (const v of ["a", "b", "c"]) crashed.append({ v });
    crashed.flush();
    crashed.append({ v: "d" });
    // No flush, no close: the journal holds "d" at its start and zeros where a, b, c were.
    expect(journalText(f.journal)).toBe('{"q":4,"p":["d"]}\n');
    const next = f.open();
    expect(f.values()).toEqual(["a", "b", "c", "d"]);
    next.close();
  });

  test("a journal a burst grew past 1 MB is cut back to 1 MB of room when folded, and at the next start", () => {
    const f = fixture();
    const wb = f.open();
    for (let i = 0; i < 12_000; i++) wb.append({ v: `row-${i}-${"x".repeat(80)}` });
    expect(statSync(f.journal).size).toBe(2 * 1024 * 1024);
    wb.flush();
    expect(statSync(f.journal).size).toBe(1024 * 1024);
    // Rows past the cut grow the file again through the mapping (no SIGBUS), and fold.
    for (let i = 0; i < 12_000; i++) wb.append({ v: `again-${i}-${"x".repeat(80)}` });
    expect(statSync(f.journal).size).toBe(2 * 1024 * 1024);
    // Crashed with them journaled: the next start keeps them and cuts the room after folding them.
    const next = f.open();
    expect(f.values()).toHaveLength(24_000);
    expect(statSync(f.journal).size).toBe(1024 * 1024);
    next.close();
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
});
