// Hostile-audio suite: /health p99 and server RSS while an upload built to exhaust the transcriber
// is processed (7 hours of 1 kHz 8-bit WAV in 25 MB; just under the 2-hour cap; hours of
// low-bitrate MP3 through ffmpeg), each against the same server idle just before.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { makeWav, sine } from "../test/support/audio";
import { childrenOf, memoryOf, openSession, watchMemory } from "./lib/hearth-api";
import { baseEnv, startServer } from "./lib/servers";
import { summarize } from "./lib/stats";
import { measurement, type MeasurementInput, type Suite, type SuiteContext } from "./lib/suite";
import { prepareTargets } from "./lib/targets";

const SUITE = "hostile-audio";
const EMAIL = "bench@localhost";
const IDLE_MS = 5_000;
/** How long /health is polled after the upload starts (the upload is then dropped, the server stopped). */
const WINDOW_MS = 20_000;
const GOALS = { rssMb: 1024, p99Ratio: 2 };

/** `seconds` of 1 kHz 8-bit mono WAV with a little noise, built without a float copy. */
export function longWav(seconds: number, rate = 1000): Uint8Array {
  const frames = Math.round(seconds * rate);
  const header = makeWav(new Float32Array(0), { rate, bits: 8 });
  const out = new Uint8Array(header.length + frames).fill(128);
  out.set(header);
  const v = new DataView(out.buffer);
  v.setUint32(4, out.length - 8, true);
  v.setUint32(40, frames, true);
  for (let i = 0; i < frames; i += 7) out[header.length + i] = 128 + ((i * 13) % 9) - 4;
  return out;
}

/** `seconds` of a quiet tone as 8 kbps MP3 (ffmpeg), or null without ffmpeg. */
async function longMp3(seconds: number): Promise<Uint8Array | null> {
  const ffmpeg = Bun.which("ffmpeg");
  if (!ffmpeg) return null;
  const proc = Bun.spawn([ffmpeg, "-hide_banner", "-loglevel", "error", "-f", "lavfi", "-i", `sine=frequency=300:duration=${seconds}:sample_rate=8000`, "-ac", "1", "-b:a", "8k", "-f", "mp3", "pipe:1"], { stdout: "pipe" });
  const out = new Uint8Array(await new Response(proc.stdout).arrayBuffer());
  return (await proc.exited) === 0 ? out : null;
}

/** Sequential GET /health for `ms` (a request still open at the end counts with its time so far); latencies in ms, and how many were not 200. */
async function pollHealth(base: string, ms: number): Promise<{ samples: number[]; failed: number }> {
  const samples: number[] = [];
  let failed = 0;
  const until = performance.now() + ms;
  while (performance.now() < until) {
    const t0 = performance.now();
    try {
      const res = await fetch(`${base}/health`, { signal: AbortSignal.timeout(Math.max(1, until - t0)) });
      await res.arrayBuffer();
      if (res.status !== 200) failed++;
    } catch {
      failed++; // timed out at the end of the window: the time it waited is the sample
    }
    samples.push(performance.now() - t0);
  }
  return { samples, failed };
}

interface Hostile {
  key: string;
  name: string;
  file: string;
  bytes: Uint8Array;
}

