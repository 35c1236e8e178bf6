// Platform suite: authenticated GET latency/throughput, cold start and idle RSS of Hearth vs a bare Bun.serve.
import { mkdirSync } from "node:fs";
import { cpus } from "node:os";
import { join } from "node:path";
import { buildRequest, measureConcurrentInTurns, measureSequential, measureSequentialInTurns, type ConcurrentResult, type SequentialResult, type Target } from "./lib/http-client";
import { baseEnv, everyCpu, measureColdStart, pinThread, readMainThreadCpuNs, readRssMb, startServer, type RunningServer, type ServerSpec } from "./lib/servers";
import { median, min } from "./lib/stats";
import { measurement, type Measurement, type MeasurementInput, type Suite, type SuiteContext } from "./lib/suite";
import { fixtureCommand, prepareTargets } from "./lib/targets";

const COLD_REPS = 5;
// Bare and Hearth are measured in turns (rounds of one slice each, the order rotating), so that the
// machine's own drift during the run moves both alike: per target 20,000 sequential requests in 5
// slices (pooled), and 5 slices of 1 s at 32 in flight (the median slice).
const SEQUENTIAL = { warmup: 2_000, warmupMaxMs: 1_000, count: 20_000, maxMs: 4_000, rounds: 5 };
const CONTEXT_SEQUENTIAL = { warmup: 1_000, warmupMaxMs: 500, count: 10_000, maxMs: 2_000 };
const CONCURRENCY = 32;
const CONCURRENT_WARMUP_MS = 500;
const CONCURRENT_SLICE_MS = 1_000;
const CONCURRENT_ROUNDS = 5;
const IDLE_SETTLE_MS = 1_000;

// Issue 14's goals: token-authenticated GET p50 ≤ 1.5× and p99 ≤ 3× the bare server's, ≥ 0.5× its
// requests/s at 32 in flight, a start on existing data within 150 ms, idle RSS within 80 MB.
const GOALS = {
  latencyRatio: 1.5,
  tailRatio: 3,
  throughputRatio: 0.5,
  coldStartMs: 150,
  idleRssMb: 80,
};

const VALIDATE = "/api/api-token/auth/validate";
const FLOOR = "floor: bare Bun.serve + the spec's request I/O";
const FLOOR_BASELINE = "bare Bun.serve (the floor's turns)";
const TOGETHER = "on one CPU";
const TOGETHER_BASELINE = "bare Bun.serve, same placement";
const SPEC_WORK = "spec-work server (plain Elysia)";
const SPEC_BASELINE = "bare Bun.serve (the spec-work server's turns)";

/**
 * Puts the client's and the servers' main threads on CPU 0 ("together") or back on every CPU
 * ("free"). One request at a time, a round trip on a 2-vCPU VM is mostly a vCPU's wake-up, and the
 * scheduler decides its cost: a server woken on the client's vCPU answers the bare request in
 * ~25 µs, on the other vCPU in 70-100 µs, and it moves a new connection's server from the first to
 * the second after ~50-150 ms (bench/README.md). The goals are measured as the scheduler places the
 * threads; "together" is context: each request's own cost with the least of the wake-ups in it.
 * False when the machine has one CPU or taskset is missing.
 */
function place(where: "together" | "free", servers: number[]): boolean {
  if (cpus().length < 2) return false;
  const cpuList = where === "together" ? "0" : everyCpu();
  return [process.pid, ...servers].every((pid) => pinThread(pid, cpuList));
}

interface Session {
  jwt: string;
  productId: string;
  apiToken: string;
}

/** Logs in as the first owner, finds the Default workspace and creates an API token (three real requests). */
async function openSession(server: RunningServer, password: string): Promise<Session> {
  const base = `http://${server.host}:${server.port}`;
  const call = async (path: string, init: RequestInit = {}) => {
    const res = await fetch(base + path, { ...init, headers: { "content-type": "application/json", ...(init.headers as Record<string, string>) } });
    const body = (await res.json().catch(() => null)) as { data?: unknown } | null;
    if (!res.ok || !body) throw new Error(`${init.method ?? "GET"} ${path} answered ${res.status}: ${JSON.stringify(body)?.slice(0, 300)}`);
    return body.data as Record<string, unknown> & Record<string, unknown>[];
  };
  const login = await call("/api/auth/login", { method: "POST", body: JSON.stringify({ email: "admin@localhost", password }) });
  const jwt = String(login.token);
  const auth = { Authorization: `Bearer ${jwt}` };
  const products = (await call("/api/products", { headers: auth })) as unknown as { id: string; name: string }[];
  const workspace = products.find((p) => p.name === "Default") ?? products[0];
  if (!workspace) throw new Error("GET /api/products returned no workspace");
  const created = await call("/api/api-tokens", { method: "POST", headers: auth, body: JSON.stringify({ product_id: workspace.id, token_name: "bench" }) });
  return { jwt, productId: workspace.id, apiToken: String(created.token) };
}

