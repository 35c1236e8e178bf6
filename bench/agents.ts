// Agents and MCP suite: the agent loop's overhead per tool round trip (the slope between an agent
// that searches three times and one that searches once, less the tools' own time and the model
// server's own answers timed directly), and search_knowledge over MCP against the same search over
// REST, in one run on the real server.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { handbook } from "./lib/corpus";
import { openSession, upload, waitForEmbedder, waitReady } from "./lib/hearth-api";
import { baseEnv, startServer, type RunningServer } from "./lib/servers";
import { median, summarize } from "./lib/stats";
import { measurement, type MeasurementInput, type Suite, type SuiteContext } from "./lib/suite";
import { prepareTargets, startHearth } from "./lib/targets";

const SUITE = "agents";
const EMAIL = "bench@localhost";
const RUNS = 15;
const SEARCHES = 40;
const GOALS = { perStepMs: 10, mcpRatio: 1.3 };

const post = async (url: string, token: string, body: unknown) => {
  const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${token}` }, body: JSON.stringify(body) });
  const json = (await res.json()) as { data: any };
  if (!res.ok) throw new Error(`${url} answered ${res.status}: ${JSON.stringify(json).slice(0, 300)}`);
  return json.data;
};

/** One model turn asked of the fake directly, streamed to its end, as Hearth asks it. */
async function directTurn(ollamaUrl: string, toolResults: number, wanted: number) {
  const t0 = performance.now();
  const messages = [{ role: "system", content: "Be useful." }, { role: "user", content: `steps=${wanted}` }, ...Array.from({ length: toolResults }, () => ({ role: "tool", content: "passages" }))];
  const res = await fetch(`${ollamaUrl}/api/chat`, { method: "POST", body: JSON.stringify({ model: "llama3.2", stream: true, messages, tools: [{ type: "function", function: { name: "search_knowledge" } }] }) });
  await res.text();
  return performance.now() - t0;
}

async function run(ctx: SuiteContext) {
  const targets = await prepareTargets(ctx);
  const { modelsDir } = ctx;
  const password = `bench-${crypto.randomUUID()}`;
  const model = await startServer({ name: "tool-model", cmd: [ctx.bun, join(ctx.root, "bench/fixtures/tool-model-server.ts")], env: baseEnv({}), cwd: ctx.root });
  const ollamaUrl = `http://${model.host}:${model.port}`;
  const dataDir = join(ctx.tmp, "agents");
  mkdirSync(dataDir);
  let hearth: RunningServer | undefined;
  try {
    hearth = await startHearth(ctx, targets, { HEARTH_DATA_DIR: dataDir, HEARTH_MODELS_DIR: modelsDir, HEARTH_ADMIN_EMAIL: EMAIL, HEARTH_ADMIN_PASSWORD: password, HEARTH_OFFLINE: "1", HEARTH_OLLAMA_URL: ollamaUrl, HEARTH_RATE_LIMIT: "1000000", HEARTH_RATE_LIMIT_STRICT: "1000000" });
    const s = await openSession(hearth, EMAIL, password);
    await waitForEmbedder(s.base, 60_000);
    const queued = await upload(s, "handbook.md", new TextEncoder().encode(handbook(7, 10, 6)));
    await waitReady(s, queued.id, { pollMs: 100, timeoutMs: 180_000, t0: performance.now() });
    const agent = await post(`${s.base}/api/agent-base`, s.jwt, { product_id: s.productId, name: "bench", system_prompt: "Be useful.", tools: ["search_knowledge"] });
    await fetch(`${s.base}/api/workflow-base/${agent.workflow_id}`, {
      method: "PUT",
      headers: { "content-type": "application/json", authorization: `Bearer ${s.jwt}` },
      body: JSON.stringify({ graph: { nodes: [{ id: "start", type: "trigger.manual" }, { id: "agent", type: "agent", config: { agent_id: agent.id, input: "{{ input.query }}", max_steps: 6 } }], edges: [{ from: "start", to: "agent" }] } }),
    });

    /** An invocation with `steps` searches: wall time, and the tools' own time as Hearth recorded it. */
    const invoke = async (steps: number) => {
      const t0 = performance.now();
      const e = await post(`${s.base}/api/agent-base/${agent.id}/invoke`, s.apiToken, { input: { query: `steps=${steps}` }, wait: true });
      const total = performance.now() - t0;
      if (e.status !== "succeeded") throw new Error(`agent run ${e.status}: ${e.error}`);
      const detail = (await (await fetch(`${s.base}/api/agent-base/${agent.id}/executions/${e.id}`, { headers: { authorization: `Bearer ${s.jwt}` } })).json()) as { data: { tool_calls: { duration_ms: number }[] } };
      const tools = (detail.data.tool_calls as { duration_ms: number }[]).reduce((n, c) => n + c.duration_ms, 0);
      return { total, tools };
    };
    ctx.log(`timing ${RUNS} agent runs with 1 and with 3 searches, and the model's turns directly`);
    for (let i = 0; i < 3; i++) await invoke(1);
    const one: number[] = [];
    const three: number[] = [];
    const direct1: number[] = [];
    const direct3: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const a = await invoke(1);
      one.push(a.total - a.tools);
      const b = await invoke(3);
      three.push(b.total - b.tools);
      direct1.push((await directTurn(ollamaUrl, 0, 1)) + (await directTurn(ollamaUrl, 1, 1)));
      let d = 0;
      for (let k = 0; k <= 3; k++) d += await directTurn(ollamaUrl, k, 3);
      direct3.push(d);
    }
    const perStep = (median(three) - median(direct3) - (median(one) - median(direct1))) / 2;

    ctx.log(`timing ${SEARCHES} searches over MCP and over REST, alternating`);
    const transport = new StreamableHTTPClientTransport(new URL(`${s.base}/mcp`), { requestInit: { headers: { authorization: `Bearer ${s.apiToken}` } } });
    const client = new Client({ name: "bench", version: "1" });
    await client.connect(transport);
    await client.callTool({ name: "get_my_profile", arguments: {} });
    const mcp: number[] = [];
    const rest: number[] = [];
    const queries = ["how are backups verified", "who rotates the signing key", "alert escalation", "refund policy", "laptop for new hires"];
    for (let i = 0; i < SEARCHES + 5; i++) {
      const q = queries[i % queries.length]!;
      let t0 = performance.now();
      await client.callTool({ name: "search_knowledge", arguments: { query: q, top_k: 5 } });
      const m = performance.now() - t0;
      t0 = performance.now();
      await post(`${s.base}/api/knowledge-base/embeddings`, s.apiToken, { query: q, top_k: 5, mode: "hybrid" });
      const r = performance.now() - t0;
      if (i >= 5) {
        mcp.push(m);
        rest.push(r);
      }
    }
    await client.close();
    const ms = summarize(mcp);
    const rs = summarize(rest);
    const inputs: MeasurementInput[] = [
      { name: "agent overhead per tool round trip (slope 1 → 3 searches)", unit: "ms", value: perStep, goal: { on: "value", kind: "max", limit: GOALS.perStepMs }, digits: 2 },
      { name: "agent run with 1 search, less the tools' time (vs the model direct)", unit: "ms", value: median(one), baseline: median(direct1), baselineName: "model direct", digits: 2 },
      { name: "agent run with 3 searches, less the tools' time (vs the model direct)", unit: "ms", value: median(three), baseline: median(direct3), baselineName: "model direct", digits: 2 },
      { name: "search_knowledge over MCP vs REST, p50", unit: "ms", value: ms.p50, baseline: rs.p50, baselineName: "REST", goal: { on: "ratio", kind: "max", limit: GOALS.mcpRatio }, digits: 2 },
      { name: "search_knowledge over MCP vs REST, p95", unit: "ms", value: ms.p95, baseline: rs.p95, baselineName: "REST", goal: { on: "ratio", kind: "max", limit: GOALS.mcpRatio }, digits: 2 },
    ];
    const notes = [...targets.notes, `Hearth (${targets.mode}) and a tool-calling Ollama-protocol fake (own process, no delay) on loopback; ${RUNS} runs each, medians; MCP through the SDK's Streamable HTTP client on one session, REST: POST /api/knowledge-base/embeddings mode hybrid, same queries alternating`];
    return { measurements: inputs.map((m) => measurement(SUITE, m)), info: { mode: targets.mode }, notes };
  } finally {
    await hearth?.stop();
    await model.stop();
  }
}

export const agentsSuite: Suite = { name: SUITE, description: "agents: loop overhead per tool round trip; MCP search_knowledge vs REST", run };
