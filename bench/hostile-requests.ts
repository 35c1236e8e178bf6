// Hostile-requests suite: /health p99 and server RSS while floods of 6 MB multipart bodies arrive
// (without credentials, and with a valid token but 100,000 fields), against idle. The senders run
// in their own process (fixtures/flood-sender.ts); the same flood against a bare server that
// refuses it unread (fixtures/refusing-server.ts) shows what the machine itself allows.
import { join } from "node:path";
import { buildRequest, HttpConnection } from "./lib/http-client";
import { cpuMeter, openSession } from "./lib/hearth-api";
import { baseEnv, readRssMb, startServer, type RunningServer } from "./lib/servers";
import { percentile, round } from "./lib/stats";
import { measurement, type MeasurementInput, type Suite, type SuiteContext } from "./lib/suite";

const SENDERS = 4;
const PHASE_MS = 8_000;
/** A flood request that takes longer is abandoned (and counted); the server may still be busy with it. */
const REQUEST_TIMEOUT_MS = 20_000;
const HEALTH_EVERY_MS = 20;
const IDLE_SAMPLES = 300;
const FIELDS = 100_000;
const GOALS = { rssMb: 1024, healthP99Ratio: 2 };

/** Sequential /health requests on one keep-alive connection until `stop()`; latencies in ms. */
export async function sampleHealth(server: RunningServer, until: () => boolean, max = Number.POSITIVE_INFINITY): Promise<number[]> {
  const conn = await HttpConnection.open(server.host, server.port);
  const req = buildRequest(server.host, server.port, "/health");
  const samples: number[] = [];
  try {
    while (!until() && samples.length < max) {
      const t0 = performance.now();
      const res = await conn.request(req);
      if (res.status !== 200) throw new Error(`/health answered ${res.status}`);
      samples.push(performance.now() - t0);
      await Bun.sleep(HEALTH_EVERY_MS);
    }
  } finally {
    conn.close();
  }
  return samples;
}

interface Flood {
  sent: number;
  bodyBytes: number;
  statuses: Record<string, number>;
  healthP99: number;
  healthSamples: number;
  peakRssMb: number;
  seconds: number;
  /** CPU cores the server used, and everything else on the machine (this client included). */
  serverCores: number;
  otherCores: number;
}

/** `SENDERS` clients (one child process) post the flood body for PHASE_MS while /health is sampled and RSS watched. */
async function flood(ctx: SuiteContext, server: RunningServer, headers: Record<string, string>): Promise<Flood> {
  let peakRssMb = readRssMb(server.pid);
  const rssTimer = setInterval(() => (peakRssMb = Math.max(peakRssMb, readRssMb(server.pid))), 50);
  const cpu = cpuMeter([server.pid]);
  const t0 = performance.now();
  const url = `http://${server.host}:${server.port}/api/assistant/chat`;
  const args = [url, PHASE_MS, SENDERS, REQUEST_TIMEOUT_MS, FIELDS, JSON.stringify(headers)].map(String);
  const sender = Bun.spawn([ctx.bun, join(ctx.root, "bench/fixtures/flood-sender.ts"), ...args], { stdout: "pipe", stderr: "inherit" });
  const over = () => performance.now() - t0 > PHASE_MS;
  const [health, out, code] = await Promise.all([sampleHealth(server, over), new Response(sender.stdout).text(), sender.exited]);
  if (code !== 0) throw new Error(`flood sender exited with ${code}`);
  const { statuses, sent, bodyBytes } = JSON.parse(out) as { statuses: Record<string, number>; sent: number; bodyBytes: number };
  const seconds = (performance.now() - t0) / 1000;
  const used = cpu();
  clearInterval(rssTimer);
  peakRssMb = Math.max(peakRssMb, readRssMb(server.pid));
  return { sent, statuses, bodyBytes, healthP99: percentile(health, 99), healthSamples: health.length, peakRssMb, seconds, serverCores: used.oursCores, otherCores: used.otherCores };
}

/**
 * The same floods against a bare Bun server that refuses the anonymous one unread and reads the
 * token one only to the field cap: the machine's floor, with its own idle figure.
 */
async function floor(ctx: SuiteContext): Promise<{ idleP99: number; flood: Flood; token: Flood }> {
  const bare = await startServer({ name: "refusing", cmd: [ctx.bun, join(ctx.root, "bench/fixtures/refusing-server.ts")], env: baseEnv({}), cwd: ctx.root });
  try {
    const idle = await sampleHealth(bare, () => false, IDLE_SAMPLES);
    return { idleP99: percentile(idle, 99), flood: await flood(ctx, bare, {}), token: await flood(ctx, bare, { "x-api-token": "svc_floor" }) };
  } finally {
    await bare.stop();
  }
}

