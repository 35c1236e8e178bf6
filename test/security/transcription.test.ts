// What transcription defends against: audio that decodes to hours (a duration cap read from the
// header before any decoding), decoding that would hold the event loop, sample rates the
// resampler cannot take, ffmpeg output with no end, an upload ffmpeg could read as a playlist
// and fetch URLs from, and model files that do not match their pinned SHA-256.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { cpSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createHarness, defaultWorkspaceId, type Harness } from "../support/harness";
import { makeWav, sine } from "../support/audio";
import { ffmpegArgs, openFfmpegStream } from "../../src/features/transcription/ffmpeg";
import { loadEmbedder } from "../../src/platform/ml/transformers";
import { TEST_MODELS_DIR } from "../support/models";

const ffmpeg = Bun.which("ffmpeg");

/** A WAV of `seconds` of 8-bit mono at `rate`, built without a float copy (hours of audio in a few MB). */
function longWav(seconds: number, rate = 1000): Uint8Array {
  const frames = Math.round(seconds * rate);
  const header = makeWav(new Float32Array(0), { rate, bits: 8 });
  const out = new Uint8Array(header.length + frames).fill(128);
  out.set(header);
  const v = new DataView(out.buffer);
  v.setUint32(4, out.length - 8, true);
  v.setUint32(40, frames, true);
  for (let i = 0; i < frames; i += 7) out[header.length + i] = 128 + ((i * 13) % 9) - 4; // a little noise, not silence
  return out;
}

