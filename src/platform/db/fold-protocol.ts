// The one fold of journaled rows into SQLite, and the messages between the write-behind journal
// (write-behind.ts) and its folding thread (fold-worker.ts). Both fold through `preparedFold`, so a
// batch folded in place and one folded by the thread are the same statements in one transaction.
import type { Database, SQLQueryBindings } from "bun:sqlite";

export interface FoldSql {
  /** Inserts one row; its `?` take a row's parameters. */
  rowSql: string;
  /** Records the batch's last sequence number (`?`), committed with its rows. */
  markSql: string;
}

export interface Folded {
  /** Rows the database refused (a foreign key whose parent was deleted meanwhile); the others went in. */
  skipped: number;
  firstError?: string;
}

/** Prepares the fold on a connection: each call commits `rows` and `lastSeq` in one transaction. */
export function preparedFold(db: Database, sql: FoldSql): (rows: SQLQueryBindings[][], lastSeq: number) => Folded {
  const insert = db.prepare(sql.rowSql);
  const mark = db.prepare(sql.markSql);
  return db.transaction((rows: SQLQueryBindings[][], lastSeq: number): Folded => {
    const folded: Folded = { skipped: 0 };
    for (const row of rows) {
      try {
        insert.run(...row);
      } catch (e) {
        folded.skipped += 1;
        folded.firstError ??= String(e);
      }
    }
    mark.run(lastSeq);
    return folded;
  });
}

export interface FoldSetup extends FoldSql {
  op: "open";
  dbPath: string;
  /** Run once on the connection (durability, foreign keys, busy timeout). */
  pragmas: string[];
  /** A shared Int32 the thread sets to IDLE or FAILED after each batch (and wakes waiters on). */
  state: SharedArrayBuffer;
}

export interface FoldBatch {
  op: "fold";
  /** The rows' parameters as JSON (one string crosses threads far cheaper than a structured clone of arrays). */
  rows: string;
  lastSeq: number;
}

/** Index 0 of the shared state. */
export const FOLD_IDLE = 0;
export const FOLD_BUSY = 1;
export const FOLD_FAILED = 2;

export type FoldReply = ({ op: "folded" } & Folded) | { op: "failed"; error: string } | { op: "closed" };