async function run(ctx: SuiteContext) {
  const password = `bench-${crypto.randomUUID()}`;
  const hearth = await startServer({
    name: "hearth",
    cmd: [ctx.bun, join(ctx.root, "src/main.ts"), "serve", "--host", "127.0.0.1", "--port", "0"],
    // Budgets out of the way: every flood request reaches authentication (and, with the token, the body).
    env: baseEnv({ HEARTH_DATA_DIR: join(ctx.tmp, "data"), HEARTH_ADMIN_PASSWORD: password, HEARTH_RATE_LIMIT: "1000000", HEARTH_RATE_LIMIT_STRICT: "1000000", HEARTH_OFFLINE: "1" }),
    cwd: ctx.root,
  });
  try {
    const session = await openSession(hearth, "admin@localhost", password);
    ctx.log(`idle: ${IDLE_SAMPLES} /health requests`);
    const idle = await sampleHealth(hearth, () => false, IDLE_SAMPLES);
    const idleP99 = percentile(idle, 99);
    const idleRss = readRssMb(hearth.pid);

    ctx.log(`flood 1: ${SENDERS} senders of ${FIELDS.toLocaleString("en-US")}-field multipart bodies without credentials, ${PHASE_MS / 1000} s`);
    const anon = await flood(ctx, hearth, {});
    ctx.log(`flood 2: the same bodies with a valid API token, ${PHASE_MS / 1000} s`);
    const token = await flood(ctx, hearth, { "x-api-token": session.apiToken });
    ctx.log(`floor: floods 1 and 2 against a bare server that refuses them (unread; read to the field cap), ${2 * PHASE_MS / 1000} s`);
    const bare = await floor(ctx);

    /** Server CPU (all threads) per flood request: what one refused request costs, whatever else the machine runs. */
    const cpuPerRequest = (f: Flood) => (f.serverCores * f.seconds * 1000) / Math.max(1, f.sent);
    const rows = (label: string, f: Flood, floorFlood: Flood, floorName: string): MeasurementInput[] => [
      { name: `/health p99, ${label}`, unit: "ms", value: f.healthP99, baseline: idleP99, baselineName: "/health p99 idle", goal: { on: "ratio", kind: "max", limit: GOALS.healthP99Ratio }, details: f, digits: 2 },
      { name: `peak RSS, ${label}`, unit: "MB", value: f.peakRssMb, baseline: idleRss, baselineName: "RSS idle", goal: { on: "value", kind: "max", limit: GOALS.rssMb }, digits: 0 },
      {
        name: `flood requests answered, ${label}`,
        unit: "req/s",
        value: f.sent / f.seconds,
        note: `statuses ${JSON.stringify(f.statuses)}, ${f.healthSamples} /health samples; CPU: server ${f.serverCores.toFixed(2)} cores, rest of the machine (this client included) ${f.otherCores.toFixed(2)}`,
        digits: 1,
      },
      { name: `server CPU per request, ${label}`, unit: "ms", value: cpuPerRequest(f), baseline: cpuPerRequest(floorFlood), baselineName: floorName, digits: 3 },
    ];
    const inputs: MeasurementInput[] = [
      { name: "/health p99 idle", unit: "ms", value: idleP99, details: { samples: idle.length, p50: round(percentile(idle, 50), 3) }, digits: 2 },
      ...rows("6 MB multipart flood, no credentials", anon, bare.flood, "server CPU per request, bare refusing server"),
      ...rows("6 MB / 100k-field flood, valid token", token, bare.token, "server CPU per request, bare refusing server reading to the field cap"),
      { name: "/health p99 idle, bare refusing server", unit: "ms", value: bare.idleP99, digits: 2 },
      { name: "server CPU per request, bare refusing server", unit: "ms", value: cpuPerRequest(bare.flood), digits: 3 },
      { name: "server CPU per request, bare refusing server reading to the field cap", unit: "ms", value: cpuPerRequest(bare.token), digits: 3 },
      ...(
        [
          ["6 MB multipart flood", bare.flood],
          ["6 MB / 100k-field flood with a token, read to the field cap", bare.token],
        ] as const
      ).map(([label, f]): MeasurementInput => ({
        name: `/health p99, ${label}, bare refusing server (floor)`,
        unit: "ms",
        value: f.healthP99,
        baseline: bare.idleP99,
        baselineName: "/health p99 idle, bare refusing server",
        note: `what the machine allows: statuses ${JSON.stringify(f.statuses)}, ${(f.sent / f.seconds).toFixed(1)} req/s; CPU: server ${f.serverCores.toFixed(2)} cores, rest ${f.otherCores.toFixed(2)}`,
        details: f,
        digits: 2,
      })),
    ];
    const notes = [
      `Hearth: bun src/main.ts; ${SENDERS} concurrent senders per flood (one child process) for ${PHASE_MS / 1000} s, each body ${FIELDS.toLocaleString("en-US")} fields (${(anon.bodyBytes / 2 ** 20).toFixed(1)} MB) to POST /api/assistant/chat`,
      `/health sampled every ${HEALTH_EVERY_MS} ms on one keep-alive connection during each flood; RSS from /proc every 50 ms`,
    ];
    return { measurements: inputs.map((m) => measurement("hostile-requests", m)), info: { senders: SENDERS, phaseMs: PHASE_MS, fields: FIELDS, bodyBytes: anon.bodyBytes, goals: GOALS }, notes };
  } catch (e) {
    process.stderr.write(`hearth stderr (tail):\n${hearth.stderrTail()}\n`);
    throw e;
  } finally {
    await hearth.stop();
  }
}

export const hostileRequestsSuite: Suite = {
  name: "hostile-requests",
  description: "/health p99 and RSS under floods of 6 MB multipart bodies (anonymous; 100k fields with a token) vs idle",
  run,
};
