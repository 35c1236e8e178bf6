// Fairness suite: how long a small upload of workspace B takes while workspace A has 20 large files
// queued, and while workspace C's one large text file is being chunked, vs B alone.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { handbook } from "./lib/corpus";
import { deleteFile, fileState, openSession, upload, waitForEmbedder, waitReady, type Session } from "./lib/hearth-api";
import { baseEnv, startServer } from "./lib/servers";
import { median } from "./lib/stats";
import { measurement, type Suite, type SuiteContext } from "./lib/suite";
import { prepareTargets } from "./lib/targets";

const EMAIL = "bench@localhost";
const BACKLOG = { files: 20, sections: 20, paragraphs: 8 }; // ≈ 100 chunks of ≈ 180 tokens per file
/** One .txt of ≈ 4 MB (a single section): seconds of tokenizing in the inference worker. */
const LARGE = { sections: 1000, paragraphs: 8 };
const ROUNDS = 7;
const POLL_MS = 25;
const TIMEOUT_MS = 120_000;
const GOALS = { ratio: 2 };

const smallNote = (round: number, label: string) =>
  new TextEncoder().encode(`Workspace B, ${label} round ${round}: the badge office is on the second floor and opens at nine.`);

/** Phases of each timed upload (ms from its start: parsed, chunks stored, ready), kept in the JSON. */
const phases: Record<string, { parsedMs?: number; storedMs?: number; readyMs: number }> = {};

/** Uploads into `ws` and waits until ready; ms from the upload's start. */
async function timedUpload(s: Session, ws: string, name: string, bytes: Uint8Array): Promise<number> {
  const t0 = performance.now();
  const file = await upload({ ...s, productId: ws }, name, bytes);
  const done = await waitReady(s, file.id, { pollMs: POLL_MS, timeoutMs: TIMEOUT_MS, t0 });
  if (done.file.status !== "ready") throw new Error(`${name} not ready after ${TIMEOUT_MS} ms`);
  phases[name] = { parsedMs: done.parsedMs, storedMs: done.storedMs, readyMs: performance.now() - t0 };
  return phases[name].readyMs;
}

