// The write-behind journal's thread: commits batches of journaled rows into SQLite (one
// transaction a batch, with the batch's last sequence number), so the B-tree inserts, the WAL
// writes and their page faults are not in any request's path. The event loop waits for it only
// before reading the rows or writing after them (write-behind.ts, `flush`).
import { Database, type SQLQueryBindings } from "bun:sqlite";
import { FOLD_FAILED, FOLD_IDLE, preparedFold, type FoldBatch, type FoldReply, type FoldSetup } from "./fold-protocol";

declare const self: Worker;

let db: Database | undefined;
let state: Int32Array | undefined;
let fold: ReturnType<typeof preparedFold> | undefined;

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
    fold = preparedFold(db, m);
  } else if (m.op === "fold") {
    try {
      finish(FOLD_IDLE, { op: "folded", ...fold!(JSON.parse(m.rows) as SQLQueryBindings[][], m.lastSeq) });
    } catch (e) {
      finish(FOLD_FAILED, { op: "failed", error: String(e) });
    }
  } else {
    db?.close();
    self.postMessage({ op: "closed" } satisfies FoldReply);
  }
};