async function coldStarts(ctx: SuiteContext, hearth: (dataDir: string) => ServerSpec, bare: ServerSpec, existingDir: string) {
  const first: number[] = [];
  const second: number[] = [];
  const baseline: number[] = [];
  const listening = { first: [] as number[], second: [] as number[], bare: [] as number[] };
  // Untimed: creates the existing data dir and brings both executables into the page cache.
  await measureColdStart(hearth(existingDir));
  await measureColdStart(bare);
  for (let i = 0; i < COLD_REPS; i++) {
    ctx.log(`cold start ${i + 1}/${COLD_REPS}`);
    const fresh = join(ctx.tmp, `fresh-${i}`);
    mkdirSync(fresh);
    const a = await measureColdStart(hearth(fresh));
    const b = await measureColdStart(hearth(existingDir));
    const c = await measureColdStart(bare);
    first.push(a.ms), second.push(b.ms), baseline.push(c.ms);
    listening.first.push(a.listeningMs), listening.second.push(b.listeningMs), listening.bare.push(c.listeningMs);
  }
  return { first, second, baseline, listening };
}

function latencyRows(label: string, hearth: SequentialResult, bare: SequentialResult): MeasurementInput[] {
  const details = { hearth, bare };
  return [
    { name: `${label} p50`, unit: "µs", value: hearth.p50, baseline: bare.p50, baselineName: "bare Bun.serve", goal: { on: "ratio", kind: "max", limit: GOALS.latencyRatio }, details },
    { name: `${label} p95`, unit: "µs", value: hearth.p95, baseline: bare.p95, baselineName: "bare Bun.serve" },
    { name: `${label} p99`, unit: "µs", value: hearth.p99, baseline: bare.p99, baselineName: "bare Bun.serve", goal: { on: "ratio", kind: "max", limit: GOALS.tailRatio } },
  ];
}

function throughputRow(label: string, hearth: ConcurrentResult, bare: ConcurrentResult): MeasurementInput {
  return {
    name: `${label}, ${CONCURRENCY} in flight`,
    unit: "req/s",
    value: hearth.rps,
    baseline: bare.rps,
    baselineName: "bare Bun.serve",
    goal: { on: "ratio", kind: "min", limit: GOALS.throughputRatio },
    details: { hearth, bare },
    digits: 0,
  };
}

