// Transcription suite: real-time factor of a 60 s and a 3-minute speech clip through Hearth (POST
// /api/audio/transcriptions on dist/hearth) against the same model called directly through
// transformers.js in this process, alternating, and Hearth's peak RSS over its first request (the
// 3-minute clip, model load included) and over all of them.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import "../src/platform/ml/ort-env";
import { env, pipeline, type AutomaticSpeechRecognitionPipeline } from "@huggingface/transformers";
import { decodeWav } from "../src/features/transcription/wav";
import { makeWav } from "../test/support/audio";
import { memoryOf, openSession } from "./lib/hearth-api";
import { baseEnv, startServer, type RunningServer } from "./lib/servers";
import { measurement, type MeasurementInput, type Suite, type SuiteContext } from "./lib/suite";
import { prepareTargets } from "./lib/targets";

const SUITE = "transcription";
const EMAIL = "bench@localhost";
const MODEL = "Xenova/whisper-tiny";
const CLIP_S = 60;
const FIXTURES = ["backup.wav", "callback.wav", "groceries.wav", "thanks.wav"];
const LONG_S = 180;
const GOALS = { realTime: 10, overhead: 1.1, peakMb: 600 };

/** ~60 s of speech: the fixtures in turn with a second of silence between. */
async function clip(root: string): Promise<Float32Array> {
  const parts = await Promise.all(FIXTURES.map(async (f) => (await decodeWav(new Uint8Array(await Bun.file(join(root, "test/fixtures/audio", f)).arrayBuffer()))).samples));
  const out = new Float32Array(CLIP_S * 16000);
  for (let at = 0, i = 0; at < out.length; i++) {
    const p = parts[i % parts.length]!.subarray(0, out.length - at);
    out.set(p, at);
    at += p.length + 16000;
  }
  return out;
}

