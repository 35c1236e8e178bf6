// The write-behind tests' fixture: a database with a rows table and the applied mark, journals
// over it, and what a crash leaves in a journal file. Shared by write-behind, journal-file and
// fold-thread tests; `cleanup` closes what a test left open as if crashed and removes the folders.
import { Database } from "bun:sqlite";
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createWriteBehind } from "../../src/platform/db/write-behind";
import type { FoldThreadOptions } from "../../src/platform/db/fold-thread";
import { createLogger } from "../../src/platform/log";
import { appliedMark, JOURNAL_SQL } from "./journal-fixture";

const dirs: string[] = [];
const opened: { close(): void }[] = [];

export function cleanup() {
  // Journals a test left open as if crashed are closed before their folders go.
  for (const wb of opened.splice(0)) wb.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
}

const log = createLogger(true);

/** The journal's lines as text, without the zeros of the room allocated after them. */
export function journalText(path: string): string {
  const text = readFileSync(path, "utf8");
  const room = text.indexOf("\0");
  return room < 0 ? text : text.slice(0, room);
}

/** Writes `text` where the next row would go: what a crash in the middle of copying a row leaves. */
export function tear(path: string, text: string) {
  const fd = openSync(path, "r+");
  writeSync(fd, text, Buffer.byteLength(journalText(path)));
  closeSync(fd);
}

/** A database with a rows table and the applied mark, and a journal over it. */
export function fixture(dir = mkdtempSync(join(tmpdir(), "hearth-wb-"))) {
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

export const until = async (ok: () => boolean, ms = 5_000) => {
  const end = Date.now() + ms;
  while (!ok() && Date.now() < end) await Bun.sleep(5);
};
export const rows = (n: number, from = 0) => Array.from({ length: n }, (_, i) => `r${from + i}`);
/** Appends rows as requests of one turn of the event loop do (a group commit), and waits until they are written. */
export const appendTogether = (wb: { appendInGroup(r: { v: string }): Promise<void> | undefined }, vs: string[]) => Promise.all(vs.map((v) => wb.appendInGroup({ v })));
/** Appends rows as one request per turn does. */
export const appendOneByOne = async (wb: { appendInGroup(r: { v: string }): Promise<void> | undefined }, vs: string[]) => {
  for (const v of vs) {
    await wb.appendInGroup({ v });
    await new Promise((resolve) => setImmediate(resolve));
  }
};
