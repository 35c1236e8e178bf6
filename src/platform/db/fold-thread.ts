// The write-behind journal's folding thread, seen from the event loop (write-behind.ts): it starts
// fold-worker.ts at the first big batch, hands it one batch at a time, lets `flush` wait for the
// batch in flight, and stops it after a quiet minute.
import type { Logger } from "../log";
import { workerUrl } from "../native";
import { FOLD_BUSY, FOLD_FAILED, type FoldBatch, type Folded, type FoldReply, type FoldSetup, type FoldSql } from "./fold-protocol";

export interface FoldThreadOptions {
  /** Run on the thread's connection first (durability, foreign keys, busy timeout). */
  pragmas: string[];
  /** Batches at least this big go to the thread (smaller ones are folded in place). Default 32. */
  threadRows?: number;
  /** The thread is stopped after this long without a batch (ms). Default 60 s. */
  quietStopMs?: number;
  /**
   * Folds in place, not on the thread, while rows come in groups (requests overlap: the event loop
   * is saturated). For machines without a core to spare: there the thread competes with the event
   * loop for one, and the fold costs less in place than on the thread (see audit-log.ts).
   */
  inPlaceWhenBusy?: boolean;
}

export interface FoldThread {
  readonly threadRows: number;
  /** False once the thread could not run (batches are then folded in place). */
  usable(): boolean;
  /** Whether the thread is up (a small batch goes to it then, rather than starting it). */
  running(): boolean;
  inFlight(): boolean;
  /** Hands a batch to the thread; `done` runs when it is committed (false) or failed (true). */
  post(batch: FoldBatch, done: (failed: boolean) => void): void;
  /** Blocks until the batch in flight is settled (its `done` has run); false on timeout. */
  wait(ms: number): boolean;
  close(): void;
}

/** Where the thread folds from and into, and with what. */
export interface FoldThreadTarget {
  dbPath: string;
  journalPath: string;
  sql: FoldSql;
  log: Logger;
}

/** The thread that folds a write-behind journal's big batches; started at its first batch. */
export function foldThread(o: FoldThreadTarget, t: FoldThreadOptions, report: (folded: Folded) => void): FoldThread {
  const { log } = o;
  const url = workerUrl("platform/db/fold-worker.ts");
  const quietStopMs = t.quietStopMs ?? 60_000;
  const state = new Int32Array(new SharedArrayBuffer(4));
  let worker: Worker | undefined;
  let batch: { done: (failed: boolean) => void } | undefined;
  let quietTimer: ReturnType<typeof setTimeout> | undefined;
  let broken = false;

  /** Takes the finished batch off the books (from the reply or from a synchronous wait, whichever comes first). */
  const settle = () => {
    const finished = batch!;
    batch = undefined;
    finished.done(Atomics.load(state, 0) === FOLD_FAILED);
  };

  const stop = () => {
    if (!worker || batch) return;
    const w = worker;
    worker = undefined;
    w.postMessage({ op: "close" });
    // The thread closes its connection and is then ended; a process exit meanwhile loses nothing.
    w.addEventListener("message", (ev: MessageEvent<FoldReply>) => ev.data.op === "closed" && w.terminate());
  };

  const start = () => {
    const w = new Worker(url, { smol: true });
    w.onmessage = (ev: MessageEvent<FoldReply>) => {
      const r = ev.data;
      if (r.op === "failed") log.error("write-behind: rows not yet folded into the database", { path: o.journalPath, error: r.error });
      if (r.op === "folded") report(r);
      if (r.op !== "closed" && batch && worker === w) settle();
    };
    w.onerror = (ev) => {
      // The thread cannot run (or died): its batch counts as failed, and batches are folded in place from now on.
      log.error("write-behind: folding thread failed; folding on the event loop", { error: ev.message });
      broken = true;
      if (worker === w) worker = undefined;
      w.terminate();
      if (batch) {
        Atomics.store(state, 0, FOLD_FAILED);
        settle();
      }
    };
    w.unref();
    w.postMessage({ op: "open", dbPath: o.dbPath, journalPath: o.journalPath, pragmas: t.pragmas, ...o.sql, state: state.buffer as SharedArrayBuffer } satisfies FoldSetup);
    return w;
  };

  return {
    threadRows: t.threadRows ?? 32,
    usable: () => !broken,
    running: () => worker !== undefined,
    inFlight: () => batch !== undefined,
    post(message, done) {
      worker ??= start();
      batch = { done };
      Atomics.store(state, 0, FOLD_BUSY);
      worker.postMessage(message);
      if (quietTimer) clearTimeout(quietTimer);
      quietTimer = setTimeout(stop, quietStopMs);
      quietTimer.unref?.();
    },
    wait(ms) {
      if (!batch) return true;
      if (Atomics.wait(state, 0, FOLD_BUSY, ms) === "timed-out") return false;
      settle();
      return true;
    },
    close() {
      if (quietTimer) clearTimeout(quietTimer);
      stop();
    },
  };
}
