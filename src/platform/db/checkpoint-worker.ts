// The checkpointer's thread: copies the WAL back into the database file (PASSIVE: never waits for
// or blocks Hearth's readers and writers), so the fsync of that copy never stalls the event loop.
import { Database } from "bun:sqlite";

declare const self: Worker;

const INTERVAL_MS = 250;
let db: Database | undefined;
let timer: ReturnType<typeof setInterval> | undefined;

self.onmessage = (ev: MessageEvent<{ op: "start"; path: string } | { op: "stop" }>) => {
  if (ev.data.op === "start") {
    db = new Database(ev.data.path);
    db.exec("PRAGMA busy_timeout = 0");
    const checkpoint = () => {
      try {
        const r = db!.query<{ busy: number; log: number; checkpointed: number }, []>("PRAGMA wal_checkpoint(PASSIVE)").get();
        self.postMessage({ op: "checkpointed", ...r });
      } catch (e) {
        self.postMessage({ op: "failed", error: String(e) });
      }
    };
    checkpoint();
    timer = setInterval(checkpoint, INTERVAL_MS);
  } else {
    if (timer) clearInterval(timer);
    // Quiet for a while: give the WAL's disk space back (it is reused, not truncated, while busy).
    // TRUNCATE holds off writers for its few ms; without waiting (busy_timeout 0) it simply fails
    // when a reader or writer is in the way, and the next quiet stop tries again.
    try {
      db?.query("PRAGMA wal_checkpoint(TRUNCATE)").get();
    } catch {}
    db?.close();
    self.postMessage({ op: "stopped" });
  }
};
