// The parts list (platform/parts.ts): started in order, stopped in reverse and one at a time, checks
// reported in list order; and Hearth's own list stops the way a shutdown needs.
import { describe, expect, test } from "bun:test";
import { checkParts, startParts, stopParts, type Part } from "../../src/platform/parts";
import { createHarness } from "../support/harness";

describe("parts", () => {
  test("start runs in list order; stop in reverse, each stop awaited before the next begins", async () => {
    const log: string[] = [];
    const part = (name: string, slowStop = false): Part => ({
      name,
      start: () => void log.push(`start ${name}`),
      stop: async () => {
        log.push(`stop ${name}`);
        if (slowStop) await Bun.sleep(20);
        log.push(`stopped ${name}`);
      },
    });
    const parts = [part("database"), part("jobs", true), { name: "checks only" }, part("engine", true)];
    startParts(parts);
    await stopParts(parts);
    expect(log).toEqual(["start database", "start jobs", "start engine", "stop engine", "stopped engine", "stop jobs", "stopped jobs", "stop database", "stopped database"]);
  });

  test("checks are asked at once and reported in list order; one that throws is unavailable with its message", async () => {
    let inFlight = 0;
    let most = 0;
    const slow = (status: "ok" | "loading") => async () => {
      most = Math.max(most, ++inFlight);
      await Bun.sleep(20);
      inFlight--;
      return { status };
    };
    const parts: Part[] = [
      { name: "a", checks: { database: slow("ok") } },
      { name: "b" },
      { name: "c", checks: { vectors: slow("loading"), embedder: () => { throw new Error("model missing"); } } },
    ];
    const report = await checkParts(parts);
    expect(Object.keys(report)).toEqual(["database", "vectors", "embedder"]);
    expect(report).toEqual({ database: { status: "ok" }, vectors: { status: "loading" }, embedder: { status: "unavailable", reason: "model missing" } });
    expect(most).toBe(2);
  });

  test("Hearth's /health lists DESIGN's five checks in its order; a stop leaves every acknowledged token use in the table", async () => {
    const h = await createHarness();
    const health = await h.call("GET", "/health");
    expect(Object.keys(health.body.checks)).toEqual(["database", "vectors", "embedder", "transcriber", "llm"]);
    const jwt = await h.login();
    const products = await h.call("GET", "/api/products", { token: jwt });
    const created = await h.call("POST", "/api/api-tokens", { token: jwt, body: { product_id: products.body.data[0].id, token_name: "stop" } });
    for (let i = 0; i < 5; i++) expect((await h.call("GET", "/api/api-token/auth/validate", { headers: { "x-api-token": created.body.data.token } })).status).toBe(200);
    // The token journal is folded and closed by the last part to stop; the database is still open then.
    await h.services.stop();
    const rows = h.services.storage.sqlite.query("SELECT count(*) AS n FROM api_token_audit_logs WHERE token_id = ? AND action = 'used'").get(created.body.data.id) as { n: number };
    expect(rows.n).toBe(5);
    await h.close();
  });
});