/** The 3-minute recording of the transcription tests: the fixtures in turn with 2 s pauses, until 180 s. */
async function longClip(root: string): Promise<Float32Array> {
  const parts = await Promise.all(FIXTURES.map(async (f) => (await decodeWav(new Uint8Array(await Bun.file(join(root, "test/fixtures/audio", f)).arrayBuffer()))).samples));
  const pieces: Float32Array[] = [];
  let length = 0;
  for (let i = 0; length < LONG_S * 16000; i++) {
    pieces.push(parts[i % parts.length]!, new Float32Array(2 * 16000));
    length += parts[i % parts.length]!.length + 2 * 16000;
  }
  const out = new Float32Array(length);
  let at = 0;
  for (const p of pieces) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

async function run(ctx: SuiteContext) {
  const targets = await prepareTargets(ctx);
  const { modelsDir } = ctx;
  const password = `bench-${crypto.randomUUID()}`;
  const dataDir = join(ctx.tmp, "transcription");
  mkdirSync(dataDir);
  const audio = await clip(ctx.root);
  const wav = makeWav(audio, { rate: 16000 });
  const long = await longClip(ctx.root);
  const longWav = makeWav(long, { rate: 16000 });

  env.localModelPath = `${modelsDir}/`;
  env.allowRemoteModels = false;
  const direct = (await pipeline("automatic-speech-recognition", MODEL, { dtype: "q8" })) as AutomaticSpeechRecognitionPipeline;
  const directRun = async (samples = audio) => {
    const t0 = performance.now();
    await direct(samples, { language: "en", task: "transcribe", return_timestamps: true, chunk_length_s: 30, stride_length_s: 5 });
    return (performance.now() - t0) / 1000;
  };

  let hearth: RunningServer | undefined;
  try {
    hearth = await startServer(
      {
        name: "hearth",
        cmd: [...targets.hearth, "serve", "--host", "127.0.0.1", "--port", "0"],
        env: baseEnv({ HEARTH_DATA_DIR: dataDir, HEARTH_MODELS_DIR: modelsDir, HEARTH_ADMIN_EMAIL: EMAIL, HEARTH_ADMIN_PASSWORD: password, HEARTH_OFFLINE: "1", HEARTH_RATE_LIMIT: "1000000", HEARTH_RATE_LIMIT_STRICT: "1000000" }),
        cwd: ctx.root,
      },
      30_000,
    );
    const session = await openSession(hearth, EMAIL, password);
    const hearthRun = async (language?: string, bytes = wav) => {
      const form = new FormData();
      form.append("file", new File([bytes], "clip.wav"));
      form.append("response_format", "verbose_json");
      if (language) form.append("language", language);
      const t0 = performance.now();
      const res = await fetch(`${session.base}/api/audio/transcriptions`, { method: "POST", headers: { authorization: `Bearer ${session.apiToken}` }, body: form });
      if (res.status !== 200) throw new Error(`transcription answered ${res.status}: ${(await res.text()).slice(0, 200)}`);
      const body = (await res.json()) as { segments: unknown[] };
      return { s: (performance.now() - t0) / 1000, segments: body.segments.length };
    };

    const rssBefore = memoryOf(hearth.pid);
    ctx.log(`first request: the ${LONG_S} s clip (Whisper loads in Hearth)`);
    await hearthRun("en", longWav);
    const longPeak = memoryOf(hearth.pid).hwm;
    ctx.log(`warming up (model loads in the direct pipeline)`);
    await directRun();
    ctx.log(`timing ${CLIP_S} s of speech: Hearth, direct, Hearth, direct`);
    const h1 = await hearthRun("en");
    const d1 = await directRun();
    const h2 = await hearthRun("en");
    const d2 = await directRun();
    const detect = await hearthRun();
    ctx.log(`timing ${LONG_S} s of speech: Hearth, direct`);
    const hl = await hearthRun("en", longWav);
    const dl = await directRun(long);
    const mem = memoryOf(hearth.pid);
    const hearthS = (h1.s + h2.s) / 2;
    const directS = (d1 + d2) / 2;
    const longS = long.length / 16000;
    const inputs: MeasurementInput[] = [
      { name: `real-time factor, ${CLIP_S} s clip (× real time, Hearth vs transformers.js direct)`, unit: "×", value: CLIP_S / hearthS, baseline: CLIP_S / directS, baselineName: "transformers.js pipeline, same model", goal: { on: "value", kind: "min", limit: GOALS.realTime }, digits: 1 },
      { name: `wall time, ${CLIP_S} s clip (Hearth over HTTP vs direct)`, unit: "s", value: hearthS, baseline: directS, baselineName: "transformers.js pipeline, same model", goal: { on: "ratio", kind: "max", limit: GOALS.overhead }, digits: 2 },
      { name: `wall time with language detection (no language given)`, unit: "s", value: detect.s, digits: 2 },
      { name: `real-time factor, ${LONG_S} s clip (× real time, Hearth vs transformers.js direct)`, unit: "×", value: longS / hl.s, baseline: longS / dl, baselineName: "transformers.js pipeline, same model", goal: { on: "value", kind: "min", limit: GOALS.realTime }, digits: 1 },
      { name: `Hearth peak RSS (VmHWM) over its first request, the ${LONG_S} s clip (model load included)`, unit: "MB", value: longPeak, baseline: rssBefore.rss, baselineName: "Hearth RSS before the first transcription", goal: { on: "value", kind: "max", limit: GOALS.peakMb }, digits: 0 },
      { name: "Hearth peak RSS (VmHWM) after the runs", unit: "MB", value: mem.hwm, baseline: rssBefore.rss, baselineName: "Hearth RSS before the first transcription", goal: { on: "value", kind: "max", limit: GOALS.peakMb }, digits: 0 },
      { name: "bench process RSS with the direct pipeline loaded", unit: "MB", value: process.memoryUsage().rss / 2 ** 20, digits: 0 },
    ];
    const notes = [
      ...targets.notes,
      `${LONG_S} s clip: the same fixtures with 2 s pauses until ${LONG_S} s (${(long.length / 16000).toFixed(1)} s; the transcription tests' 3-minute recording), Hearth's first request, then timed once more warm against the direct pipeline once`,
      `clip: the four speech fixtures in turn with 1 s pauses, ${CLIP_S} s, 16 kHz mono WAV (${(wav.length / 2 ** 20).toFixed(1)} MB); Hearth: verbose_json, language en, its own windows (≤ 30 s at quiet points), ${h1.segments} segments; direct: pipeline(audio, { chunk_length_s: 30, stride_length_s: 5, return_timestamps: true, language: "en" }); both q8 whisper-tiny from ${modelsDir}; one warm-up each, then alternated`,
    ];
    return { measurements: inputs.map((m) => measurement(SUITE, m)), info: { mode: targets.mode, clipSeconds: CLIP_S, longClipSeconds: longS }, notes };
  } finally {
    await hearth?.stop();
  }
}

export const transcriptionSuite: Suite = {
  name: SUITE,
  description: "transcription: real-time factor of a 60 s and a 3-minute clip through Hearth vs transformers.js direct, peak RSS",
  run,
};
