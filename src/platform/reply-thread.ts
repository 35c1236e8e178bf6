// A worker thread that answers each message by its id (the parser launcher, the form parser).
// Started at the first call, it holds the process open only while calls are in flight; if it fails
// or stops, the calls in flight fail and the next call starts a new one. The inference worker has
// a client of its own (ml/worker-client.ts: a start-up message, lanes, quiescing).

/** `url`: the thread's module (native.ts workerUrl); `name` says which thread failed in errors. */
export function replyThread<Reply extends { id: number }>(url: string | URL, name: string) {
  let thread: Worker | undefined;
  let nextId = 1;
  const pending = new Map<number, { resolve(reply: Reply): void; reject(e: Error): void }>();

  const settle = (id: number) => {
    const p = pending.get(id);
    pending.delete(id);
    if (pending.size === 0) thread?.unref();
    return p;
  };

  const start = () => {
    const w = new Worker(url, { smol: true });
    const failAll = (why: string) => {
      if (thread === w) thread = undefined;
      for (const p of pending.values()) p.reject(new Error(why));
      pending.clear();
    };
    w.onmessage = (ev: MessageEvent<Reply>) => settle(ev.data.id)?.resolve(ev.data);
    w.onerror = (ev) => {
      failAll(`${name} failed: ${ev.message}`);
      w.terminate();
    };
    w.addEventListener("close", () => failAll(`${name} stopped`));
    return (thread = w);
  };

  return {
    /** Sends the message made for a new call id; `reply` is the thread's answer with that id. */
    call(message: (id: number) => unknown, transfer: ArrayBuffer[] = []): { id: number; reply: Promise<Reply> } {
      const w = thread ?? start();
      const id = nextId++;
      const reply = new Promise<Reply>((resolve, reject) => pending.set(id, { resolve, reject }));
      w.ref();
      w.postMessage(message(id), transfer);
      return { id, reply };
    },
    /** Sends a message about a call in flight (an abort), if the thread is there. */
    post(message: unknown): void {
      thread?.postMessage(message);
    },
    /** Gives up on call `id`: its reply fails with `error`, and an answer that still comes is dropped. */
    abandon(id: number, error: Error): void {
      settle(id)?.reject(error);
    },
  };
}

/** Whether `bytes` spans a whole ArrayBuffer of its own, which can be moved to a thread instead of copied. */
export const ownsBuffer = (bytes: Uint8Array): boolean =>
  bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength && bytes.buffer instanceof ArrayBuffer;
