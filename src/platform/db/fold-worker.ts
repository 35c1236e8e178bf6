// The write-behind journal's thread: reads batches of journaled rows from the journal file and
// commits them into SQLite (one transaction a batch, with the batch's last sequence number), so
// parsing, the B-tree inserts, the WAL writes and their page faults are not in any request's path.
// The event loop waits for it only before reading the rows or writing after them (write-behind.ts,
// `flush`).
import { Database } from "bun:sqlite";
import { closeSync, openSync } from "node:fs";
import { FOLD_FAILED, FOLD_IDLE, journalRows, preparedFold, readJournal, type FoldBatch, type FoldReply, type FoldSetup } from "./fold-protocol";

declare const self: Worker;

let db: Database | undefined;
let state: Int32Array | undefined;
let fold: ReturnType<typeof preparedFold> | undefined;
let journal: number | undefined;

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
    journal = openSync(m.journalPath, "r");
  } else if (m.op === "fold") {
    try {
      const { rows } = journalRows(readJournal(journal!, m.from, m.to), m.after);
      finish(FOLD_IDLE, { op: "folded", ...fold!(rows, m.lastSeq) });
    } catch (e) {
      finish(FOLD_FAILED, { op: "failed", error: String(e) });
    }
  } else {
    db?.close();
    if (journal !== undefined) closeSync(journal);
    self.postMessage({ op: "closed" } satisfies FoldReply);
  }
};