async function run(ctx: SuiteContext) {
  const targets = await prepareTargets(ctx);
  // Compiled before anything is measured (a compile takes the CPU for seconds).
  const specWorkCmd = fixtureCommand(ctx, targets.mode, "spec-work-server", targets.notes);
  const onBinary = targets.mode === "binary";
  const password = `bench-${crypto.randomUUID()}`;
  const hearthSpec = (dataDir: string): ServerSpec => ({
    name: "hearth",
    cmd: [...targets.hearth, "serve", "--host", "127.0.0.1", "--port", "0"],
    env: baseEnv({
      HEARTH_DATA_DIR: dataDir,
      HEARTH_ADMIN_PASSWORD: password,
      HEARTH_RATE_LIMIT: "1000000",
      HEARTH_RATE_LIMIT_STRICT: "1000000",
      HEARTH_OFFLINE: "1",
    }),
    cwd: ctx.root,
  });
  const bareSpec: ServerSpec = { name: "bare", cmd: [...targets.bare, "0"], env: baseEnv({}), cwd: ctx.root };
  // The floor (context rows): the bare server doing the request I/O the spec asks of a token request
  // (headers read, client address asked, request id and rate-limit headers sent; see the fixture).
  const floorSpec: ServerSpec = { name: "bare-io", cmd: [...targets.bare, "0", "--required-io"], env: baseEnv({}), cwd: ctx.root };
  const inputs: MeasurementInput[] = [];
  const existingDir = join(ctx.tmp, "existing");

  // 1. Cold start: spawn → first 200 from /health.
  const cold = await coldStarts(ctx, hearthSpec, bareSpec, existingDir);
  const binaryNote = onBinary ? undefined : "no dist/hearth: figure is `bun src/main.ts`";
  const coldDetails = { ...cold, reps: COLD_REPS };
  inputs.push(
    // The first start creates the database and hashes the owner's password (slow on purpose): context, no goal.
    { name: "cold start, empty data dir, median", unit: "ms", value: median(cold.first), baseline: median(cold.baseline), baselineName: "bare Bun.serve start", missing: !onBinary, note: binaryNote, details: coldDetails },
    { name: "cold start, empty data dir, min", unit: "ms", value: min(cold.first), baseline: min(cold.baseline), baselineName: "bare Bun.serve start" },
    { name: "cold start, existing data dir, median", unit: "ms", value: median(cold.second), baseline: median(cold.baseline), baselineName: "bare Bun.serve start", goal: { on: "value", kind: "max", limit: GOALS.coldStartMs }, missing: !onBinary, note: binaryNote },
    { name: "cold start, existing data dir, min", unit: "ms", value: min(cold.second), baseline: min(cold.baseline), baselineName: "bare Bun.serve start" },
  );

  // 2. Both servers running side by side (each in its own process): idle RSS, then latency and throughput.
  ctx.log("starting Hearth and the bare server for RSS and latency");
  const hearth = await startServer(hearthSpec(existingDir));
  let bare: RunningServer | null = null;
  let floor: RunningServer | null = null;
  let specWork: RunningServer | null = null;
  try {
    bare = await startServer(bareSpec);
    floor = await startServer(floorSpec);
    const session = await openSession(hearth, password);
    const target = (server: RunningServer, path: string, headers: Record<string, string> = {}): Target => ({
      host: server.host,
      port: server.port,
      request: buildRequest(server.host, server.port, path, headers),
      cpuNs: () => readMainThreadCpuNs(server.pid),
    });
    const token = { "X-API-Token": session.apiToken };
    const hValidate = target(hearth, VALIDATE, token);
    const hProduct = target(hearth, `/api/products/${session.productId}`, token);
    const hHealth = target(hearth, "/health");
    const hProductJwt = target(hearth, `/api/products/${session.productId}`, { Authorization: `Bearer ${session.jwt}` });
    const bareTarget = target(bare, VALIDATE);
    const floorTarget = target(floor, VALIDATE, token);

    // "A few requests" after start (login, list, token creation above, plus these), then let both settle.
    for (const t of [hValidate, hProduct, hHealth]) await measureSequential(t, { warmup: 1, count: 3, maxMs: 1_000 });
    for (const t of [bareTarget, floorTarget]) await measureSequential(t, { warmup: 1, count: 3, maxMs: 1_000 });
    await Bun.sleep(IDLE_SETTLE_MS);
    const idle = { hearth: readRssMb(hearth.pid), bare: readRssMb(bare.pid) };
    inputs.push({ name: "idle RSS after start + a few requests", unit: "MB", value: idle.hearth, baseline: idle.bare, baselineName: "bare Bun.serve idle", goal: { on: "value", kind: "max", limit: GOALS.idleRssMb }, missing: !onBinary, note: binaryNote });

    ctx.log("sequential latency (bare, validate, product; then /health and product with a JWT, and the floor, for context)");
    const [seqBare, seqValidate, seqProduct] = (await measureSequentialInTurns([bareTarget, hValidate, hProduct], SEQUENTIAL)) as [SequentialResult, SequentialResult, SequentialResult];
    inputs.push(...latencyRows(`GET ${VALIDATE}`, seqValidate, seqBare));
    inputs.push(...latencyRows("GET /api/products/:id (API token)", seqProduct, seqBare));
    // Context, no goal: what each server's main thread spent per request in the same slices: the cost
    // of a request to the server, where the round trip is mostly the VM waking a vCPU (bench/README.md).
    const cpuRow = (label: string, r: SequentialResult, bare = seqBare, baselineName = "bare Bun.serve"): MeasurementInput => ({
      name: `${label}, server main-thread CPU per request`,
      unit: "µs",
      value: r.cpuUsPerRequest ?? Number.NaN,
      baseline: bare.cpuUsPerRequest,
      baselineName,
      missing: r.cpuUsPerRequest === undefined,
    });
    inputs.push(cpuRow(`GET ${VALIDATE}`, seqValidate), cpuRow("GET /api/products/:id (API token)", seqProduct));
    // Context rows, no goal: the same stack without authentication, and with a session JWT (no token audit row).
    const seqHealth = await measureSequential(hHealth, CONTEXT_SEQUENTIAL);
    const seqJwt = await measureSequential(hProductJwt, CONTEXT_SEQUENTIAL);
    const context = (name: string, r: SequentialResult, bare = seqBare, baselineName = "bare Bun.serve"): MeasurementInput => ({ name, unit: "µs", value: r.p50, baseline: bare.p50, baselineName, details: r });
    inputs.push(context("GET /health (no auth) p50", seqHealth), context("GET /api/products/:id (session JWT) p50", seqJwt));
    // The floor in turns of its own with the bare server (its rows' baseline), after the goals' turns,
    // which it would otherwise lengthen.
    const [seqFloorBare, seqFloor] = (await measureSequentialInTurns([bareTarget, floorTarget], SEQUENTIAL)) as [SequentialResult, SequentialResult];
    inputs.push(context(`${FLOOR} p50`, seqFloor, seqFloorBare, FLOOR_BASELINE), cpuRow(FLOOR, seqFloor, seqFloorBare, FLOOR_BASELINE));
    // Context, no goal: validate, bare and the spec-work server in turns (Hearth against the bare
    // server and against the spec's work done plainly), then again with client and servers on one
    // CPU (see `place`).
    specWork = await startServer({ name: "spec-work", cmd: [...specWorkCmd, "0", session.apiToken], env: baseEnv({}), cwd: ctx.root });
    const specTarget = target(specWork, VALIDATE, token);
    // First as the scheduler places the threads, the goals' regime: how much of the goal the spec's
    // work alone takes there.
    ctx.log("sequential latency (bare, validate, spec-work server)");
    const [freeBare, freeValidate, freeSpec] = (await measureSequentialInTurns([bareTarget, hValidate, specTarget], SEQUENTIAL)) as [SequentialResult, SequentialResult, SequentialResult];
    inputs.push(
      context(`${SPEC_WORK} p50`, freeSpec, freeBare, SPEC_BASELINE),
      context(`GET ${VALIDATE} p50 vs the spec-work server`, freeValidate, freeSpec, `${SPEC_WORK}, same turns`),
    );
    const servers = [hearth.pid, bare.pid, specWork.pid];
    if (place("together", servers)) {
      ctx.log("sequential latency, client and servers on CPU 0 (bare, validate, spec-work server)");
      const [oneBare, oneValidate, oneSpec] = (await measureSequentialInTurns([bareTarget, hValidate, specTarget], SEQUENTIAL)) as [SequentialResult, SequentialResult, SequentialResult];
      inputs.push(
        context(`GET ${VALIDATE} p50, ${TOGETHER}`, oneValidate, oneBare, TOGETHER_BASELINE),
        cpuRow(`GET ${VALIDATE}, ${TOGETHER}`, oneValidate, oneBare, TOGETHER_BASELINE),
        context(`${SPEC_WORK} p50, ${TOGETHER}`, oneSpec, oneBare, TOGETHER_BASELINE),
        cpuRow(`${SPEC_WORK}, ${TOGETHER}`, oneSpec, oneBare, TOGETHER_BASELINE),
        context(`GET ${VALIDATE} p50 vs the spec-work server, ${TOGETHER}`, oneValidate, oneSpec, `${SPEC_WORK}, same turns`),
      );
    }
    place("free", servers);
    await specWork.stop();
    specWork = null;

    ctx.log(`throughput, ${CONCURRENCY} in flight (bare, validate, product; then bare and the floor)`);
    const [cBare, cValidate, cProduct] = (await measureConcurrentInTurns([bareTarget, hValidate, hProduct], CONCURRENCY, CONCURRENT_WARMUP_MS, CONCURRENT_SLICE_MS, CONCURRENT_ROUNDS)) as [ConcurrentResult, ConcurrentResult, ConcurrentResult];
    inputs.push(throughputRow(`GET ${VALIDATE}`, cValidate, cBare));
    inputs.push(throughputRow("GET /api/products/:id (API token)", cProduct, cBare));
    const [cFloorBare, cFloor] = (await measureConcurrentInTurns([bareTarget, floorTarget], CONCURRENCY, CONCURRENT_WARMUP_MS, CONCURRENT_SLICE_MS, CONCURRENT_ROUNDS)) as [ConcurrentResult, ConcurrentResult];
    inputs.push({ ...throughputRow(FLOOR, cFloor, cFloorBare), baselineName: FLOOR_BASELINE, goal: undefined });

    await Bun.sleep(IDLE_SETTLE_MS);
    inputs.push({ name: "RSS after the load above", unit: "MB", value: readRssMb(hearth.pid), baseline: readRssMb(bare.pid), baselineName: "bare Bun.serve after load" });

    const notes = [
      ...targets.notes,
      `Hearth: ${onBinary ? "dist/hearth (compiled)" : "bun src/main.ts"}; baseline: bench/fixtures/bare-server.ts (${targets.bareMode === "binary" ? "compiled the same way" : "from source"}); each in its own process`,
      `response bodies: validate ${seqValidate.bodyBytes} B, product ${seqProduct.bodyBytes} B, bare ${seqBare.bodyBytes} B; client: raw keep-alive HTTP/1.1 over loopback`,
      `${FLOOR}: the bare server started with --required-io reads the credential, request id and user agent, asks the client's address and sends X-Request-Id and RateLimit-* (Bun's own cost of the spec's request I/O; no goal), measured in turns of its own with the bare server after the goals' turns`,
      `latency: ${SEQUENTIAL.warmup} warm-up requests (≤ ${SEQUENTIAL.warmupMaxMs / 1000} s) then up to ${SEQUENTIAL.count} sequential requests (≤ ${SEQUENTIAL.maxMs / 1000} s) on one connection, in ${SEQUENTIAL.rounds} slices taken in turns with the bare server's (pooled); throughput: ${CONCURRENCY} connections, ${CONCURRENT_ROUNDS} slices of ${CONCURRENT_SLICE_MS / 1000} s in turns, the median slice (${CONCURRENT_WARMUP_MS} ms warm-up first)`,
      `${TOGETHER}: the client's and the servers' main threads pinned to CPU 0 (taskset) for turns of their own after the floor's; every other row as the scheduler places the threads (bench/README.md)`,
      `${SPEC_WORK}: bench/fixtures/spec-work-server.ts, compiled like the bare server, does the work the spec asks of a token GET and nothing else (request id, body-size check, the secret hashed and looked up, the budget and RateLimit-* headers, the audit row's facts encoded and copied into memory, the answer checked against its schema); no Hearth code (context, no goal)`,
      `cold start: spawn → first 200 from /health, ${COLD_REPS} reps each, page cache warm; empty data dir includes migration, vec0.so extraction and hashing the owner's password`,
      `goals are issue 14's: p50 ≤ ${GOALS.latencyRatio}×, p99 ≤ ${GOALS.tailRatio}×, ≥ ${GOALS.throughputRatio}× requests/s, existing-data start ≤ ${GOALS.coldStartMs} ms, idle RSS ≤ ${GOALS.idleRssMb} MB`,
    ];
    const info = {
      mode: targets.mode,
      hearthCommand: hearthSpec("<tmp>").cmd,
      bareCommand: bareSpec.cmd,
      bareMode: targets.bareMode,
      goals: GOALS,
      sequential: SEQUENTIAL,
      concurrency: CONCURRENCY,
      concurrentSliceMs: CONCURRENT_SLICE_MS,
      concurrentRounds: CONCURRENT_ROUNDS,
      coldReps: COLD_REPS,
    };
    const measurements: Measurement[] = inputs.map((m) => measurement("platform", m));
    return { measurements, info, notes };
  } catch (e) {
    process.stderr.write(`hearth stderr (tail):\n${hearth.stderrTail()}\n`);
    throw e;
  } finally {
    pinThread(process.pid, everyCpu());
    await hearth.stop();
    await bare?.stop();
    await floor?.stop();
    await specWork?.stop();
  }
}

export const platformSuite: Suite = {
  name: "platform",
  description: "authenticated GET latency and throughput, cold start and idle RSS, each against a bare Bun.serve",
  run,
};
