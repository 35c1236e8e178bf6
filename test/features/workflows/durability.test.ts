// kill -9 with executions mid-flight, on the real server process (bun src/main.ts serve): after a
// restart on the same data dir every unfinished execution resumes at its last committed node,
// nothing finished runs twice (the node that was mid-run runs again with the same idempotency
// key), delays and approvals keep waiting, and a paused execution stays paused until continued.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { startHearth } from "../../support/hearth-process";
import { allEvents } from "../../support/sse";

const PASSWORD = "durability-test password";
const CHAIN = 10;
/** The chain node that is in flight when the server is killed. */
const KILLED_AT = 5;

let dir: string;
const procs: Subprocess[] = [];

// The outside world: counts calls per Idempotency-Key, answers after a pause, and never answers
// the first call of chain node h5 (the server is killed while it waits for it).
const calls = new Map<string, number>();
const arrived: string[] = [];
let api: ReturnType<typeof Bun.serve>;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "hearth-durability-"));
  api = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      const key = req.headers.get("idempotency-key") ?? "none";
      const n = (calls.get(key) ?? 0) + 1;
      calls.set(key, n);
      arrived.push(key);
      const body = (await req.json().catch(() => ({}))) as { n?: number };
      if (key.endsWith(`:h${KILLED_AT}`) && n === 1) return new Promise<Response>((resolve) => req.signal.addEventListener("abort", () => resolve(new Response("gone"))));
      await Bun.sleep(new URL(req.url).pathname === "/slow" ? 400 : 60);
      return Response.json({ n: (body.n ?? 0) + 1, key });
    },
  });
});

afterAll(async () => {
  for (const p of procs) if (p.exitCode === null && p.signalCode === null) p.kill("SIGKILL");
  await Promise.all(procs.map((p) => p.exited));
  api.stop(true);
  rmSync(dir, { recursive: true, force: true });
});

/** Starts Hearth on the test's data dir and resolves with its base URL once it listens. */
async function start() {
  const { proc, url } = await startHearth({
    ...process.env,
    HEARTH_DATA_DIR: dir,
    HEARTH_ADMIN_PASSWORD: PASSWORD,
    HEARTH_HTTP_ALLOW: "127.0.0.1",
    HEARTH_RATE_LIMIT: "100000",
    HEARTH_RATE_LIMIT_STRICT: "100000",
    HEARTH_WORKFLOW_CONCURRENCY: "20",
  });
  procs.push(proc);
  return { proc, url };
}

async function poll<T>(what: string, probe: () => Promise<T | undefined>, ms = 20_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(25);
  }
}

const at = (url: string, jwt: string) => ({
  get: async (path: string) => (await (await fetch(`${url}${path}`, { headers: { authorization: `Bearer ${jwt}` } })).json()) as any,
  post: async (path: string, body?: unknown) => {
    const r = await fetch(`${url}${path}`, { method: "POST", headers: { authorization: `Bearer ${jwt}`, "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) });
    return { status: r.status, body: (await r.json()) as any };
  },
});

const login = async (url: string) => {
  const r = await fetch(`${url}/api/auth/login`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ email: "admin@localhost", password: PASSWORD }) });
  return ((await r.json()) as any).data.token as string;
};

const httpNode = (id: string, from: string | null, path = "/step") => ({
  id,
  type: "http",
  config: { method: "POST", url: `${api.url.origin}${path}`, body: from ? `{{ { 'n': nodes.${from}.output.body.n } }}` : { n: 0 } },
});

const chainOf = (...nodes: { id: string }[]) => ({ nodes, edges: nodes.slice(1).map((n, i) => ({ from: nodes[i]!.id, to: n.id })) });

const callsOf = (execution: string, node: string) => calls.get(`${execution}:${node}`) ?? 0;