/** ffmpeg processes this test process started that are still running (Linux /proc). */
const runningFfmpeg = () =>
  readdirSync("/proc/self/task")
    .flatMap((t) => readFileSync(`/proc/self/task/${t}/children`, "utf8").trim().split(/\s+/).filter(Boolean))
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/comm`, "utf8").trim() === "ffmpeg";
      } catch {
        return false;
      }
    });

let h: Harness;
let token: string;

beforeAll(async () => {
  h = await createHarness();
  const jwt = await h.login();
  const ws = await defaultWorkspaceId(h, jwt);
  token = (await h.call("POST", "/api/api-tokens", { token: jwt, body: { product_id: ws, token_name: "audio-security" } })).body.data.token;
});
afterAll(() => h.close());

const upload = (bytes: Uint8Array, name = "audio.wav", signal?: AbortSignal, harness = h, auth = token) => {
  const fd = new FormData();
  fd.append("file", new File([bytes], name));
  fd.append("language", "en");
  return harness.app.handle(new Request("http://hearth.test/api/audio/transcriptions", { method: "POST", headers: { authorization: `Bearer ${auth}` }, body: fd, signal }));
};

describe("decoded duration", () => {
  test("7 hours of 1 kHz 8-bit WAV (25 MB) is 413 naming the 2-hour limit, at once, from its header", async () => {
    const started = performance.now();
    const r = await upload(longWav(7 * 3600 + 1000));
    const body = (await r.json()) as { success: boolean; message: string };
    expect(r.status).toBe(413);
    expect(body.success).toBe(false);
    expect(body.message).toContain("2 hours");
    expect(performance.now() - started).toBeLessThan(3000);
  }, 20_000);

  test("just over the cap is refused, and /health stays prompt while an under-cap WAV is decoded", async () => {
    const over = await upload(longWav(2 * 3600 + 5));
    expect(over.status).toBe(413);
    expect(((await over.json()) as { message: string }).message).toContain("2 h 0 min 5 s");
    // Whisper loaded first, so what is measured is the decoding (and the first windows).
    expect((await upload(makeWav(sine(300, 0.5, 16000), { rate: 16000 }))).status).toBe(200);

    // 1 h 59 min at 1 kHz: 115 M samples once resampled to 16 kHz; the request is dropped after the measurement.
    const leaver = new AbortController();
    const pending = upload(longWav(2 * 3600 - 60), "long.wav", leaver.signal).catch((e) => e);
    const latencies: number[] = [];
    const until = performance.now() + 4000;
    while (performance.now() < until) {
      const t0 = performance.now();
      const health = await h.call("GET", "/health");
      latencies.push(performance.now() - t0);
      expect(health.status).toBe(200);
      await Bun.sleep(25);
    }
    leaver.abort();
    await pending;
    // The event loop was never held (before: over a minute, decoding and resampling on it). The
    // bound is loose because the test machine's two cores are shared with Whisper's threads.
    latencies.sort((a, b) => a - b);
    expect(latencies.length).toBeGreaterThan(40);
    expect(latencies[Math.floor(latencies.length / 2)]!).toBeLessThan(50);
    expect(latencies.at(-1)!).toBeLessThan(1000);
  }, 60_000);
});

describe("sample rates", () => {
  test("1 kHz to 192 kHz work; faster rates are a 415 naming the supported range, never a 500", async () => {
    for (const rate of [1000, 96000, 192000]) {
      const r = await upload(makeWav(sine(300, 0.3, rate), { rate }));
      expect({ rate, status: r.status }).toEqual({ rate, status: 200 });
    }
    for (const rate of [192001, 384000, 500000, 768000, 999]) {
      const r = await upload(makeWav(sine(300, 0.05, rate), { rate }));
      const body = (await r.json()) as { message: string };
      expect({ rate, status: r.status }).toEqual({ rate, status: 415 });
      expect(body.message).toContain("1,000 to 192,000 Hz");
    }
  }, 90_000);
});

describe.skipIf(!ffmpeg)("ffmpeg", () => {
  const encode = async (args: string[]) => {
    const proc = Bun.spawn([ffmpeg!, "-hide_banner", "-loglevel", "error", ...args, "pipe:1"], { stdout: "pipe" });
    const out = new Uint8Array(await new Response(proc.stdout).arrayBuffer());
    expect(await proc.exited).toBe(0);
    return out;
  };

  test("decoder output past the cap stops ffmpeg and is 413 naming the limit", async () => {
    const small = await createHarness({ HEARTH_AUDIO_MAX_MINUTES: "1" });
    try {
      const jwt = await small.login();
      const mp3 = await encode(["-f", "lavfi", "-i", "sine=frequency=300:duration=75:sample_rate=16000", "-b:a", "16k", "-f", "mp3"]);
      const started = performance.now();
      const r = await upload(mp3, "long.mp3", undefined, small, jwt);
      const body = (await r.json()) as { message: string };
      expect(r.status).toBe(413);
      expect(body.message).toContain("1 minute");
      expect(performance.now() - started).toBeLessThan(10_000);
      expect(small.services.transcriber.stats().runs).toBe(0);
      await Bun.sleep(100);
      expect(runningFfmpeg()).toEqual([]); // killed at the cap, not left decoding
    } finally {
      await small.close();
    }
  }, 60_000);

  test("an upload is never read as an HLS playlist: ffmpeg fetches nothing", async () => {
    const hits: string[] = [];
    const server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: (req) => (hits.push(req.url), new Response(new Uint8Array(4096))) });
    try {
      const base = `http://127.0.0.1:${server.port}`;
      const playlist = new TextEncoder().encode(`#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXTINF:10.0,\n${base}/seg0.mp3\n#EXTINF:10.0,\nfile:///etc/passwd\n#EXT-X-ENDLIST\n`);
      const id3 = new Uint8Array([0x49, 0x44, 0x33, 4, 0, 0, 0, 0, 0, 0]);
      for (const [name, bytes] of [["list.m3u8", playlist], ["tagged.mp3", new Uint8Array([...id3, ...playlist])]] as const) {
        const r = await upload(bytes, name);
        expect({ name, status: r.status }).toEqual({ name, status: 415 });
      }
      // Even handed to ffmpeg directly as if it were an MP3, the playlist is not followed.
      const stream = openFfmpegStream(ffmpeg!, playlist, "mp3", { maxSeconds: 60 });
      await expect(stream.measure()).rejects.toMatchObject({ status: 400 });
      await Bun.sleep(200);
      expect(hits).toEqual([]);
      const args = ffmpegArgs("ogg");
      expect(args.slice(0, args.indexOf("-i"))).toEqual(expect.arrayContaining(["-protocol_whitelist", "pipe", "-f", "ogg"]));
    } finally {
      server.stop(true);
    }
  }, 30_000);
});

describe("model pins", () => {
  test("a model file that does not match its pinned SHA-256 is refused online too", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hearth-tampered-"));
    const id = "onnx-community/all-MiniLM-L6-v2-ONNX";
    cpSync(join(TEST_MODELS_DIR, id), join(dir, id), { recursive: true });
    const config = JSON.parse(await Bun.file(join(dir, id, "config.json")).text());
    writeFileSync(join(dir, id, "config.json"), JSON.stringify({ ...config, hidden_act: "relu" }));
    for (const offline of [true, false]) {
      await expect(loadEmbedder({ modelsDir: dir, model: id, offline })).rejects.toThrow("pinned SHA-256");
    }
  }, 60_000);
});
