// Checks that a delete drains its rows in slices with requests answered in between (platform/db/drain.ts).
import { expect } from "bun:test";
import type { Harness } from "./harness";

/**
 * Runs the delete `request` and, between turns of the event loop while it runs, asks /health and
 * counts what is left: true when /health was answered and part of the rows was seen gone before
 * the rest (a single statement would take them all in one turn).
 */
export async function drainedInSlices(h: Harness, request: Promise<{ status: number }>, left: () => number, status = 200) {
  const before = left();
  let done = false;
  const finished = request.then((r) => {
    done = true;
    return r;
  });
  const health = await h.call("GET", "/health");
  expect(health.status).toBe(200);
  const healthFirst = !done;
  let partly = false;
  while (!done) {
    const n = left();
    if (n > 0 && n < before) partly = true;
    await new Promise((r) => setImmediate(r));
  }
  expect((await finished).status).toBe(status);
  expect(left()).toBe(0);
  return healthFirst && partly;
}
