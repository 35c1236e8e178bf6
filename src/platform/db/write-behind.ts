// A write-behind journal for rows written on every request (a token's `used` audit row).
//
// A SQLite commit costs ~20 µs and 6 lock calls plus a write per page even without fsync, more
// than the rest of a request; at a checkpoint it costs milliseconds. So a row is first appended to
// a journal file (journal-file.ts: in the OS page cache when the append returns, so a kill -9 of
// Hearth loses nothing acknowledged, the same promise as the NORMAL-synchronous connection it
// replaces; a power cut may lose the last rows) and folded into the database in batches, ~50 ms
// later or before anyone reads them. The batch's last sequence number is committed with its rows,
// so a crash between the commit and the journal's truncation never folds a row twice. At start,
// rows the database has not seen are folded from the file.
//
// Rows of requests that arrive together share one copy (`appendInGroup`, a group commit): the
// first row of a turn of the event loop is written at once, so a lone request waits for nothing;
// the rows after it in the same turn are written together when the turn ends, and their requests
// answer after that. Introduced when each row cost a write() (at 32 requests in flight the largest
// single cost of a token request: main-thread CPU per request 57 -> 35 µs without it); through the
// mapping a row costs no system call (a write() had cost 5-7 µs of a lone request's ~75), and the
// grouping still pays: without it, 22.1 vs 19.6 µs per request at 32 in flight (A/B, 14 slices).
//
// Under load (from the first batch of `threadRows` or more), batches are folded by a thread of
// their own (`thread`, fold-thread.ts and fold-worker.ts): the event loop hands it a byte range of
// the journal, and the thread reads, parses and commits it, so a batch costs the event loop one
// message whatever its size. `flush` waits for the batch in flight before folding the rest itself,
// so rows still reach the table in journal order. The thread is started at the first such batch and
// stopped after a quiet minute (it costs ~7 MB; an idle Hearth does not hold it). Both fold with
// the same statements (fold-protocol.ts). Where no core is free for the thread (`inPlaceWhenBusy`),
// rows that come in groups (the event loop is saturated) are folded in place instead; the timer's
// folds in place take `sliceRows` at a time, a commit each, and let requests in between.
import type { Database, SQLQueryBindings } from "bun:sqlite";
import type { Logger } from "../log";
import { openJournalFile } from "./journal-file";
import { journalRows, preparedFold, readJournalLines, type Folded, type FoldSql } from "./fold-protocol";
import { foldThread, type FoldThreadOptions } from "./fold-thread";

export interface WriteBehindOptions<T> {
  /** The journal file (created 0600). */
  path: string;
  /** The connection batches are folded on in place (the thread opens the same file). */
  db: Database;
  /** The fold's statements: a row's insert and the applied mark, committed together. */
  sql: FoldSql;
  /** A row's parameters for `sql.rowSql`. */
  params(row: T): SQLQueryBindings[];
  /** The sequence number of the last row already in the database (0 for none), as `sql.markSql` wrote it. */
  applied(): number;
  log: Logger;
  /** How long a row may wait in the journal before it is folded. */
  delayMs?: number;
  /** Folds at once (next macrotask) when this many rows wait. */
  maxPending?: number;
  /**
   * Rows a fold in place takes at a time before it lets requests in (the timer's folds; `flush`
   * takes them all). Default 512, ~0.5 ms of the event loop.
   */
  sliceRows?: number;
  /** Folds big batches on a thread of its own (see above). */
  thread?: FoldThreadOptions;
}

export interface WriteBehind<T> {
  /** Appends a row; durable against a crash of the process when this returns. */
  append(row: T): void;
  /**
   * Appends a row in a group commit with the other rows of this turn of the event loop: the turn's
   * first row is written at once (undefined: durable on return, as `append`); rows after it in the
   * same turn are written together, one write for all, when the turn ends. The promise resolves
   * when they are durable and rejects if that write failed: acknowledge the row only after it.
   */
  appendInGroup(row: T): Promise<void> | undefined;
  /** Folds every waiting row into the database now (before a read of them, at shutdown). */
  flush(): void;
  close(): void;
}

