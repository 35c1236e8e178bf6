// A thread for reply-thread.test.ts: answers "echo" with its value, never answers "silent", and
// stops on "crash" (exits the thread, as a crash of its native code would end it).
declare const self: Worker;

self.onmessage = (ev: MessageEvent<{ id: number; op: "echo" | "silent" | "crash"; value?: unknown }>) => {
  const { id, op, value } = ev.data;
  if (op === "echo") postMessage({ id, value });
  if (op === "crash") process.exit(1); // ends this thread only
};
