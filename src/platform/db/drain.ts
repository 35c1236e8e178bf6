// Deleting many rows in one statement holds the event loop for as long as it takes, every other
// request waiting: ~40 µs a knowledge chunk (its keyword row, vector and epoch go by trigger),
// ~50 µs a workflow execution with its node runs and events. A drainer deletes them a slice per
// commit with requests let in between, so the delete that follows (a cascade) has little left.
import type { Database, SQLQueryBindings } from "bun:sqlite";

/** Rows per commit: ~10 ms of deleting knowledge chunks. */
export const SLICE_ROWS = 250;

/** Lets the requests waiting on the event loop in. */
export const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Deletes the rows of `table` matching `where` (with `?` parameters), SLICE_ROWS per commit and a
 * turn of the event loop apart, until none is left; resolves with how many it deleted.
 */
export function drainer<P extends SQLQueryBindings[]>(sqlite: Database, table: string, where: string): (...params: P) => Promise<number> {
  const slice = sqlite.query(`DELETE FROM ${table} WHERE rowid IN (SELECT rowid FROM ${table} WHERE ${where} LIMIT ${SLICE_ROWS})`);
  return async (...params) => {
    let deleted = 0;
    for (let n = slice.run(...params).changes; n > 0; n = slice.run(...params).changes) {
      deleted += n;
      await nextTurn();
    }
    return deleted;
  };
}
