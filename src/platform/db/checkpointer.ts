// WAL checkpoints off the event loop. SQLite's automatic checkpoint runs inside the commit that
// crosses 1,000 WAL pages, on whatever connection made it, and ends in an fsync of the database
// file: under steady writes (a token's audit rows, an ingest) one request in a few hundred waited
// milliseconds for it. Here the connections' own checkpoint starts only at a far larger WAL (a
// fallback), and a worker thread checkpoints instead while the WAL grows. The worker costs ~7 MB,
// so it is started when the WAL passes the usual threshold and stopped after a quiet minute: an
// idle Hearth does not hold it.
import type { Database } from "bun:sqlite";
import { statSync } from "node:fs";
import type { Logger } from "../log";
import { workerUrl } from "../native";
import { storageFailure, writeFailures } from "./write-failures";

/** WAL pages at which a connection checkpoints by itself (the worker normally got there first). */
export const FALLBACK_AUTOCHECKPOINT_PAGES = 16_000;
const START_BYTES = 4 * 1024 * 1024; // SQLite's own default: 1,000 pages of 4 KB
/**
 * The WAL size a writer truncates the file to when it starts it over after a checkpoint. The
 * truncate runs in that writer's commit, on the event loop, and waits for the WAL's pages still
 * being written back (the group commit's fdatasync): 1.5-6 ms per 2 MB upload with a 1 MB limit.
 * Above the largest upload, so the file is reused instead; the worker truncates it when it stops.
 */
const JOURNAL_LIMIT_BYTES = 64 * 1024 * 1024;
const WATCH_MS = 500;
const QUIET_STOP_MS = 60_000;

export interface Checkpointer {
  /** Applies the fallback threshold to a connection (every connection of the server). */
  adopt(sqlite: Database): void;
  stop(): Promise<void>;
  /** Whether the worker is running (tests). */
  running(): boolean;
}

export interface CheckpointerOptions {
  /** How often the WAL is looked at (ms). */
  watchMs?: number;
  /** The worker stops after the WAL is unchanged this long (ms). */
  quietStopMs?: number;
}

type WorkerReport = { op: "checkpointed" | "failed" | "stopped"; error?: string };

/**
 * What the worker's reports log. It tries every 250 ms, so a full disk is logged when checkpoints
 * start failing and when one works again, not four times a second (~345,000 lines a day).
 */
export function checkpointReports(log: Pick<Logger, "warn">): (report: WorkerReport) => void {
  let failures = 0;
  return ({ op, error }) => {
    if (op === "failed") {
      if (failures++ === 0) log.warn("checkpoint failed; retrying, logged again when one works", { error });
      if (storageFailure({ message: error })) writeFailures.note({ message: error });
    } else if (op === "checkpointed" && failures > 0) {
      log.warn("checkpoint works again", { failed_attempts: failures });
      failures = 0;
    }
  };
}

export function startCheckpointer(dbPath: string, log: Pick<Logger, "warn">, o: CheckpointerOptions = {}): Checkpointer {
  const watchMs = o.watchMs ?? WATCH_MS;
  const quietStopMs = o.quietStopMs ?? QUIET_STOP_MS;
  const walPath = `${dbPath}-wal`;
  const url = workerUrl("platform/db/checkpoint-worker.ts");
  let worker: Worker | undefined;
  let quietSince = 0;

  const wal = () => {
    try {
      const st = statSync(walPath);
      return { bytes: st.size, changed: st.mtimeMs };
    } catch {
      return { bytes: 0, changed: 0 };
    }
  };

  const report = checkpointReports(log);

  const startWorker = () => {
    const w = new Worker(url, { smol: true });
    w.onmessage = (ev: MessageEvent<WorkerReport>) => report(ev.data);
    w.onerror = (ev) => {
      log.warn("checkpoint worker failed; connections checkpoint by themselves", { error: ev.message });
      if (worker === w) worker = undefined;
    };
    w.postMessage({ op: "start", path: dbPath });
    worker = w;
  };

  const stopWorker = async () => {
    const w = worker;
    worker = undefined;
    if (!w) return;
    await new Promise<void>((resolve) => {
      const done = setTimeout(resolve, 2_000);
      w.addEventListener("message", (ev: MessageEvent<{ op: string }>) => {
        if (ev.data.op === "stopped") {
          clearTimeout(done);
          resolve();
        }
      });
      w.postMessage({ op: "stop" });
    });
    w.terminate();
  };

  // Started when the WAL has grown past SQLite's usual threshold and is being written; stopped
  // when nothing has been written to it for a minute (it truncates the WAL as it stops). If it
  // could not (a reader in the way), the file keeps its size until a writer truncates it past
  // JOURNAL_LIMIT_BYTES (adopt), so size alone would start the worker again right after a quiet
  // stop: it must also have changed within that minute.
  let lastChange = 0;
  const watch = setInterval(() => {
    const { bytes, changed } = wal();
    const now = performance.now();
    if (changed !== lastChange) quietSince = now;
    lastChange = changed;
    const quiet = now - quietSince > quietStopMs;
    if (!worker) {
      if (bytes >= START_BYTES && !quiet) startWorker();
    } else if (quiet) {
      void stopWorker();
    }
  }, watchMs);
  watch.unref?.();

  return {
    adopt(sqlite) {
      sqlite.exec(`PRAGMA wal_autocheckpoint = ${FALLBACK_AUTOCHECKPOINT_PAGES}`);
      sqlite.exec(`PRAGMA journal_size_limit = ${JOURNAL_LIMIT_BYTES}`);
    },
    async stop() {
      clearInterval(watch);
      await stopWorker();
    },
    running: () => worker !== undefined,
  };
}