test("kill -9 with executions mid-flight: resume at the last committed node, nothing finished runs twice", async () => {
  const first = await start();
  let api1 = at(first.url, await login(first.url));
  const ws = (await api1.get("/api/products")).data[0].id as string;
  const execute = async (graph: unknown) => {
    const r = await api1.post("/api/workflow/execute", { graph, product_id: ws });
    expect(r.status).toBe(202);
    return r.body.data.id as string;
  };
  const status = async (id: string) => (await api1.get(`/api/workflow/${id}/status`)).data;
  const node = (s: any, id: string) => s.nodes.find((n: any) => n.node_id === id);

  // 1. A long chain of http nodes, each passing on the previous one's answer.
  const hs = Array.from({ length: CHAIN }, (_, i) => httpNode(`h${i + 1}`, i === 0 ? null : `h${i}`));
  const chain = await execute(chainOf({ id: "start", type: "trigger.manual" } as any, ...hs));
  // 2. A delay that outlives the crash, with a call on either side.
  const delayed = await execute(chainOf({ id: "start", type: "trigger.manual" } as any, httpNode("before", null), { id: "nap", type: "delay", config: { ms: 6_000 } } as any, httpNode("after", "before")));
  // 3. An approval, with a call on either side; the approver's input reaches the last node.
  const approval = await execute(
    chainOf({ id: "start", type: "trigger.manual" } as any, httpNode("before", null), { id: "ask", type: "approval", config: { message: "ship it?" } } as any, {
      id: "after",
      type: "http",
      config: { method: "POST", url: `${api.url.origin}/step`, body: "{{ { 'n': nodes.before.output.body.n, 'by': nodes.ask.output.by } }}" },
    } as any),
  );
  // 4. Paused while its first (slow) call runs: that call finishes, nothing after it starts.
  const paused = await execute(chainOf({ id: "start", type: "trigger.manual" } as any, httpNode("p1", null, "/slow"), httpNode("p2", "p1"), httpNode("p3", "p2")));
  await poll("p1 to be called", async () => (callsOf(paused, "p1") ? true : undefined));
  expect((await api1.post(`/api/workflow/${paused}/pause`)).body.data.status).toBe("paused");

  await poll("the delay and the approval to wait", async () => ((await status(delayed)).status === "waiting" && (await status(approval)).status === "waiting" ? true : undefined));
  await poll("the paused execution to let p1 finish", async () => (node(await status(paused), "p1").status === "succeeded" ? true : undefined));
  await poll(`chain node h${KILLED_AT} to be in flight`, async () => (callsOf(chain, `h${KILLED_AT}`) ? true : undefined));
  const beforeKill = { chain: await status(chain), delayed: await status(delayed), approval: await status(approval), paused: await status(paused) };
  expect(beforeKill.chain.status).toBe("running");
  for (let i = 1; i < KILLED_AT; i++) expect(node(beforeKill.chain, `h${i}`).status).toBe("succeeded");
  expect(node(beforeKill.chain, `h${KILLED_AT}`).status).toBe("running");
  expect(node(beforeKill.delayed, "nap").status).toBe("waiting");
  expect(node(beforeKill.approval, "ask").status).toBe("waiting");
  expect(beforeKill.paused.status).toBe("paused");
  expect(node(beforeKill.paused, "p2").status).toBe("pending");

  first.proc.kill("SIGKILL");
  expect(await first.proc.exited).not.toBe(0);
  expect(first.proc.signalCode).toBe("SIGKILL");

  const second = await start();
  const restartedAt = Date.now();
  api1 = at(second.url, await login(second.url));

  // The chain resumes at h5 (called again, same key) and goes on to the end with h4's answer.
  const chainDone = await poll("the chain to succeed", async () => {
    const s = await status(chain);
    return s.status === "succeeded" || s.status === "failed" ? s : undefined;
  });
  expect(chainDone.status).toBe("succeeded");
  expect(chainDone.output.body.n).toBe(CHAIN);
  for (let i = 1; i <= CHAIN; i++) expect(callsOf(chain, `h${i}`)).toBe(i === KILLED_AT ? 2 : 1);
  expect(node(chainDone, `h${KILLED_AT}`).attempt).toBe(2);
  for (let i = 1; i <= CHAIN; i++) if (i !== KILLED_AT) expect(node(chainDone, `h${i}`).attempt).toBe(1);
  // Finished nodes kept their original times: they were not run again.
  for (let i = 1; i < KILLED_AT; i++) expect(node(chainDone, `h${i}`).finished_at).toBe(node(beforeKill.chain, `h${i}`).finished_at);
  // The stored stream holds both runs of h5 and every event exactly once, in order.
  const events = await allEvents(await fetch(`${second.url}/api/workflow/${chain}/events`, { headers: { authorization: `Bearer ${await login(second.url)}` } }));
  expect(events.map((e) => Number(e.id))).toEqual(events.map((_, i) => i + 1));
  expect(events.filter((e) => e.event === "node_started" && e.data.node_id === `h${KILLED_AT}`).map((e) => e.data.attempt)).toEqual([1, 2]);
  expect(events.filter((e) => e.event === "node_finished" && e.data.status === "succeeded").map((e) => e.data.node_id)).toEqual(["start", ...hs.map((h) => h.id)]);
  expect(events.at(-1)).toMatchObject({ event: "done", data: { status: "succeeded" } });

  // The approval still waits after the restart; continuing it over HTTP finishes the execution.
  const approvalAfter = await status(approval);
  expect(approvalAfter.status).toBe("waiting");
  expect(node(approvalAfter, "ask")).toMatchObject({ status: "waiting", output: { message: "ship it?" } });
  expect(callsOf(approval, "after")).toBe(0);
  const cont = await api1.post(`/api/workflow/${approval}/continue`, { input: { by: "ops" } });
  expect(cont.status).toBe(200);
  const approvalDone = await poll("the approved execution to end", async () => {
    const s = await status(approval);
    return ["succeeded", "failed", "stopped"].includes(s.status) ? s : undefined;
  });
  expect(approvalDone.status).toBe("succeeded");
  expect(approvalDone.output.body).toEqual({ n: 2, key: `${approval}:after` });
  expect([callsOf(approval, "before"), callsOf(approval, "after")]).toEqual([1, 1]);

  // The delay kept its wake-up time across the restart and ends then, not 6 s after the restart.
  const wakeAt = node(beforeKill.delayed, "nap").wake_at as string;
  expect(node(await status(delayed), "nap").wake_at).toBe(wakeAt);
  const delayedDone = await poll("the delay to end", async () => {
    const s = await status(delayed);
    return ["succeeded", "failed", "stopped"].includes(s.status) ? s : undefined;
  });
  expect(delayedDone.status).toBe("succeeded");
  expect(Date.parse(node(delayedDone, "nap").finished_at)).toBeGreaterThanOrEqual(Date.parse(wakeAt));
  // (On a slow machine the restart itself may outlast the delay: then it ends right at the start.)
  expect(Date.parse(node(delayedDone, "nap").finished_at)).toBeLessThan(Math.max(Date.parse(wakeAt), restartedAt) + 3_000);
  expect(delayedDone.output.body.n).toBe(2);
  expect([callsOf(delayed, "before"), callsOf(delayed, "after")]).toEqual([1, 1]);

  // The paused execution stayed paused the whole time (no p2 call), and continue finishes it.
  const pausedAfter = await status(paused);
  expect(pausedAfter.status).toBe("paused");
  expect(node(pausedAfter, "p1").status).toBe("succeeded");
  expect(node(pausedAfter, "p2").status).toBe("pending");
  expect(callsOf(paused, "p2")).toBe(0);
  expect((await api1.post(`/api/workflow/${paused}/continue`)).body.data.status).toBe("running");
  const pausedDone = await poll("the continued execution to end", async () => {
    const s = await status(paused);
    return ["succeeded", "failed", "stopped"].includes(s.status) ? s : undefined;
  });
  expect(pausedDone.status).toBe("succeeded");
  expect(pausedDone.output.body.n).toBe(3);
  expect([1, 2, 3].map((i) => callsOf(paused, `p${i}`))).toEqual([1, 1, 1]);

  // Nothing else was called: every key seen belongs to one of the nodes above.
  expect(arrived.length).toBe(CHAIN + 1 + 2 + 2 + 3);

  second.proc.kill("SIGTERM");
  expect(await second.proc.exited).toBe(0);
}, 90_000);
