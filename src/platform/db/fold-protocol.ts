// The one fold of journaled rows into SQLite, and the messages between the write-behind journal
// (write-behind.ts) and its folding thread (fold-worker.ts). Both read a batch from the journal file
// itself (`readJournal`: a byte range of whole lines) and fold it through `preparedFold`, so a
// batch folded in place and one folded by the thread are the same statements in one transaction,
// and no row crosses between threads.
import { readSync } from "node:fs";
import type { Database, SQLQueryBindings } from "bun:sqlite";

/** One journal line: `{"q":<sequence number>,"p":[<the row's parameters>]}`. */
export interface JournalLine {
  q: number;
  p: SQLQueryBindings[];
}

export interface JournalRows {
  rows: SQLQueryBindings[][];
  /** The sequence number of the last readable line (`after` when there is none). */
  lastSeq: number;
  /** Lines that did not parse (only a crash inside write() cuts one short). */
  unreadable: number;
}

/**
 * The rows of the whole lines in `text` numbered after `after`. `legacy` turns a line of the older
 * format (`{"q":..,"r":<row>}`, before rows were journaled as parameters) into parameters.
 */
export function journalRows(text: string, after: number, legacy?: (row: unknown) => SQLQueryBindings[]): JournalRows {
  const out: JournalRows = { rows: [], lastSeq: after, unreadable: 0 };
  // Zeros are the journal's unwritten room; lines never hold one (JSON escapes it), so they only
  // separate lines (room a crash left, then lines written after it).
  for (const line of text.includes("\0") ? text.split(/[\n\0]+/) : text.split("\n")) {
    if (!line) continue;
    let record: JournalLine & { r?: unknown };
    try {
      record = JSON.parse(line);
    } catch {
      out.unreadable += 1;
      continue;
    }
    if (record.q <= out.lastSeq) continue;
    const params = record.p ?? (legacy && record.r !== undefined ? legacy(record.r) : undefined);
    if (!params) {
      out.unreadable += 1;
      continue;
    }
    out.rows.push(params);
    out.lastSeq = record.q;
  }
  return out;
}

/** Reads bytes [from, to) of the journal (whole lines, as the writer counted them). */
export function readJournal(fd: number, from: number, to: number): string {
  const bytes = Buffer.allocUnsafe(to - from);
  let got = 0;
  while (got < bytes.length) {
    const n = readSync(fd, bytes, got, bytes.length - got, from + got);
    if (n === 0) break;
    got += n;
  }
  return bytes.toString("utf8", 0, got);
}

/**
 * The first `maxLines` whole lines of bytes [from, to) of the journal, read 64 KB at a time, and
 * the offset after them.
 */
export function readJournalLines(fd: number, from: number, to: number, maxLines: number): { text: string; end: number } {
  if (maxLines === Number.POSITIVE_INFINITY) return { text: readJournal(fd, from, to), end: to };
  const chunks: Buffer[] = [];
  let at = from;
  let lines = 0;
  while (at < to && lines < maxLines) {
    const chunk = Buffer.allocUnsafe(Math.min(64 * 1024, to - at));
    const n = readSync(fd, chunk, 0, chunk.length, at);
    if (n === 0) break;
    let cut = 0;
    for (let nl = chunk.indexOf(10); nl >= 0 && nl < n && lines < maxLines; nl = chunk.indexOf(10, nl + 1)) {
      lines += 1;
      cut = nl + 1;
    }
    // Past the last line wanted, or a line that goes on in the next chunk (whole lines end in \n).
    const keep = lines >= maxLines ? cut : n;
    chunks.push(chunk.subarray(0, keep));
    at += keep;
  }
  return { text: Buffer.concat(chunks).toString("utf8"), end: at };
}

export interface FoldSql {
  /**
   * Inserts one row: `INSERT INTO t (columns) VALUES (?, ...)`, ending with its one tuple of
   * placeholders (the fold repeats that tuple to insert many rows with one statement).
   */
  rowSql: string;
  /** Records the batch's last sequence number (`?`), committed with its rows. */
  markSql: string;
}

export interface Folded {
  /** Rows the database refused (a foreign key whose parent was deleted meanwhile); the others went in. */
  skipped: number;
  firstError?: string;
}

/**
 * Rows per INSERT statement. One statement for 32 rows costs about half as much per row as one
 * statement a row (1.0-1.2 vs 2.0 µs, the audit table on a 2-core machine), and the fold runs on
 * the second core the requests also need.
 */
const FOLD_CHUNK_ROWS = 32;

/** The statement that inserts `count` rows at once: `rowSql` with its tuple of placeholders repeated. */
function chunkSql(rowSql: string, count: number): string {
  const at = rowSql.lastIndexOf("(");
  const tuple = rowSql.slice(at).trim();
  if (!/^\(\s*\?(\s*,\s*\?)*\s*\)$/.test(tuple) || !/\bVALUES\s*$/i.test(rowSql.slice(0, at))) {
    throw new Error(`write-behind: rowSql must end in VALUES (?, ...), got: ${rowSql}`);
  }
  return rowSql.trimEnd() + `, ${tuple}`.repeat(count - 1);
}

/** Prepares the fold on a connection: each call commits `rows` and `lastSeq` in one transaction. */
export function preparedFold(db: Database, sql: FoldSql): (rows: SQLQueryBindings[][], lastSeq: number) => Folded {
  const insert = db.prepare(sql.rowSql);
  const insertChunk = db.prepare(chunkSql(sql.rowSql, FOLD_CHUNK_ROWS));
  const mark = db.prepare(sql.markSql);
  return db.transaction((rows: SQLQueryBindings[][], lastSeq: number): Folded => {
    const folded: Folded = { skipped: 0 };
    const insertOne = (row: SQLQueryBindings[]) => {
      try {
        insert.run(...row);
      } catch (e) {
        folded.skipped += 1;
        folded.firstError ??= String(e);
      }
    };
    let i = 0;
    for (; i + FOLD_CHUNK_ROWS <= rows.length; i += FOLD_CHUNK_ROWS) {
      const chunk = rows.slice(i, i + FOLD_CHUNK_ROWS);
      try {
        insertChunk.run(...chunk.flat());
      } catch {
        // A refused row fails its whole statement, which leaves nothing of it: the chunk's rows
        // go in one at a time, so only the refused ones are skipped.
        chunk.forEach(insertOne);
      }
    }
    for (; i < rows.length; i++) insertOne(rows[i]!);
    mark.run(lastSeq);
    return folded;
  });
}

export interface FoldSetup extends FoldSql {
  op: "open";
  dbPath: string;
  /** The journal file, read by the thread (the event loop only appends to it). */
  journalPath: string;
  /** Run once on the connection (durability, foreign keys, busy timeout). */
  pragmas: string[];
  /** A shared Int32 the thread sets to IDLE or FAILED after each batch (and wakes waiters on). */
  state: SharedArrayBuffer;
}

/** A batch: the journal's lines in bytes [from, to) numbered after `after`, up to `lastSeq`. */
export interface FoldBatch {
  op: "fold";
  from: number;
  to: number;
  after: number;
  lastSeq: number;
}

/** Index 0 of the shared state. */
export const FOLD_IDLE = 0;
export const FOLD_BUSY = 1;
export const FOLD_FAILED = 2;

export type FoldReply = ({ op: "folded" } & Folded) | { op: "failed"; error: string } | { op: "closed" };
