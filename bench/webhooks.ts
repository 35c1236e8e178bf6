// Webhooks suite: inbound deliveries answered 200 (each stored with its execution, which then runs
// a transform node in the same process) per second at several connections, with latency p50/p99.
import { HttpConnection } from "./lib/http-client";
import { baseEnv, startServer, type RunningServer } from "./lib/servers";
import { openSession } from "./lib/hearth-api";
import { summarize } from "./lib/stats";
import { measurement, type MeasurementInput, type Suite, type SuiteContext } from "./lib/suite";
import { prepareTargets } from "./lib/targets";

const SUITE = "webhooks";
const CONCURRENCY = [1, 8, 32];
const WARMUP_MS = 1_000;
const DURATION_MS = 4_000;
const GOAL_PER_S = 500;
const PATH = "bench-intake-0001";
/** The same delivery to a trigger whose events filter drops it: stored, no execution (intake alone). */
const IGNORED_PATH = "bench-ignored-001";

/** One POST per delivery, built once; `i` makes each body (and its Idempotency-Key) distinct. */
function delivery(server: RunningServer, i: number, keyed: boolean, path = PATH): Buffer {
  const payload = Buffer.from(JSON.stringify({ event: "push", ref: "refs/heads/main", head_commit: { id: i.toString(16).padStart(40, "0"), message: `commit ${i}` } }));
  const lines = [`POST /api/webhook/${path} HTTP/1.1`, `Host: ${server.host}:${server.port}`, "Connection: keep-alive", "Content-Type: application/json", "User-Agent: hearth-bench", `Content-Length: ${payload.length}`];
  if (keyed) lines.push(`Idempotency-Key: bench-${crypto.randomUUID()}`);
  return Buffer.concat([Buffer.from(`${lines.join("\r\n")}\r\n\r\n`, "latin1"), payload]);
}

/** `concurrency` keep-alive connections, one delivery in flight each; every answer must be 200 accepted. */
async function intake(server: RunningServer, concurrency: number, keyed: boolean, path = PATH) {
  const conns = await Promise.all(Array.from({ length: concurrency }, () => HttpConnection.open(server.host, server.port)));
  let n = 0;
  try {
    const loop = async (conn: HttpConnection, until: number, samples: number[] | null) => {
      while (performance.now() < until) {
        const req = delivery(server, n++, keyed, path);
        const t0 = Bun.nanoseconds();
        const res = await conn.request(req);
        const ms = (Bun.nanoseconds() - t0) / 1e6;
        if (res.status !== 200 || !res.body.includes(path === PATH ? '"Delivery accepted"' : '"ignored"')) throw new Error(`expected 200 accepted, got ${res.status}: ${res.body.toString("utf8").slice(0, 300)}`);
        samples?.push(ms);
      }
    };
    const warmEnd = performance.now() + WARMUP_MS;
    await Promise.all(conns.map((c) => loop(c, warmEnd, null)));
    const samples: number[] = [];
    const start = performance.now();
    await Promise.all(conns.map((c) => loop(c, start + DURATION_MS, samples)));
    const seconds = (performance.now() - start) / 1000;
    return { concurrency, deliveries: samples.length, perSecond: samples.length / seconds, latency: summarize(samples) };
  } finally {
    for (const c of conns) c.close();
  }
}

async function run(ctx: SuiteContext) {
  const targets = await prepareTargets(ctx);
  const password = `bench-${crypto.randomUUID()}`;
  const hearth = await startServer({
    name: "hearth",
    cmd: [...targets.hearth, "serve", "--host", "127.0.0.1", "--port", "0"],
    env: baseEnv({ HEARTH_DATA_DIR: ctx.tmp, HEARTH_ADMIN_PASSWORD: password, HEARTH_RATE_LIMIT: "1000000", HEARTH_RATE_LIMIT_STRICT: "1000000", HEARTH_WEBHOOK_RATE_LIMIT: "1000000", HEARTH_OFFLINE: "1" }),
    cwd: ctx.root,
  });
  try {
    const session = await openSession(hearth, "admin@localhost", password);
    const graph = {
      nodes: [
        { id: "hook", type: "trigger.webhook", config: { path: PATH } },
        { id: "summary", type: "transform", config: { expression: "{ 'commit': input.body.head_commit.id, 'message': input.body.head_commit.message }" } },
      ],
      edges: [{ from: "hook", to: "summary" }],
    };
    const ignoring = { nodes: [{ id: "hook", type: "trigger.webhook", config: { path: IGNORED_PATH, events: ["release"] } }], edges: [] };
    for (const [name, g] of [["bench intake", graph], ["bench ignored", ignoring]] as const) {
      const created = await fetch(`${session.base}/api/workflow-base`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${session.jwt}` },
        body: JSON.stringify({ product_id: session.productId, name, graph: g }),
      });
      if (created.status !== 201) throw new Error(`creating the workflow answered ${created.status}: ${(await created.text()).slice(0, 300)}`);
    }

    const inputs: MeasurementInput[] = [];
    const details: unknown[] = [];
    // First, while no execution runs: the cost of intake alone (each delivery stored, none run).
    ctx.log("8 connections, every delivery filtered out by events (stored, no execution)");
    const alone = await intake(hearth, 8, false, IGNORED_PATH);
    inputs.push(
      { name: "deliveries/s to 200, 8 conn, filtered out (no execution)", unit: "/s", value: alone.perSecond, details: alone, digits: 0 },
      { name: "latency p99, 8 conn, filtered out", unit: "ms", value: alone.latency.p99, digits: 2 },
    );
    for (const c of CONCURRENCY) {
      ctx.log(`${c} connection(s), ${DURATION_MS / 1000} s`);
      const r = await intake(hearth, c, false);
      details.push(r);
      inputs.push(
        { name: `deliveries/s to 200, ${c} conn`, unit: "/s", value: r.perSecond, goal: c === 8 ? { on: "value", kind: "min", limit: GOAL_PER_S } : undefined, details: r, digits: 0 },
        { name: `latency p50, ${c} conn`, unit: "ms", value: r.latency.p50, digits: 2 },
        { name: `latency p99, ${c} conn`, unit: "ms", value: r.latency.p99, digits: 2 },
      );
    }
    ctx.log("8 connections with an Idempotency-Key on every delivery");
    const keyed = await intake(hearth, 8, true);
    inputs.push(
      { name: "deliveries/s to 200, 8 conn, Idempotency-Key", unit: "/s", value: keyed.perSecond, details: keyed, digits: 0 },
      { name: "latency p99, 8 conn, Idempotency-Key", unit: "ms", value: keyed.latency.p99, digits: 2 },
    );
    const notes = [
      ...targets.notes,
      `Hearth (${targets.mode}) on loopback; POST /api/webhook/{path} of a "trigger.webhook → transform" workflow (no secret), ~150-byte JSON bodies; each 200 means the delivery row and its queued execution committed (FULL sync); the executions run in the same process meanwhile. ${WARMUP_MS / 1000} s warm-up, ${DURATION_MS / 1000} s timed per row; goal on 8 connections`,
    ];
    return { measurements: inputs.map((m) => measurement(SUITE, m)), info: { mode: targets.mode, concurrency: CONCURRENCY, details }, notes };
  } finally {
    await hearth.stop();
  }
}

export const webhooksSuite: Suite = {
  name: SUITE,
  description: "inbound webhooks: deliveries/s answered 200 with storage, latency p50/p99, at 1, 8 and 32 connections",
  run,
};
