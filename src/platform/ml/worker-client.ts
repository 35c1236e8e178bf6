// Request/response over a Bun Worker: ids, transferable results, errors as Errors, a fresh
// worker after a crash (pending calls fail; the next call starts a new one), and requests served
// in turns between lanes.
import { createLaneQueue } from "./lane-queue";

export interface WorkerRequest {
  id: number;
  op: string;
  args: unknown;
  /** Requests of different lanes are served in turns; one lane's are served in order. */
  lane?: string;
}

/** A failure carries the HTTP status and code of an error that has them (a 413 from a decoder), so the caller can answer it as is. */
export type WorkerReply = { id: number; ok: true; result: unknown } | { id: number; ok: false; error: string; status?: number; code?: string };

/** An error thrown by a worker's handler, with its status and code when it had them. */
export class WorkerError extends Error {
  constructor(
    message: string,
    readonly status?: number,
    readonly code?: string,
  ) {
    super(message);
  }
}

export function createWorkerClient(url: URL | string, init: unknown) {
  let worker: Worker | undefined;
  let nextId = 1;
  const pending = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();

  const failAll = (message: string) => {
    for (const p of pending.values()) p.reject(new Error(message));
    pending.clear();
  };

  const start = () => {
    const w = new Worker(url, { smol: false });
    w.onmessage = (ev: MessageEvent<WorkerReply>) => {
      const p = pending.get(ev.data.id);
      if (!p) return;
      pending.delete(ev.data.id);
      if (ev.data.ok) p.resolve(ev.data.result);
      else p.reject(new WorkerError(ev.data.error, ev.data.status, ev.data.code));
    };
    w.onerror = (ev) => {
      failAll(`inference worker failed: ${ev.message}`);
      worker = undefined;
      w.terminate();
    };
    w.addEventListener("close", () => {
      if (worker === w) worker = undefined;
      failAll("inference worker stopped");
    });
    w.postMessage({ id: 0, op: "init", args: init } satisfies WorkerRequest);
    return w;
  };

  return {
    /** `lane` names whose turn the request waits for (a workspace): lanes take turns in the worker. */
    call<T>(op: string, args: unknown, transfer: ArrayBuffer[] = [], lane?: string): Promise<T> {
      worker ??= start();
      const id = nextId++;
      return new Promise<T>((resolve, reject) => {
        pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
        worker!.postMessage({ id, op, args, ...(lane === undefined ? {} : { lane }) } satisfies WorkerRequest, transfer);
      });
    },
    /**
     * Stops the worker once what it is doing has settled (at most `graceMs`): terminating it while
     * ONNX Runtime creates a session aborts the whole process (a native exception in a dying thread).
     * The worker answers `quiesce` after the request in progress and then starts no other.
     */
    async stop(graceMs = 10_000) {
      const w = worker;
      if (w) {
        const id = nextId++;
        const settled = new Promise<void>((resolve) => pending.set(id, { resolve: () => resolve(), reject: () => resolve() }));
        w.postMessage({ id, op: "quiesce", args: null } satisfies WorkerRequest);
        await Promise.race([settled, Bun.sleep(graceMs)]);
      }
      worker = undefined;
      failAll("inference worker stopped");
      w?.terminate();
    },
  };
}

export type WorkerClient = ReturnType<typeof createWorkerClient>;

/**
 * The worker side: answers requests with the handlers given; `init` arrives first. `status` is
 * answered as soon as it arrives, outside the turns. `quiesce` is served before any waiting request and, once answered (after the worker's own `quiesce` handler,
 * if any), the worker takes no more work: it is about to be terminated.
 */
export function serveWorker(handlers: Record<string, (args: any) => Promise<unknown> | unknown>) {
  const queue = createLaneQueue<WorkerRequest>();
  let busy = false;
  /** The `quiesce` request, once it came: answered after the request in progress, then nothing more. */
  let stopping: WorkerRequest | undefined;

  const answer = async (req: WorkerRequest, handler = handlers[req.op]) => {
    try {
      if (!handler) throw new Error(`unknown operation ${req.op}`);
      const result = await handler(req.args);
      const transfer = transferablesOf(result);
      postMessage({ id: req.id, ok: true, result } satisfies WorkerReply, transfer);
    } catch (e) {
      const { status, code } = (e ?? {}) as { status?: unknown; code?: unknown };
      postMessage({
        id: req.id,
        ok: false,
        error: e instanceof Error ? e.message : String(e),
        ...(typeof status === "number" && typeof code === "string" ? { status, code } : {}),
      } satisfies WorkerReply);
    }
  };

  // One request at a time: inference is CPU-bound, and ONNX Runtime already uses both cores.
  const drain = async () => {
    if (busy) return;
    busy = true;
    for (;;) {
      if (stopping) {
        queue.clear();
        await answer(stopping, handlers.quiesce ?? (() => null));
        return; // still busy: nothing runs after this
      }
      const req = queue.shift();
      if (!req) break;
      await answer(req);
      // A turn of the event loop: messages that came during that request are queued before the next pick.
      await new Promise((resolve) => setImmediate(resolve));
    }
    busy = false;
  };
  (globalThis as unknown as { onmessage: (ev: MessageEvent<WorkerRequest>) => void }).onmessage = (ev) => {
    // `status` only reads the worker's state: answered at once, not after the request in progress
    // (a model load, a batch), which /health and every search would otherwise wait for.
    if (ev.data.op === "status" && !stopping) return void answer(ev.data);
    if (ev.data.op === "quiesce") stopping = ev.data;
    else if (!stopping) queue.push(ev.data.lane ?? "", ev.data);
    void drain();
  };
}

function transferablesOf(value: unknown): ArrayBuffer[] {
  if (value instanceof Float32Array) return [value.buffer as ArrayBuffer];
  if (value && typeof value === "object") {
    const out: ArrayBuffer[] = [];
    for (const v of Object.values(value)) if (v instanceof Float32Array) out.push(v.buffer as ArrayBuffer);
    return out;
  }
  return [];
}
