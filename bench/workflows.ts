// Workflows suite: engine overhead per node (a 100-node chain of transforms vs the same JSONata
// evaluations called directly), a 1,000-node fan-out/fan-in graph (time, server RSS across runs),
// and one execution's events delivered to 50 concurrent SSE listeners (latency to the last one).
import { Database } from "bun:sqlite";
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import jsonata from "jsonata";
import { cpuMeter, openSession, memoryOf, type Session } from "./lib/hearth-api";
import { baseEnv, startServer, type RunningServer } from "./lib/servers";
import { median, summarize } from "./lib/stats";
import { measurement, type MeasurementInput, type Suite, type SuiteContext } from "./lib/suite";
import { prepareTargets } from "./lib/targets";

const SUITE = "workflows";
const EMAIL = "bench@localhost";
const CHAIN = 100;
const FAN = 998;
const LISTENERS = 50;
const RUNS = { chain: 7, fan: 8, baseline: 8 };
const GOALS = { msPerNode: 2 };

type Graph = { nodes: { id: string; type: string; config?: Record<string, unknown> }[]; edges: { from: string; to: string }[] };

/** Chain node i's expression: arithmetic, a string function and an object, over the node before it. */
const chainExpression = (i: number) => (i === 1 ? `{ "n": 1, "label": "STEP 1" }` : `{ "n": nodes.t${i - 1}.output.n + 1, "label": $uppercase("step " & $string(nodes.t${i - 1}.output.n + 1)) }`);

function chainGraph(n: number, expression: (i: number) => string = chainExpression, head: Graph["nodes"] = []): Graph {
  const nodes = [{ id: "start", type: "trigger.manual" }, ...head, ...Array.from({ length: n }, (_, i) => ({ id: `t${i + 1}`, type: "transform", config: { expression: expression(i + 1) } }))];
  return { nodes, edges: nodes.slice(1).map((node, i) => ({ from: nodes[i]!.id, to: node.id })) };
}

function fanGraph(): Graph {
  const middle = Array.from({ length: FAN }, (_, i) => ({ id: `f${i + 1}`, type: "transform", config: { expression: `{ "i": ${i + 1}, "sq": ${i + 1} * ${i + 1} }` } }));
  return {
    nodes: [{ id: "start", type: "trigger.manual" }, ...middle, { id: "join", type: "transform", config: { expression: "$sum(nodes.*.output.i)" } }],
    edges: [...middle.map((m) => ({ from: "start", to: m.id })), ...middle.map((m) => ({ from: m.id, to: "join" }))],
  };
}

/** Least-squares slope of equally spaced samples (units per step). */
function slope(ys: number[]): number {
  const n = ys.length;
  const mx = (n - 1) / 2;
  const my = ys.reduce((a, b) => a + b, 0) / n;
  let num = 0;
  let den = 0;
  ys.forEach((y, x) => ((num += (x - mx) * (y - my)), (den += (x - mx) ** 2)));
  return den === 0 ? Number.NaN : num / den;
}

/** The 100 evaluations of the chain straight through the jsonata package, compiled once, in order. */
async function directChain(compiled: ReturnType<typeof jsonata>[]): Promise<number> {
  const nodes: Record<string, { output: unknown }> = {};
  const scope = { input: {}, nodes, execution: { id: "bench", started_at: new Date().toISOString() } };
  const t0 = performance.now();
  for (let i = 0; i < compiled.length; i++) nodes[`t${i + 1}`] = { output: await compiled[i]!.evaluate(scope) };
  const ms = performance.now() - t0;
  if ((nodes[`t${compiled.length}`]!.output as { n: number }).n !== compiled.length) throw new Error("direct chain computed the wrong result");
  return ms;
}

interface Api {
  execute(graph: Graph, input?: Record<string, unknown>): Promise<string>;
  status(id: string): Promise<any>;
  /** Resolves with the raw text of the event stream once it closes (after `done`). */
  events(id: string): Promise<string>;
  post(path: string, body?: unknown): Promise<any>;
}