const RETRY_MS = 1_000;
/** How long `flush` waits for the thread's batch before giving up (the rows stay journaled). */
const WAIT_MS = 10_000;
/** Past this size the journal is emptied at the end of a thread's batch, even if requests never pause. */
const JOURNAL_LIMIT_BYTES = 4 * 1024 * 1024;

export function createWriteBehind<T>(o: WriteBehindOptions<T>): WriteBehind<T> {
  // Measured (sequential token GETs, 2 cores): batches every 5 ms gave a p99 of 585-773 µs, every
  // 50 ms 322-428 µs: each commit has a fixed cost, and on two cores the folding thread's CPU is
  // taken from the requests. Rows wait in the file, not in memory, so a longer delay costs nothing.
  const delayMs = o.delayMs ?? 50;
  const maxPending = o.maxPending ?? 2048;
  const sliceRows = o.sliceRows ?? 512;
  // Folds read ranges of whole lines back from the file by offset.
  const { file, text: found } = openJournalFile(o.path, o.log);
  const applied = o.applied();
  let seq = Math.max(applied, journalRows(found, applied).lastSeq);
  /** Where (byte offset, sequence number) the rows not yet handed to a fold start. */
  let handed = { at: 0, seq: applied };
  /** Where the rows not yet committed start (behind `handed` while the thread has a batch). */
  let committed = handed;
  const waiting = () => seq - handed.seq;

  let timer: ReturnType<typeof setTimeout> | undefined;
  let closed = false;
  const foldInPlace = preparedFold(o.db, o.sql);
  /** Rows the database refused are logged, whichever side folded them. */
  const report = (folded: Folded) => {
    if (folded.skipped > 0) o.log.warn("write-behind: rows skipped by the database", { path: o.path, skipped: folded.skipped, error: folded.firstError });
  };
  const thread = o.thread ? foldThread({ dbPath: o.db.filename, journalPath: o.path, sql: o.sql, log: o.log }, o.thread, report) : undefined;

  const arm = (ms: number) => {
    if (closed) return;
    if (timer) clearTimeout(timer);
    timer = setTimeout(fold, ms);
    timer.unref?.();
  };

  /** Empties the journal once every row in it is committed. */
  const truncateIfFolded = () => {
    if (file.size === 0 || committed.at !== file.size || thread?.inFlight()) return;
    file.empty();
    handed = committed = { at: 0, seq };
  };

  /**
   * Folds the first `maxRows` waiting rows (all by default) in place; false when the commit failed
   * (the rows stay journaled and a retry is armed).
   */
  const foldHere = (maxRows = Number.POSITIVE_INFINITY): boolean => {
    const size = file.size;
    if (handed.at === size) return true;
    try {
      const lines = readJournalLines(file.fd, handed.at, size, maxRows);
      const batch = journalRows(lines.text, handed.seq, o.params as (row: unknown) => SQLQueryBindings[]);
      if (batch.unreadable > 0) o.log.warn("write-behind: unreadable journal lines skipped", { path: o.path, lines: batch.unreadable });
      const to = { at: lines.end, seq: lines.end === size ? seq : batch.lastSeq };
      report(foldInPlace(batch.rows, to.seq));
      handed = committed = to;
      return true;
    } catch (e) {
      // The rows stay in the journal; a busy or full disk is tried again.
      o.log.error("write-behind: rows not yet folded into the database", { path: o.path, rows: waiting(), error: String(e) });
      arm(RETRY_MS);
      return false;
    }
  };

  /** Waits for the thread's batch (if it failed, its rows are handed out again). */
  const settleThread = (): boolean => {
    if (!thread || thread.wait(WAIT_MS)) return true;
    o.log.error("write-behind: the folding thread did not finish its batch; rows stay journaled", { path: o.path, waitedMs: WAIT_MS });
    return false;
  };

  const flush = () => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    if (!settleThread()) return;
    foldHere();
    truncateIfFolded();
  };

  /** Rows appended through appendInGroup since the last fold, and how many of them joined a group. */
  let appended = 0;
  let grouped = 0;
  let busy = false;
  /** Whether most rows since the last fold came while other requests of their turn were handled. */
  const loopBusy = (): boolean => {
    if (appended > 0) busy = grouped * 2 >= appended;
    appended = grouped = 0;
    return busy;
  };

  /**
   * The timer's fold: big batches to the thread (one at a time) when there is one and it is wanted;
   * otherwise in place, `sliceRows` at a time with requests let in between.
   */
  function fold() {
    timer = undefined;
    if (waiting() === 0) return truncateIfFolded();
    // The thread's batch is committed first (rows stay in order); the event loop does not wait for it here.
    if (thread?.inFlight()) return arm(delayMs);
    if (!thread?.usable() || (o.thread?.inPlaceWhenBusy && loopBusy()) || (waiting() < thread.threadRows && !thread.running())) {
      if (!foldHere(sliceRows)) return;
      if (waiting() > 0) return arm(0);
      return truncateIfFolded();
    }
    const from = handed;
    const to = { at: file.size, seq };
    handed = to;
    thread.post({ op: "fold", from: from.at, to: to.at, after: from.seq, lastSeq: to.seq }, (failed) => {
      if (failed) {
        handed = committed;
        arm(RETRY_MS);
      } else {
        committed = to;
        // Under steady load the journal is never all committed at a batch's end; past the limit,
        // the rows that came during the batch are folded here, so that it can be emptied.
        if (file.size >= JOURNAL_LIMIT_BYTES) foldHere();
        if (waiting() > 0) arm(waiting() >= maxPending ? 0 : delayMs);
      }
      truncateIfFolded();
    });
  }

  /** Copies rows to the end of the journal; throws (nothing written) if there was no room for them. */
  const writeRows = (rows: T[]) => {
    let text = "";
    // Each line is a JournalLine, `{"q":<seq>,"p":[...]}`, written without building its object.
    for (let i = 0; i < rows.length; i++) text += `{"q":${seq + 1 + i},"p":${JSON.stringify(o.params(rows[i]!))}}\n`;
    file.append(text);
    seq += rows.length;
    if (waiting() >= maxPending) arm(0);
    else if (!timer) arm(delayMs);
  };

  /** Rows waiting for the end of this turn (see appendInGroup), and whether the turn wrote one yet. */
  let group: { rows: T[]; promise: Promise<void>; resolve(): void; reject(e: unknown): void } | undefined;
  let turn = false;
  /** Writes the waiting rows (before any other row, so the journal keeps their order) and settles their promise. */
  const writeGroup = () => {
    const g = group;
    if (!g) return;
    group = undefined;
    try {
      writeRows(g.rows);
      g.resolve();
    } catch (e) {
      o.log.error("write-behind: rows not written", { path: o.path, rows: g.rows.length, error: String(e) });
      g.reject(e);
    }
  };
  function endTurn() {
    turn = false;
    writeGroup();
  }

  // Rows a crash left behind are folded before anything new is appended.
  flush();

  return {
    append(row) {
      if (closed) throw new Error("write-behind journal is closed");
      writeGroup();
      writeRows([row]);
    },
    appendInGroup(row) {
      if (closed) throw new Error("write-behind journal is closed");
      appended += 1;
      if (!turn) {
        // The turn's first row: written now, so a lone request waits for nothing. (No group waits
        // outside a turn: endTurn writes it.)
        turn = true;
        setImmediate(endTurn);
        writeRows([row]);
        return undefined;
      }
      grouped += 1;
      group ??= { rows: [], ...Promise.withResolvers<void>() };
      group.rows.push(row);
      return group.promise;
    },
    flush() {
      writeGroup();
      flush();
    },
    close() {
      if (closed) return;
      writeGroup();
      flush();
      closed = true;
      if (timer) clearTimeout(timer);
      thread?.close();
      file.close();
    },
  };
}