async function measureOne(ctx: SuiteContext, cmd: string[], modelsDir: string, input: Hostile) {
  const password = `bench-${crypto.randomUUID()}`;
  const dataDir = join(ctx.tmp, input.key);
  mkdirSync(dataDir);
  const env = baseEnv({ HEARTH_DATA_DIR: dataDir, HEARTH_MODELS_DIR: modelsDir, HEARTH_ADMIN_EMAIL: EMAIL, HEARTH_ADMIN_PASSWORD: password, HEARTH_OFFLINE: "1", HEARTH_RATE_LIMIT: "1000000", HEARTH_RATE_LIMIT_STRICT: "1000000" });
  const server = await startServer({ name: "hearth", cmd: [...cmd, "serve", "--host", "127.0.0.1", "--port", "0"], env, cwd: ctx.root }, 30_000);
  try {
    const session = await openSession(server, EMAIL, password);
    const transcribe = (bytes: Uint8Array, name: string, signal?: AbortSignal) => {
      const form = new FormData();
      form.append("file", new File([bytes], name));
      form.append("language", "en");
      return fetch(`${session.base}/api/audio/transcriptions`, { method: "POST", headers: { authorization: `Bearer ${session.apiToken}` }, body: form, signal });
    };
    ctx.log(`${input.key}: warm-up (Whisper loads), then ${IDLE_MS / 1000} s idle`);
    const warm = await transcribe(makeWav(sine(300, 1, 16000), { rate: 16000 }), "warm.wav");
    if (warm.status !== 200) throw new Error(`warm-up answered ${warm.status}: ${(await warm.text()).slice(0, 200)}`);
    const idlePoll = await pollHealth(session.base, IDLE_MS);
    const idle = summarize(idlePoll.samples);
    const idleRss = memoryOf(server.pid);

    ctx.log(`${input.key}: uploading ${(input.bytes.length / 2 ** 20).toFixed(1)} MB, /health polled for ${WINDOW_MS / 1000} s`);
    const mem = watchMemory(server.pid, 100);
    const leave = new AbortController();
    const t0 = performance.now();
    const answer = transcribe(input.bytes, input.file, leave.signal).then(
      async (r) => ({ status: r.status, ms: performance.now() - t0, message: ((await r.json().catch(() => ({}))) as { message?: string }).message ?? "" }),
      () => ({ status: 0, ms: performance.now() - t0, message: "no answer within the window (dropped)" }),
    );
    const duringPoll = await pollHealth(session.base, WINDOW_MS);
    const during = summarize(duringPoll.samples);
    const children = childrenOf(server.pid).length;
    leave.abort();
    const peak = mem.stop();
    return { idle, idleRss, during, peak, answer: await answer, children, notOk: idlePoll.failed + duringPoll.failed };
  } finally {
    await server.stop();
  }
}

async function run(ctx: SuiteContext) {
  const targets = await prepareTargets(ctx);
  const { modelsDir } = ctx;
  const inputs: Hostile[] = [
    { key: "wav-7h", name: "7 h 1 kHz 8-bit WAV (25 MB)", file: "seven-hours.wav", bytes: longWav((25 * 2 ** 20 - 44) / 1000) },
    { key: "wav-2h", name: "1 h 59 min 1 kHz 8-bit WAV (under the 2 h cap)", file: "two-hours.wav", bytes: longWav(2 * 3600 - 60) },
  ];
  const mp3 = await longMp3(3 * 3600);
  if (mp3) inputs.push({ key: "mp3-3h", name: "3 h 8 kbps MP3 through ffmpeg", file: "three-hours.mp3", bytes: mp3 });

  const rows: MeasurementInput[] = [];
  const notes: string[] = [...targets.notes];
  const details: Record<string, unknown> = {};
  for (const input of inputs) {
    const r = await measureOne(ctx, targets.hearth, modelsDir, input);
    details[input.key] = r;
    rows.push(
      { name: `/health p99 while ${input.name} is processed`, unit: "ms", value: r.during.p99, baseline: r.idle.p99, baselineName: "same server idle", goal: { on: "ratio", kind: "max", limit: GOALS.p99Ratio }, digits: 1, details: { during: r.during, idle: r.idle } },
      { name: `server peak RSS while ${input.name} is processed`, unit: "MB", value: r.peak.rss, baseline: r.idleRss.rss, baselineName: "idle RSS before the upload", goal: { on: "value", kind: "max", limit: GOALS.rssMb }, digits: 0 },
    );
    notes.push(
      `${input.key}: ${(input.bytes.length / 2 ** 20).toFixed(1)} MB; answer ${r.answer.status || "none"} after ${(r.answer.ms / 1000).toFixed(1)} s${r.answer.message ? ` ("${r.answer.message.slice(0, 120)}")` : ""}; /health during: ${r.during.count} requests (${r.notOk} not 200 in all), p50 ${r.during.p50.toFixed(1)} ms, max ${r.during.max.toFixed(0)} ms (idle p50 ${r.idle.p50.toFixed(1)}, p99 ${r.idle.p99.toFixed(1)} ms); ffmpeg child peak RSS ${r.peak.childRss.toFixed(0)} MB`,
    );
  }
  notes.push(`each input on a fresh server after a 1 s warm-up transcription (Whisper loaded); /health polled sequentially by fetch, ${IDLE_MS / 1000} s idle then ${WINDOW_MS / 1000} s from the upload's start; RSS polled every 100 ms (worker threads included)`);
  return { measurements: rows.map((m) => measurement(SUITE, m)), info: { mode: targets.mode, windowMs: WINDOW_MS, idleMs: IDLE_MS, goals: GOALS, details }, notes };
}

export const hostileAudioSuite: Suite = {
  name: SUITE,
  description: "hostile audio: /health p99 and server RSS while 7 h / 2 h WAVs and a 3 h MP3 are processed, vs idle",
  run,
};
