// A write-behind journal for rows written on every request (a token's `used` audit row).
//
// A SQLite commit costs ~20 µs and 6 lock calls plus a write per page even without fsync, more
// than the rest of a request; at a checkpoint it costs milliseconds. So a row is first appended to
// a journal file with one write() — in the OS page cache when it returns, so a kill -9 of Hearth
// loses nothing acknowledged (the same promise as the NORMAL-synchronous connection it replaces;
// a power cut may lose the last rows) — and folded into the database in batches, a few ms later
// or before anyone reads them. The batch's last sequence number is committed with its rows, so a
// crash between the commit and the journal's truncation never folds a row twice. At start, rows
// the database has not seen are folded from the file.
import { closeSync, ftruncateSync, openSync, readFileSync, writeSync } from "node:fs";
import type { Logger } from "../log";
import { privateFile } from "./database";

export interface WriteBehindOptions<T> {
  /** The journal file (created 0600). */
  path: string;
  /** The sequence number of the last row already in the database (0 for none). */
  applied(): number;
  /** Writes `rows` and records `lastSeq` as applied, in one transaction. */
  apply(rows: T[], lastSeq: number): void;
  log: Logger;
  /** How long a row may wait in the journal before it is folded. */
  delayMs?: number;
  /** Folds at once (next macrotask) when this many rows wait. */
  maxPending?: number;
}

export interface WriteBehind<T> {
  /** Appends a row; durable against a crash of the process when this returns. */
  append(row: T): void;
  /** Folds every waiting row into the database now (before a read of them, at shutdown). */
  flush(): void;
  close(): void;
}

const RETRY_MS = 1_000;

export function createWriteBehind<T>(o: WriteBehindOptions<T>): WriteBehind<T> {
  const delayMs = o.delayMs ?? 5;
  const maxPending = o.maxPending ?? 128;
  privateFile(o.path);

  let seq = o.applied();
  let pending: T[] = [];
  for (const line of readFileSync(o.path, "utf8").split("\n")) {
    if (!line) continue;
    let record: { q: number; r: T };
    try {
      record = JSON.parse(line);
    } catch {
      // Only the last append can be cut short, by a crash inside write(): it was never acknowledged.
      o.log.warn("write-behind: unreadable journal line skipped", { path: o.path });
      continue;
    }
    if (record.q > seq) {
      pending.push(record.r);
      seq = record.q;
    }
  }

  const fd = openSync(o.path, "a", 0o600);
  /** Bytes of whole records in the file; a short write is cut back to it. */
  let size = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let closed = false;

  const flush = () => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    if (pending.length === 0) return;
    const rows = pending;
    pending = [];
    try {
      o.apply(rows, seq);
    } catch (e) {
      // The rows stay in the journal and in memory; a busy or full disk is tried again.
      pending = rows.concat(pending);
      o.log.error("write-behind: rows not yet folded into the database", { path: o.path, rows: pending.length, error: String(e) });
      if (!closed) {
        timer = setTimeout(flush, RETRY_MS);
        timer.unref?.();
      }
      return;
    }
    ftruncateSync(fd);
    size = 0;
  };

  // Rows a crash left behind are folded before anything new is appended.
  flush();
  if (pending.length === 0) {
    ftruncateSync(fd);
    size = 0;
  }

  return {
    append(row) {
      if (closed) throw new Error("write-behind journal is closed");
      const line = `${JSON.stringify({ q: seq + 1, r: row })}\n`;
      const bytes = Buffer.byteLength(line);
      let written = 0;
      try {
        written = writeSync(fd, line);
      } finally {
        if (written !== bytes) ftruncateSync(fd, size);
      }
      if (written !== bytes) throw new Error(`write-behind: short write to ${o.path}`);
      size += written;
      seq += 1;
      pending.push(row);
      if (pending.length >= maxPending) {
        if (timer) clearTimeout(timer);
        timer = setTimeout(flush, 0);
      } else {
        timer ??= setTimeout(flush, delayMs);
      }
      timer.unref?.();
    },
    flush,
    close() {
      if (closed) return;
      flush();
      closed = true;
      if (timer) clearTimeout(timer);
      closeSync(fd);
    },
  };
}