function apiOf(s: Session): Api {
  const headers = { authorization: `Bearer ${s.jwt}`, "content-type": "application/json" };
  const post = async (path: string, body?: unknown) => {
    const r = await fetch(`${s.base}${path}`, { method: "POST", headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const json = (await r.json()) as any;
    if (!r.ok) throw new Error(`POST ${path} answered ${r.status}: ${JSON.stringify(json).slice(0, 300)}`);
    return json.data;
  };
  return {
    post,
    execute: async (graph, input = {}) => (await post("/api/workflow/execute", { graph, product_id: s.productId, input })).id,
    status: async (id) => ((await (await fetch(`${s.base}/api/workflow/${id}/status`, { headers })).json()) as any).data,
    events: async (id) => (await fetch(`${s.base}/api/workflow/${id}/events`, { headers })).text(),
  };
}

/** Runs a graph to its end and returns its status with the server's own start and finish stamps. */
async function runToEnd(api: Api, graph: Graph) {
  const t0 = performance.now();
  const id = await api.execute(graph);
  await api.events(id);
  const wallMs = performance.now() - t0;
  const s = await api.status(id);
  if (s.status !== "succeeded") throw new Error(`execution ${id} ended ${s.status}: ${s.error}`);
  return { status: s, wallMs, engineMs: Date.parse(s.finished_at) - Date.parse(s.started_at) };
}

interface Received {
  seq: number;
  event: string;
  data: any;
  at: number;
}

/** One SSE listener: parses events as they arrive and stamps each with the epoch time (sub-ms). */
async function listen(s: Session, id: string, onEvent: (e: Received) => void): Promise<Received[]> {
  const res = await fetch(`${s.base}/api/workflow/${id}/events`, { headers: { authorization: `Bearer ${s.jwt}` } });
  const got: Received[] = [];
  const decoder = new TextDecoder();
  let buf = "";
  for await (const chunk of res.body!) {
    const at = performance.timeOrigin + performance.now();
    buf += decoder.decode(chunk as Uint8Array, { stream: true });
    let end: number;
    while ((end = buf.indexOf("\n\n")) >= 0) {
      const block = buf.slice(0, end);
      buf = buf.slice(end + 2);
      const field = (name: string) => block.split("\n").find((l) => l.startsWith(`${name}: `))?.slice(name.length + 2);
      const data = field("data");
      if (data === undefined) continue;
      const e = { seq: Number(field("id")), event: field("event") ?? "message", data: JSON.parse(data), at };
      got.push(e);
      onEvent(e);
    }
  }
  return got;
}

/** A bare SQLite commit of one small row in WAL mode with `synchronous`, in `dir`: the floor a durable node result costs. */
function commitMs(dir: string, synchronous: "FULL" | "NORMAL", count = 200): number {
  const db = new Database(join(dir, `commit-${synchronous}.db`));
  try {
    db.exec("PRAGMA journal_mode = WAL");
    db.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)");
    const insert = db.prepare("INSERT INTO t (v) VALUES (?)");
    const row = JSON.stringify({ n: 1, label: "STEP 1" });
    // Warm, as Hearth's is: the WAL past its first checkpoint, so commits overwrite it instead of growing the file.
    db.exec("PRAGMA synchronous = OFF");
    for (let i = 0; i < 1200; i++) db.transaction(() => insert.run(row))();
    db.exec(`PRAGMA synchronous = ${synchronous}`);
    const t0 = performance.now();
    for (let i = 0; i < count; i++) db.transaction(() => insert.run(row))();
    return (performance.now() - t0) / count;
  } finally {
    db.close();
  }
}

async function startHearth(ctx: SuiteContext, cmd: string[], dataDir: string, password: string) {
  const { modelsDir } = ctx;
  const server = await startServer(
    {
      name: "hearth",
      cmd: [...cmd, "serve", "--host", "127.0.0.1", "--port", "0"],
      env: baseEnv({ HEARTH_DATA_DIR: dataDir, HEARTH_MODELS_DIR: modelsDir, HEARTH_ADMIN_EMAIL: EMAIL, HEARTH_ADMIN_PASSWORD: password, HEARTH_OFFLINE: "1", HEARTH_RATE_LIMIT: "1000000", HEARTH_RATE_LIMIT_STRICT: "1000000" }),
      cwd: ctx.root,
    },
    30_000,
  );
  const session = await openSession(server, EMAIL, password);
  return { server, session, api: apiOf(session) };
}

/** Runs the chain (after one warm-up) RUNS.chain times, with direct evaluations of the same expressions between runs. */
async function timeChain(api: Api, compiled: ReturnType<typeof jsonata>[]) {
  const chain = chainGraph(CHAIN);
  await runToEnd(api, chain); // warm-up: compiles the expressions, warms the statements
  const engineMs: number[] = [];
  const wallMs: number[] = [];
  const directMs: number[] = [];
  for (let r = 0; r < RUNS.chain; r++) {
    const result = await runToEnd(api, chain);
    if (result.status.output.n !== CHAIN) throw new Error(`chain output ${JSON.stringify(result.status.output)}`);
    engineMs.push(result.engineMs);
    wallMs.push(result.wallMs);
    for (let b = 0; b < RUNS.baseline; b++) directMs.push(await directChain(compiled));
  }
  return { perNode: median(engineMs) / CHAIN, directPerNode: median(directMs) / CHAIN, wallMs: median(wallMs), engineMs, directMs };
}

async function run(ctx: SuiteContext) {
  const targets = await prepareTargets(ctx);
  const password = `bench-${crypto.randomUUID()}`;
  const dataDir = join(ctx.tmp, "workflows");
  mkdirSync(dataDir);
  // The same chain on a RAM disk shows what the engine costs without the fsync of each commit.
  const ramDir = existsSync("/dev/shm") ? mkdtempSync("/dev/shm/hearth-bench-workflows-") : null;
  let hearth: RunningServer | undefined;
  try {
    const fsyncMs = commitMs(ctx.tmp, "FULL");
    const compiled = Array.from({ length: CHAIN }, (_, i) => jsonata(chainExpression(i + 1)));
    for (let i = 0; i < 5; i++) await directChain(compiled);

    let ram: Awaited<ReturnType<typeof timeChain>> | null = null;
    let ramFanMs = Number.NaN;
    if (ramDir) {
      const onRam = await startHearth(ctx, targets.hearth, ramDir, password);
      try {
        ctx.log(`timing the ${CHAIN}-node chain with the data dir on /dev/shm (no fsync cost)`);
        ram = await timeChain(onRam.api, compiled);
        await runToEnd(onRam.api, fanGraph());
        ramFanMs = (await runToEnd(onRam.api, fanGraph())).engineMs;
      } finally {
        await onRam.server.stop();
      }
    }

    const started = await startHearth(ctx, targets.hearth, dataDir, password);
    hearth = started.server;
    const { session, api } = started;
    const pid = hearth.pid;
    ctx.log(`Hearth up (${targets.mode}), pid ${pid}; a bare fsync'd SQLite commit here takes ${fsyncMs.toFixed(2)} ms`);

    // (a) Engine overhead per node, against the same evaluations straight through jsonata.
    ctx.log(`timing ${RUNS.chain} runs of the ${CHAIN}-node chain, alternating with ${RUNS.baseline} direct evaluations each`);
    const cpu = cpuMeter([process.pid, pid]);
    const disk = await timeChain(api, compiled);
    const load = cpu();
    const { perNode, directPerNode } = disk;

    // (b) 1,000 nodes: one start, 998 transforms in parallel, one join; RSS before and after each run.
    const fan = fanGraph();
    const rssBefore = memoryOf(pid).rss;
    const fanRuns: { ms: number; wallMs: number; rss: number; succeeded: number }[] = [];
    ctx.log(`running the ${FAN + 2}-node fan-out/fan-in graph ${RUNS.fan} times`);
    for (let r = 0; r < RUNS.fan; r++) {
      const result = await runToEnd(api, fan);
      if (result.status.output !== (FAN * (FAN + 1)) / 2) throw new Error(`fan-in output ${JSON.stringify(result.status.output)}`);
      await Bun.sleep(200);
      fanRuns.push({ ms: result.engineMs, wallMs: result.wallMs, rss: memoryOf(pid).rss, succeeded: result.status.nodes.filter((n: any) => n.status === "succeeded").length });
      ctx.log(`  run ${r + 1}: ${result.engineMs} ms, RSS ${memoryOf(pid).rss.toFixed(0)} MB`);
    }
    const rssAfter = fanRuns.at(-1)!.rss;

    // (c) 50 listeners on one execution: they connect while it waits on an approval, then it runs a chain.
    const timed = chainGraph(CHAIN, (i) => `{ "n": ${i}, "at": $millis() }`, [{ id: "gate", type: "approval", config: { message: "go" } }]);
    const id = await api.execute(timed);
    let ready = 0;
    let allReady: () => void = () => {};
    const readyAll = new Promise<void>((r) => (allReady = r));
    ctx.log(`${LISTENERS} listeners on one execution of ${CHAIN} transforms`);
    const listeners = Array.from({ length: LISTENERS }, () => {
      let seen = false;
      return listen(session, id, (e) => {
        if (!seen && e.event === "node_waiting") {
          seen = true;
          if (++ready === LISTENERS) allReady();
        }
      });
    });
    await readyAll;
    const released = performance.timeOrigin + performance.now();
    await api.post(`/api/workflow/${id}/continue`, { input: {} });
    const received = await Promise.all(listeners);
    const stored = (await listen(session, id, () => {})).map((e) => `${e.seq}:${e.event}`);
    const inOrder = received.every((list) => list.map((e) => `${e.seq}:${e.event}`).join() === stored.join());
    if (!inOrder) throw new Error("a listener did not receive every stored event exactly once, in order");
    if (stored.map((s) => Number(s.split(":")[0])).some((seq, i) => seq !== i + 1)) throw new Error("stored events are not numbered 1..n");
    // Latency of a node result: from its evaluation ($millis() in its output) to the last listener holding it.
    const latency: number[] = [];
    const finished = received[0]!.filter((e) => e.event === "node_finished" && e.data.node_id?.startsWith("t"));
    for (const e of finished) {
      const last = Math.max(...received.map((list) => list.find((x) => x.seq === e.seq)!.at));
      latency.push(last - e.data.output.at);
    }
    const doneAtLast = Math.max(...received.map((list) => list.at(-1)!.at));
    const lat = summarize(latency);
    const liveEvents = received[0]!.filter((e) => e.at >= released).length;

    const inputs: MeasurementInput[] = [
      { name: `engine per node, ${CHAIN}-node transform chain (vs JSONata direct)`, unit: "ms", value: perNode, baseline: directPerNode, baselineName: "jsonata direct", goal: { on: "value", kind: "max", limit: GOALS.msPerNode }, digits: 3, details: { engineMs: disk.engineMs, directMs: disk.directMs } },
      { name: "  for scale: a bare SQLite commit with fsync (WAL, FULL), same disk", unit: "ms", value: fsyncMs, digits: 3 },
      ...(ram ? [{ name: "engine per node, data dir on /dev/shm (no fsync cost)", unit: "ms", value: ram.perNode, baseline: ram.directPerNode, baselineName: "jsonata direct", digits: 3, details: { engineMs: ram.engineMs } }] : []),
      { name: `${CHAIN}-node chain, POST to done (client)`, unit: "ms", value: disk.wallMs, digits: 1 },
      { name: `${FAN + 2}-node fan-out/fan-in, time (median of ${RUNS.fan})`, unit: "ms", value: median(fanRuns.map((r) => r.ms)), digits: 0, details: fanRuns },
      { name: `${FAN + 2}-node fan-out/fan-in, per node`, unit: "ms", value: median(fanRuns.map((r) => r.ms)) / (FAN + 2), goal: { on: "value", kind: "max", limit: GOALS.msPerNode }, digits: 3 },
      ...(ram ? [{ name: `${FAN + 2}-node fan-out/fan-in, data dir on /dev/shm`, unit: "ms", value: ramFanMs, digits: 0 }] : []),
      { name: `${FAN + 2}-node fan-out/fan-in, nodes succeeded (each run)`, unit: "nodes", value: Math.min(...fanRuns.map((r) => r.succeeded)), goal: { on: "value", kind: "min", limit: FAN + 2 }, digits: 0 },
      { name: "server RSS before the fan-out runs", unit: "MB", value: rssBefore, digits: 0 },
      { name: "server RSS after fan-out run 1", unit: "MB", value: fanRuns[0]!.rss, digits: 0 },
      { name: `server RSS after fan-out run ${RUNS.fan}`, unit: "MB", value: rssAfter, digits: 0 },
      { name: `server RSS, growth per run over runs 2-${RUNS.fan} (least squares)`, unit: "MB", value: slope(fanRuns.slice(1).map((r) => r.rss)), digits: 1 },
      { name: `SSE: node result → last of ${LISTENERS} listeners, p50`, unit: "ms", value: lat.p50, digits: 1, details: lat },
      { name: `SSE: node result → last of ${LISTENERS} listeners, p99`, unit: "ms", value: lat.p99, digits: 1 },
      { name: `SSE: continue → done at the last listener (${liveEvents} events × ${LISTENERS})`, unit: "ms", value: doneAtLast - released, digits: 0 },
    ];
    const notes = [
      ...targets.notes,
      `Hearth (${targets.mode}) on loopback, one SQLite file (each node result committed with fsync); inline graphs through POST /api/workflow/execute`,
      `(a) per node = (finished_at - started_at of the execution) / ${CHAIN}, median of ${RUNS.chain} runs after one warm-up; baseline: the same ${CHAIN} expressions compiled once by the jsonata package and evaluated in order with the same scope, in this process (meanwhile other processes kept ${load.otherCores.toFixed(2)} of the 2 cores busy); the /dev/shm rows run the same on a second server whose data dir is in RAM, where fsync costs nothing`,
      `(b) start → ${FAN} transforms in parallel → one join ($sum over all outputs); RSS of the server 200 ms after each run (the server's GC runs when it likes; nothing forces it): ${fanRuns.map((r) => r.rss.toFixed(0)).join(", ")} MB`,
      `(c) ${LISTENERS} listeners connect while the execution waits on an approval, then continue; every listener received all ${stored.length} stored events in order (ids 1..n); latency from a transform's $millis() to the last listener's receipt`,
    ];
    return { measurements: inputs.map((m) => measurement(SUITE, m)), info: { mode: targets.mode, chain: CHAIN, fan: FAN + 2, listeners: LISTENERS }, notes };
  } finally {
    await hearth?.stop();
    if (ramDir) rmSync(ramDir, { recursive: true, force: true });
  }
}

export const workflowsSuite: Suite = {
  name: SUITE,
  description: "workflow engine: per-node overhead vs JSONata direct, a 1,000-node fan-out/fan-in (time, RSS), events to 50 SSE listeners",
  run,
};
