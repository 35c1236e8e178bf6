// Assistant suite: time to the first SSE byte and to the first `token` event of POST /api/assistant/chat,
// against asking the same Ollama-protocol server directly for its first streamed piece, in one run.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { handbook } from "./lib/corpus";
import { openSession, upload, waitForEmbedder, waitReady, type Session } from "./lib/hearth-api";
import { baseEnv, startServer, type RunningServer } from "./lib/servers";
import { summarize, type LatencySummary } from "./lib/stats";
import { measurement, type MeasurementInput, type Suite, type SuiteContext } from "./lib/suite";
import { prepareTargets, startHearth } from "./lib/targets";

const SUITE = "assistant";
const EMAIL = "bench@localhost";
const MODEL = "llama3.2";
/** The fake model writes a piece every 20 ms (50 tokens/s, a small local model on a CPU). */
const PIECE_MS = 20;
const RUNS = { warmup: 3, count: 30 };
const QUESTIONS = ["How are nightly backups verified?", "Who rotates the signing key?", "What happens when an alert fires?", "How is a refund issued?", "Where do new hires get a laptop?"];
const GOALS = { firstByteMs: 30, addedBeforeTokenMs: 15 };

interface Timing {
  firstByteMs: number;
  firstTokenMs: number;
}

/** Times one streamed request: until the first body byte, and until `isFirstToken` accepts the text so far. */
async function timeStream(url: string, init: RequestInit, isFirstToken: (text: string) => boolean): Promise<Timing> {
  const t0 = performance.now();
  const res = await fetch(url, init);
  if (!res.ok) throw new Error(`${url} answered ${res.status}: ${(await res.text()).slice(0, 200)}`);
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = "";
  let firstByteMs = Number.NaN;
  let firstTokenMs = Number.NaN;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    if (Number.isNaN(firstByteMs)) firstByteMs = performance.now() - t0;
    text += decoder.decode(value, { stream: true });
    if (Number.isNaN(firstTokenMs) && isFirstToken(text)) {
      firstTokenMs = performance.now() - t0;
      await reader.cancel();
      break;
    }
  }
  return { firstByteMs, firstTokenMs };
}

async function measure(count: number, warmup: number, once: (i: number) => Promise<Timing>) {
  for (let i = 0; i < warmup; i++) await once(i);
  const runs: Timing[] = [];
  for (let i = 0; i < count; i++) runs.push(await once(i));
  return { firstByte: summarize(runs.map((r) => r.firstByteMs)), firstToken: summarize(runs.map((r) => r.firstTokenMs)) };
}

async function run(ctx: SuiteContext) {
  const targets = await prepareTargets(ctx);
  const { modelsDir } = ctx;
  const password = `bench-${crypto.randomUUID()}`;
  const ollama = await startServer({ name: "ollama-fake", cmd: [ctx.bun, join(ctx.root, "bench/fixtures/ollama-server.ts"), String(PIECE_MS)], env: baseEnv({}), cwd: ctx.root });
  const ollamaUrl = `http://${ollama.host}:${ollama.port}`;
  const dataDir = join(ctx.tmp, "assistant");
  mkdirSync(dataDir);
  let hearth: RunningServer | undefined;
  try {
    hearth = await startHearth(ctx, targets, { HEARTH_DATA_DIR: dataDir, HEARTH_MODELS_DIR: modelsDir, HEARTH_ADMIN_EMAIL: EMAIL, HEARTH_ADMIN_PASSWORD: password, HEARTH_OFFLINE: "1", HEARTH_OLLAMA_URL: ollamaUrl, HEARTH_LLM_MODEL: MODEL, HEARTH_RATE_LIMIT: "1000000", HEARTH_RATE_LIMIT_STRICT: "1000000" });
    const session: Session = await openSession(hearth, EMAIL, password);
    await waitForEmbedder(session.base, 60_000);
    const md = new TextEncoder().encode(handbook(7, 10, 6));
    const t0 = performance.now();
    const queued = await upload(session, "handbook.md", md);
    const ingested = await waitReady(session, queued.id, { pollMs: 100, timeoutMs: 180_000, t0 });
    ctx.log(`Hearth up (${targets.mode}) with Ollama fake at ${ollamaUrl}; handbook.md: ${ingested.file.chunk_count} chunks`);

    ctx.log(`timing ${RUNS.count} chats through Hearth and ${RUNS.count} direct Ollama chats, alternating suites`);
    const direct = () =>
      measure(RUNS.count, RUNS.warmup, (i) =>
        timeStream(
          `${ollamaUrl}/api/chat`,
          { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: MODEL, stream: true, messages: [{ role: "user", content: QUESTIONS[i % QUESTIONS.length] }] }) },
          (text) => text.includes('"done":false'),
        ),
      );
    const viaHearth = () =>
      measure(RUNS.count, RUNS.warmup, (i) =>
        timeStream(
          `${session.base}/api/assistant/chat`,
          { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${session.apiToken}` }, body: JSON.stringify({ message: QUESTIONS[i % QUESTIONS.length] }) },
          (text) => text.includes("event: token"),
        ),
      );
    const d1 = await direct();
    const h1 = await viaHearth();
    const d2 = await direct();
    const h2 = await viaHearth();
    const p50 = (a: LatencySummary, b: LatencySummary) => (a.p50 + b.p50) / 2;
    const p95 = (a: LatencySummary, b: LatencySummary) => (a.p95 + b.p95) / 2;
    const hearthToken = p50(h1.firstToken, h2.firstToken);
    const directToken = p50(d1.firstToken, d2.firstToken);
    const inputs: MeasurementInput[] = [
      { name: "first SSE byte, p50", unit: "ms", value: p50(h1.firstByte, h2.firstByte), goal: { on: "value", kind: "max", limit: GOALS.firstByteMs }, digits: 2 },
      { name: "first SSE byte, p95", unit: "ms", value: p95(h1.firstByte, h2.firstByte), digits: 2 },
      { name: "first token event, p50 (Hearth vs Ollama direct)", unit: "ms", value: hearthToken, baseline: directToken, baselineName: "Ollama direct", digits: 2 },
      { name: "first token event, p95 (Hearth vs Ollama direct)", unit: "ms", value: p95(h1.firstToken, h2.firstToken), baseline: p95(d1.firstToken, d2.firstToken), baselineName: "Ollama direct", digits: 2 },
      { name: "added before the first token, p50", unit: "ms", value: hearthToken - directToken, goal: { on: "value", kind: "max", limit: GOALS.addedBeforeTokenMs }, digits: 2 },
    ];
    const notes = [
      ...targets.notes,
      `Hearth (${targets.mode}) and the Ollama-protocol fake (its own process, a piece every ${PIECE_MS} ms, first piece at once) on loopback; each chat is a new session (no rewrite), hybrid retrieval over ${ingested.file.chunk_count} chunks (query embedding included), ${RUNS.count} timed runs per round after ${RUNS.warmup} warm-ups, rounds direct, Hearth, direct, Hearth; p50/p95 are means of the two rounds`,
    ];
    return { measurements: inputs.map((m) => measurement(SUITE, m)), info: { mode: targets.mode, pieceMs: PIECE_MS, chunks: ingested.file.chunk_count }, notes };
  } finally {
    await hearth?.stop();
    await ollama.stop();
  }
}

export const assistantSuite: Suite = {
  name: SUITE,
  description: "assistant chat: time to first SSE byte and first token event vs the Ollama-protocol server called directly",
  run,
};
