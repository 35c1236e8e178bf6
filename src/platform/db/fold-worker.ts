// The write-behind journal's thread: commits batches of journaled rows into SQLite (one
// transaction a batch, with the batch's last sequence number), so the B-tree inserts, the WAL
// writes and their page faults are not in any request's path. The event loop waits for it only
// before reading the rows or writing after them (write-behind.ts, `flush`).
import { Database, type SQLQueryBindings } from "bun:sqlite";
import { FOLD_FAILED, FOLD_IDLE, type FoldBatch, type FoldReply, type FoldSetup } from "./fold-protocol";

declare const self: Worker;

let db: Database | undefined;
let state: Int32Array | undefined;
let fold: ((batch: FoldBatch) => number) | undefined;
let firstError: string | undefined;

const finish = (value: number, reply: FoldReply) => {
  Atomics.store(state!, 0, value);
  Atomics.notify(state!, 0);
  self.postMessage(reply);
};

self.onmessage = (ev: MessageEvent<FoldSetup | FoldBatch | { op: "close" }>) => {
  const m = ev.data;
  if (m.op === "open") {
    db = new Database(m.dbPath);
    for (const p of m.pragmas) db.exec(p);
    state = new Int32Array(m.state);
    const insert = db.prepare(m.rowSql);
    const mark = db.prepare(m.markSql);
    fold = db.transaction((batch: FoldBatch) => {
      let skipped = 0;
      for (const row of JSON.parse(batch.rows) as SQLQueryBindings[][]) {
        try {
          insert.run(...row);
        } catch (e) {
          // A row whose parent was deleted meanwhile (foreign key): the others still go in.
          skipped += 1;
          firstError ??= String(e);
        }
      }
      mark.run(batch.lastSeq);
      return skipped;
    });
  } else if (m.op === "fold") {
    firstError = undefined;
    try {
      const skipped = fold!(m);
      finish(FOLD_IDLE, { op: "folded", skipped, firstError });
    } catch (e) {
      finish(FOLD_FAILED, { op: "failed", error: String(e) });
    }
  } else {
    db?.close();
    self.postMessage({ op: "closed" } satisfies FoldReply);
  }
};
