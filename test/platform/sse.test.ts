// Server-sent events: heartbeats while a producer is quiet, failures as final events, and the
// producer's signal aborted when the client goes away.
import { describe, expect, test } from "bun:test";
import { sseResponse, type SseEvent } from "../../src/platform/http/sse";
import { readSse } from "../support/sse";

const onError = (e: unknown): SseEvent[] => [
  { event: "error", data: { error: "Failed", message: (e as Error).message } },
  { event: "done", data: {} },
];

describe("sseResponse", () => {
  test("a quiet producer still sends heartbeat comments; events carry increasing ids", async () => {
    const res = sseResponse(
      new Request("http://x/"),
      async function* () {
        yield { event: "first", data: { n: 1 } };
        await Bun.sleep(130);
        yield { event: "second", data: { n: 2 } };
      },
      onError,
      { heartbeatMs: 25 },
    );
    const r = readSse(res);
    await r.ended;
    expect(r.events).toEqual([
      { id: "1", event: "first", data: { n: 1 } },
      { id: "2", event: "second", data: { n: 2 } },
    ]);
    expect(r.comments.length).toBeGreaterThanOrEqual(3);
    expect(r.comments.every((c) => c.trim() === "keep-alive")).toBe(true);
  });

  test("a producer that throws ends with the error events, not a dropped stream", async () => {
    const res = sseResponse(
      new Request("http://x/"),
      async function* () {
        yield { event: "first", data: {} };
        throw new Error("boom");
      },
      onError,
    );
    const r = readSse(res);
    await r.ended;
    expect(r.events.map((e) => [e.event, e.data])).toEqual([
      ["first", {}],
      ["error", { error: "Failed", message: "boom" }],
      ["done", {}],
    ]);
  });

  test("cancelling the stream aborts the producer's signal", async () => {
    let aborted = false;
    const res = sseResponse(
      new Request("http://x/"),
      async function* (signal) {
        yield { event: "first", data: {} };
        await new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
        aborted = signal.aborted;
      },
      onError,
    );
    const reader = res.body!.getReader();
    await reader.read();
    await reader.cancel();
    await Bun.sleep(10);
    expect(aborted).toBe(true);
  });
});
