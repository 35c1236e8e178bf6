// The inference worker serves lanes (workspaces) in turns: one lane's backlog holds back another
// lane's request by at most the request in progress.
import { afterEach, describe, expect, test } from "bun:test";
import { createLaneQueue } from "../../src/platform/ml/lane-queue";
import { createWorkerClient, type WorkerClient } from "../../src/platform/ml/worker-client";

describe("lane queue", () => {
  test("takes turns between lanes, in order within each", () => {
    const q = createLaneQueue<string>();
    for (const x of ["a1", "a2", "a3", "a4"]) q.push("a", x);
    expect(q.shift()).toBe("a1");
    q.push("b", "b1");
    q.push("b", "b2");
    q.push("c", "c1");
    // b and c were never served: they go before a's second; then turns.
    expect([q.shift(), q.shift(), q.shift(), q.shift(), q.shift(), q.shift(), q.shift()]).toEqual(["b1", "c1", "a2", "b2", "a3", "a4", undefined]);
    expect(q.size).toBe(0);
  });

  test("a lane arriving after another was served waits for that one only", () => {
    const q = createLaneQueue<string>();
    q.push("a", "a1");
    q.push("a", "a2");
    expect(q.shift()).toBe("a1");
    q.push("b", "b1");
    expect(q.shift()).toBe("b1");
    q.push("b", "b2");
    // a was served before b: a's turn.
    expect([q.shift(), q.shift()]).toEqual(["a2", "b2"]);
  });

  test("clear hands back everything waiting", () => {
    const q = createLaneQueue<number>();
    q.push("a", 1);
    q.push("b", 2);
    expect(q.clear().sort()).toEqual([1, 2]);
    expect(q.size).toBe(0);
    expect(q.shift()).toBeUndefined();
  });
});

describe("worker lanes", () => {
  let client: WorkerClient | undefined;
  afterEach(async () => void (await client?.stop(1000)));

  test("a request of lane B is served right after the one in progress, before A's backlog", async () => {
    client = createWorkerClient(new URL("../support/lane-worker.ts", import.meta.url), {});
    const order: string[] = [];
    const track = (p: Promise<string>) => p.then((label) => void order.push(label));
    const a = Array.from({ length: 6 }, (_, i) => track(client!.call<string>("work", { label: `a${i}`, ms: 30 }, [], "A")));
    await Bun.sleep(10); // a0 is running
    const b = track(client.call<string>("work", { label: "b0", ms: 1 }, [], "B"));
    await Promise.all([...a, b]);
    expect(order).toEqual(["a0", "b0", "a1", "a2", "a3", "a4", "a5"]);
  });

  test("requests without a lane keep their order", async () => {
    client = createWorkerClient(new URL("../support/lane-worker.ts", import.meta.url), {});
    await Promise.all(["x", "y", "z"].map((label) => client!.call("work", { label, ms: 1 })));
    expect(await client.call<string[]>("log", null)).toEqual(["x", "y", "z"]);
  });

  test("stop waits for the request in progress and drops the waiting ones", async () => {
    client = createWorkerClient(new URL("../support/lane-worker.ts", import.meta.url), {});
    const first = client.call<string>("work", { label: "first", ms: 100 }, [], "A");
    const rest = client.call<string>("work", { label: "second", ms: 100 }, [], "A");
    await Bun.sleep(20);
    const t0 = performance.now();
    await client.stop(5000);
    expect(performance.now() - t0).toBeLessThan(1000);
    expect(await first).toBe("first");
    expect(rest).rejects.toThrow("inference worker stopped");
    client = undefined;
  });

  test("status is answered while a request is in progress, not after it", async () => {
    client = createWorkerClient(new URL("../support/lane-worker.ts", import.meta.url), {});
    await client.call("status", null); // the worker is up
    const t0 = performance.now();
    const slow = client.call<string>("wait", { label: "load", ms: 1500 }, [], "A");
    const queued = client.call<string>("wait", { label: "next", ms: 10 }, [], "B");
    const status = await client.call<{ state: string; served: number }>("status", null);
    expect(performance.now() - t0).toBeLessThan(700);
    expect(status).toEqual({ state: "ok", served: 0 });
    expect(await Promise.all([slow, queued])).toEqual(["load", "next"]);
  }, 10_000);
});
