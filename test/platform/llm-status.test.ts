// The model server's status cache: one probe at a time per model, an older answer given at once
// while a new one is fetched, and forget() always wins over a probe that was already running.
import { describe, expect, test } from "bun:test";
import { manualClock } from "../../src/platform/clock";
import { STATUS_TTL_MS, statusCache, type LlmStatus } from "../../src/platform/llm/llm";

/** A probe the test answers by hand. */
function handProbe() {
  const calls: { model: string; answer: (s: LlmStatus) => void }[] = [];
  const probe = (model: string) => new Promise<LlmStatus>((resolve) => calls.push({ model, answer: resolve }));
  return { calls, probe };
}
const ok = (model: string, contextLength = 4096): LlmStatus => ({ state: "ok", model, contextLength });
const down = (model: string): LlmStatus => ({ state: "unavailable", model, reason: "down" });

describe("statusCache", () => {
  test("concurrent callers share one probe; its answer is kept for STATUS_TTL_MS", async () => {
    const clock = manualClock();
    const p = handProbe();
    const cache = statusCache(clock, p.probe);
    const waiting = [cache.get("m"), cache.get("m"), cache.get("m")];
    expect(p.calls).toHaveLength(1);
    p.calls[0]!.answer(ok("m"));
    expect(await Promise.all(waiting)).toEqual([ok("m"), ok("m"), ok("m")]);
    clock.advance(STATUS_TTL_MS - 1);
    expect(await cache.get("m")).toEqual(ok("m"));
    expect(p.calls).toHaveLength(1);
  });

  test("an older answer is given at once while one probe refreshes it", async () => {
    const clock = manualClock();
    const p = handProbe();
    const cache = statusCache(clock, p.probe);
    const first = cache.get("m");
    p.calls[0]!.answer(ok("m"));
    await first;
    clock.advance(STATUS_TTL_MS);
    expect(await cache.get("m")).toEqual(ok("m")); // not waiting for the probe it started
    expect(await cache.get("m")).toEqual(ok("m"));
    expect(p.calls).toHaveLength(2);
    p.calls[1]!.answer(down("m"));
    await Bun.sleep(0);
    expect(await cache.get("m")).toEqual(down("m"));
  });

  test("forget() while a probe runs: the next caller waits for a fresh probe, the old answer is not kept", async () => {
    const clock = manualClock();
    const p = handProbe();
    const cache = statusCache(clock, p.probe);
    const stale = cache.get("m");
    cache.forget("m");
    const fresh = cache.get("m");
    expect(p.calls).toHaveLength(2);
    p.calls[0]!.answer(ok("m", 1));
    expect(await stale).toEqual(ok("m", 1));
    p.calls[1]!.answer(down("m"));
    expect(await fresh).toEqual(down("m"));
    expect(await cache.get("m")).toEqual(down("m"));
    expect(p.calls).toHaveLength(2);
  });

  test("peek() gives the known answer without waiting or probing, refreshes an old one behind it, and knows nothing after forget()", async () => {
    const clock = manualClock();
    const p = handProbe();
    const cache = statusCache(clock, p.probe);
    expect(cache.peek("m")).toBeUndefined();
    expect(p.calls).toHaveLength(0); // a peek never starts the first probe (/health races that one)
    const first = cache.get("m");
    expect(cache.peek("m")).toBeUndefined(); // probing, nothing known yet
    p.calls[0]!.answer(ok("m"));
    await first;
    expect(cache.peek("m")).toEqual(ok("m"));
    expect(p.calls).toHaveLength(1);
    clock.advance(STATUS_TTL_MS);
    expect(cache.peek("m")).toEqual(ok("m")); // the old answer, at once
    expect(p.calls).toHaveLength(2); // and one refresh behind it
    p.calls[1]!.answer(down("m"));
    await Bun.sleep(0);
    expect(cache.peek("m")).toEqual(down("m"));
    cache.forget("m");
    expect(cache.peek("m")).toBeUndefined();
  });
});