async function run(ctx: SuiteContext) {
  const targets = await prepareTargets(ctx);
  const { modelsDir } = ctx;
  const password = `bench-${crypto.randomUUID()}`;
  const dataDir = join(ctx.tmp, "fairness");
  mkdirSync(dataDir);
  const server = await startServer(
    {
      name: "hearth",
      cmd: [...targets.hearth, "serve", "--host", "127.0.0.1", "--port", "0"],
      env: baseEnv({ HEARTH_DATA_DIR: dataDir, HEARTH_MODELS_DIR: modelsDir, HEARTH_ADMIN_EMAIL: EMAIL, HEARTH_ADMIN_PASSWORD: password, HEARTH_OFFLINE: "1", HEARTH_RATE_LIMIT: "1000000", HEARTH_RATE_LIMIT_STRICT: "1000000" }),
      cwd: ctx.root,
    },
    30_000,
  );
  try {
    const s = await openSession(server, EMAIL, password);
    await waitForEmbedder(s.base, 60_000);
    const workspace = async (name: string) => {
      const created = await fetch(`${s.base}/api/products`, { method: "POST", headers: { authorization: `Bearer ${s.jwt}`, "content-type": "application/json" }, body: JSON.stringify({ name }) });
      return ((await created.json()) as { data: { id: string } }).data.id;
    };
    const b = await workspace("Workspace B");

    // Warm-up (first parser child, first embed), then B alone.
    await timedUpload(s, b, "warmup.txt", smallNote(0, "warm-up"));
    const solo: number[] = [];
    for (let r = 1; r <= ROUNDS; r++) solo.push(await timedUpload(s, b, `solo-${r}.txt`, smallNote(r, "solo")));
    ctx.log(`B alone: ${solo.map((ms) => ms.toFixed(0)).join(", ")} ms`);

    // C uploads one large text file; B uploads once it is parsed (being chunked). Then it is deleted.
    const c = await workspace("Workspace C");
    const largeText = handbook(7, LARGE.sections, LARGE.paragraphs);
    const large = await upload({ ...s, productId: c }, "c-large.txt", new TextEncoder().encode(largeText));
    while ((await fileState(s, large.id)).progress < 0.1) await Bun.sleep(POLL_MS);
    const duringLarge: number[] = [];
    for (let r = 1; r <= ROUNDS; r++) duringLarge.push(await timedUpload(s, b, `large-${r}.txt`, smallNote(r, "with C's large file")));
    const largeAfter = await fileState(s, large.id);
    const largeStillChunking = largeAfter.status === "processing" && largeAfter.progress < 0.2;
    await deleteFile(s, large.id);
    ctx.log(`B while C's ${(largeText.length / 2 ** 20).toFixed(1)} MB file is chunked: ${duringLarge.map((ms) => ms.toFixed(0)).join(", ")} ms; C still chunking after: ${largeStillChunking}`);

    // A queues 20 large files; B uploads once A's first file is being processed.
    const backlog = [];
    for (let i = 0; i < BACKLOG.files; i++) backlog.push(await upload(s, `a-${i}.txt`, new TextEncoder().encode(handbook(100 + i, BACKLOG.sections, BACKLOG.paragraphs))));
    while ((await fileState(s, backlog[0]!.id)).status === "queued") await Bun.sleep(POLL_MS);
    const loaded: number[] = [];
    const aWaiting: number[] = [];
    for (let r = 1; r <= ROUNDS; r++) {
      const states = await Promise.all(backlog.map((f) => fileState(s, f.id)));
      aWaiting.push(states.filter((f) => f.status !== "ready").length);
      loaded.push(await timedUpload(s, b, `loaded-${r}.txt`, smallNote(r, "with A's backlog")));
    }
    const aReadyAfter = (await Promise.all(backlog.map((f) => fileState(s, f.id)))).filter((f) => f.status === "ready").length;
    ctx.log(`B with A's backlog: ${loaded.map((ms) => ms.toFixed(0)).join(", ")} ms; A files not ready at each upload: ${aWaiting.join(", ")}`);

    const measurements = [
      measurement("fairness", {
        name: "B small upload → ready, A has 20 large files queued (median)",
        unit: "ms",
        value: median(loaded),
        baseline: median(solo),
        baselineName: "B alone",
        goal: { on: "ratio", kind: "max", limit: GOALS.ratio },
        details: { solo, loaded, aWaiting, aReadyAfter, phases },
      }),
      measurement("fairness", {
        // The slowest round: the first upload is the one that would wait for the whole chunking.
        name: `B small upload → ready while C's ${(largeText.length / 2 ** 20).toFixed(0)} MB text file is chunked (slowest)`,
        unit: "ms",
        value: Math.max(...duringLarge),
        baseline: median(solo),
        baselineName: "B alone",
        goal: { on: "ratio", kind: "max", limit: GOALS.ratio },
        details: { solo, duringLarge, largeStillChunking, largeBytes: largeText.length },
      }),
    ];
    const notes = [
      ...targets.notes,
      `C's large file was ${largeStillChunking ? "still being chunked" : "past chunking (the row then measures embedding, not chunking)"} after B's last upload`,
      `A's backlog: ${BACKLOG.files} files of ${BACKLOG.sections}×${BACKLOG.paragraphs} paragraphs each; A files not ready when B uploaded: ${aWaiting.join(", ")}; ${aReadyAfter} of A's files ready by the end`,
      "Ingestion runs two files at once, at most one per workspace; B's upload takes the free slot, and in the inference worker its request waits for at most the request of A (or C) in progress (lanes per workspace, served in turns): a one-chunk sub-batch of embedding, or 16 KB of text being chunked; a one-chunk file is chunked and embedded in one turn",
    ];
    return { measurements, info: { mode: targets.mode, backlog: BACKLOG, large: LARGE, rounds: ROUNDS, solo, loaded, aWaiting, duringLarge }, notes };
  } finally {
    await server.stop();
  }
}

export const fairnessSuite: Suite = {
  name: "fairness",
  description: "a small upload of workspace B while workspace A has 20 large files queued, and while C's 4 MB text file is chunked, vs B alone (goal ≤ 2×). ~1 min",
  run,
};
