// Messages between the write-behind journal (write-behind.ts) and its folding thread (fold-worker.ts).
export interface FoldSetup {
  op: "open";
  dbPath: string;
  /** Run once on the connection (durability, foreign keys, busy timeout). */
  pragmas: string[];
  /** Inserts one row; its `?` take a row's parameters. */
  rowSql: string;
  /** Records the last folded sequence number: `?` takes it. */
  markSql: string;
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

export type FoldReply = { op: "folded"; skipped: number; firstError?: string } | { op: "failed"; error: string } | { op: "closed" };
