// The threads Hearth asks by message (the parser launcher, the form parser): answers by id, a
// call that never gets one can be given up, and a thread that dies fails what was in flight and is
// started again at the next call.
import { expect, test } from "bun:test";
import { ownsBuffer, replyThread } from "../../src/platform/reply-thread";

type Reply = { id: number; value: unknown };
const url = new URL("../support/answering-thread.ts", import.meta.url);

test("answers come back by id, also out of order, and moved buffers arrive whole", async () => {
  const thread = replyThread<Reply>(url, "the test thread");
  const bytes = new Uint8Array([1, 2, 3]);
  expect(ownsBuffer(bytes)).toBe(true);
  expect(ownsBuffer(bytes.subarray(1))).toBe(false);
  const calls = [1, 2, 3].map((n) => thread.call((id) => ({ id, op: "echo", value: n })));
  const moved = thread.call((id) => ({ id, op: "echo", value: bytes.buffer }), [bytes.buffer]);
  expect(bytes.byteLength).toBe(0); // moved, not copied
  expect((await Promise.all(calls.map((c) => c.reply))).map((r) => r.value)).toEqual([1, 2, 3]);
  expect(new Uint8Array((await moved.reply).value as ArrayBuffer)).toEqual(new Uint8Array([1, 2, 3]));
});

test("a call that never gets its answer is given up with the caller's error", async () => {
  const thread = replyThread<Reply>(url, "the test thread");
  const silent = thread.call((id) => ({ id, op: "silent" }));
  thread.abandon(silent.id, new Error("no answer in time"));
  await expect(silent.reply).rejects.toThrow("no answer in time");
  expect((await thread.call((id) => ({ id, op: "echo", value: "still here" })).reply).value).toBe("still here");
});

test("a thread that dies fails the calls in flight; the next call starts a new one", async () => {
  const thread = replyThread<Reply>(url, "the test thread");
  const waiting = thread.call((id) => ({ id, op: "silent" }));
  const crash = thread.call((id) => ({ id, op: "crash" }));
  const outcomes = await Promise.all([crash.reply, waiting.reply].map((p) => p.then(() => "answered", (e: Error) => e.message)));
  expect(outcomes).toEqual(["the test thread stopped", "the test thread stopped"]);
  expect((await thread.call((id) => ({ id, op: "echo", value: "again" })).reply).value).toBe("again");
});
