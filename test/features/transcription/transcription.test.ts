// Transcription end to end with the real whisper-tiny model: every response format, the official
// OpenAI client, long audio in windows, generated edge cases, the queue, and bad uploads.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI from "openai";
import { createHarness, defaultWorkspaceId, type Harness } from "../../support/harness";
import { makeWav, sine } from "../../support/audio";
import { TEST_MODELS_DIR } from "../../support/models";
import { decodeWav, parseWav } from "../../../src/features/transcription/wav";
import { windows } from "../../../src/features/transcription/windows";

const FIXTURES = join(import.meta.dir, "../../fixtures/audio");
const fixture = async (name: string) => new Uint8Array(await Bun.file(join(FIXTURES, name)).arrayBuffer());
const samplesOf = async (name: string) => (await decodeWav(await fixture(name))).samples;

let h: Harness;
let jwt: string;
let token: string;

beforeAll(async () => {
  h = await createHarness();
  jwt = await h.login();
  const ws = await defaultWorkspaceId(h, jwt);
  token = (await h.call("POST", "/api/api-tokens", { token: jwt, body: { product_id: ws, token_name: "audio" } })).body.data.token;
});
afterAll(() => h.close());

const transcribe = (bytes: Uint8Array, fields: Record<string, string> = {}, auth = token, name = "audio.wav") => {
  const fd = new FormData();
  fd.append("file", new File([bytes], name));
  for (const [k, v] of Object.entries(fields)) fd.append(k, v);
  return h.call("POST", "/api/audio/transcriptions", { token: auth, raw: fd });
};

/** 16 kHz mono samples, linearly interpolated to `rate` (a test-side stand-in for a recorder's rate). */
const toRate = (x: Float32Array, rate: number) =>
  Float32Array.from({ length: Math.floor((x.length * rate) / 16000) }, (_, i) => {
    const at = (i * 16000) / rate;
    const j = Math.floor(at);
    return x[j]! + ((x[Math.min(j + 1, x.length - 1)]! - x[j]!) * (at - j));
  });

/** Threads of this process at nice `value` in scheduling class `policy` (fields 19 and 41 of /proc/self/task/<tid>/stat). */
const threadsAt = (value: number, policy: number): Set<string> =>
  new Set(
    readdirSync("/proc/self/task").filter((tid) => {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      return Number(fields[16]) === value && Number(fields[38]) === policy;
    }),
  );
const SCHED_OTHER = 0;
const SCHED_IDLE = 5;

describe("response formats", () => {
  test("json (default), text, srt, vtt and verbose_json; Whisper's threads run below the HTTP thread", async () => {
    const wav = await fixture("callback.wav");
    const idleBefore = threadsAt(10, SCHED_IDLE);
    const json = await transcribe(wav);
    expect(json.status).toBe(200);
    // The worker and ONNX Runtime's pool threads it started are in the idle class; this thread is not.
    const started = [...threadsAt(10, SCHED_IDLE)].filter((tid) => !idleBefore.has(tid));
    expect(started.length).toBeGreaterThanOrEqual(2);
    expect(threadsAt(0, SCHED_OTHER).has(String(process.pid))).toBe(true);
    expect(json.body.text.toLowerCase()).toContain("call me back");

    const text = await transcribe(wav, { response_format: "text", language: "en" });
    expect(text.headers.get("content-type")).toStartWith("text/plain");
    expect(text.text.toLowerCase()).toContain("call me back");

    const srt = await transcribe(wav, { response_format: "srt", language: "en" });
    expect(srt.text).toMatch(/^1\n00:00:00,000 --> 00:00:0\d,\d{3}\n.*call me back/i);

    const vtt = await transcribe(wav, { response_format: "vtt", language: "en" });
    expect(vtt.headers.get("content-type")).toStartWith("text/vtt");
    expect(vtt.text).toMatch(/^WEBVTT\n\n00:00:00\.000 --> 00:00:0\d\.\d{3}\n/);

    const verbose = await transcribe(wav, { response_format: "verbose_json" });
    expect(verbose.body).toMatchObject({ task: "transcribe", language: "english" });
    expect(verbose.body.duration).toBeCloseTo(2.82, 1);
    expect(verbose.body.segments[0]).toMatchObject({ id: 0, start: 0 });
    expect(verbose.body.segments.at(-1).end).toBeLessThanOrEqual(verbose.body.duration);
  }, 60_000);

  test("the official OpenAI client works against Hearth unchanged", async () => {
    const server = Bun.serve({ port: 0, fetch: (req) => h.app.handle(req) });
    try {
      const client = new OpenAI({ apiKey: token, baseURL: `http://127.0.0.1:${server.port}/api` });
      const file = new File([await fixture("thanks.wav")], "thanks.wav", { type: "audio/wav" });
      const plain = await client.audio.transcriptions.create({ file, model: "whisper-1" });
      expect(plain.text.toLowerCase()).toContain("thank you");
      const verbose = await client.audio.transcriptions.create({ file, model: "whisper-1", response_format: "verbose_json", language: "en", timestamp_granularities: ["segment"] });
      expect(verbose.language).toBe("english");
      expect(verbose.segments?.[0]?.text.toLowerCase()).toContain("thank you");
      const srt = await client.audio.transcriptions.create({ file, model: "whisper-1", response_format: "srt" });
      expect(String(srt)).toContain("-->");
    } finally {
      server.stop(true);
    }
  }, 60_000);
});

describe("audio shapes", () => {
  test("stereo 44.1 kHz, 8-bit and 24-bit WAVs are heard the same", async () => {
    const speech = await samplesOf("callback.wav");
    for (const spec of [{ rate: 44100, channels: 2 }, { rate: 16000, bits: 8 as const }, { rate: 22050, bits: 24 as const }]) {
      const r = await transcribe(makeWav(toRate(speech, spec.rate), spec), { language: "en" });
      expect({ spec, status: r.status }).toEqual({ spec, status: 200 });
      expect(r.body.text.toLowerCase()).toContain("call me back");
    }
  }, 90_000);

  test("silence, near-silence and a click give an empty transcript, not invented text", async () => {
    // Whisper heard these as 760 characters of "Welsh", "Thank you." and "you".
    let seed = 1;
    const hiss = Float32Array.from({ length: 16000 * 10 }, () => ((seed = (seed * 16807) % 2147483647) / 2147483647 - 0.5) * 0.003); // about -60 dBFS
    const cases: [string, Float32Array, Record<string, string>][] = [
      ["10 s of digital silence", new Float32Array(16000 * 10), {}],
      ["3 s of digital silence in English", new Float32Array(16000 * 3), { language: "en" }],
      ["10 s of hiss at -60 dBFS", hiss, {}],
      ["a 10 ms tone", sine(440, 0.01, 16000), {}],
      ["a 10 ms tone in 2 s of silence", Float32Array.from({ length: 32000 }, (_, i) => (i >= 16000 && i < 16160 ? 0.5 * Math.sin(i / 5) : 0)), { language: "en" }],
    ];
    for (const [name, samples, fields] of cases) {
      const r = await transcribe(makeWav(samples, { rate: 16000 }), { response_format: "verbose_json", ...fields });
      expect({ name, status: r.status, text: r.body.text, segments: r.body.segments }).toEqual({ name, status: 200, text: "", segments: [] });
      expect(r.body.duration).toBeCloseTo(samples.length / 16000, 1);
    }
  }, 60_000);

  test("40 s of silence between two sentences holds no segment; both sentences are heard", async () => {
    const [first, second] = await Promise.all(["callback.wav", "groceries.wav"].map(samplesOf));
    const gap = 16000 * 40;
    const audio = new Float32Array(first!.length + gap + second!.length);
    audio.set(first!, 0);
    audio.set(second!, first!.length + gap);
    const quietFrom = first!.length / 16000 + 0.5;
    const quietTo = (first!.length + gap) / 16000 - 0.5;
    const r = await transcribe(makeWav(audio, { rate: 16000 }), { response_format: "verbose_json" });
    expect(r.status).toBe(200);
    expect(r.body.language).toBe("english");
    expect(r.body.text.toLowerCase()).toContain("call me back");
    expect(r.body.text.toLowerCase()).toContain("milk");
    for (const s of r.body.segments as { start: number; end: number; text: string }[]) {
      expect({ ...s, overSilence: s.end > quietFrom && s.start < quietTo }).toEqual({ ...s, overSilence: false });
    }
  }, 60_000);

  test("a 3-minute recording is transcribed whole, its segments in order and in time with the audio", async () => {
    const parts = await Promise.all(["backup.wav", "callback.wav", "groceries.wav", "thanks.wav"].map(samplesOf));
    const pause = new Float32Array(16000 * 2);
    const pieces: Float32Array[] = [];
    const starts: { name: string; at: number }[] = [];
    let length = 0;
    for (let i = 0; length < 16000 * 180; i++) {
      const speech = parts[i % parts.length]!;
      starts.push({ name: ["backup", "callback", "groceries", "thanks"][i % parts.length]!, at: length / 16000 });
      pieces.push(speech, pause);
      length += speech.length + pause.length;
    }
    const long = new Float32Array(length);
    let at = 0;
    for (const p of pieces) {
      long.set(p, at);
      at += p.length;
    }
    expect(windows(long).length).toBeGreaterThanOrEqual(6);
    const r = await transcribe(makeWav(long, { rate: 16000 }), { response_format: "verbose_json", language: "en" });
    expect(r.status).toBe(200);
    const segments = r.body.segments as { start: number; end: number; text: string }[];
    expect(r.body.duration).toBeCloseTo(length / 16000, 0);
    segments.forEach((s, i) => {
      expect(s.end).toBeGreaterThanOrEqual(s.start);
      if (i > 0) expect(s.start).toBeGreaterThanOrEqual(segments[i - 1]!.start);
    });
    // The last minute is there too, not only the first window.
    expect(segments.at(-1)!.end).toBeGreaterThan(length / 16000 - 10);
    // Each "thank you" lands within a few seconds of where thanks.wav was placed.
    const thanks = segments.filter((s) => /thank you/i.test(s.text));
    expect(thanks.length).toBeGreaterThanOrEqual(starts.filter((s) => s.name === "thanks").length - 2);
    for (const s of thanks) expect(starts.filter((x) => x.name === "thanks").some((x) => Math.abs(x.at - s.start) < 4)).toBe(true);
    expect(r.body.text.toLowerCase()).toContain("call me back");
  }, 240_000);

  test("a 2-minute espeak recording gives cues that start in order, end after they start and stay inside the audio, in every format", async () => {
    // espeak-ng (default voice, 22.05 kHz) saying "Hello world. This is a test of the Hearth transcription service.
    // Backups run every night at two o'clock.", 20 times over: whisper-tiny times a "Thank you." after the end of
    // one of its windows, which became a cue ending before it started.
    const { data } = parseWav(await Bun.file(join(import.meta.dir, "fixtures/hearth-test.wav")).bytes());
    const pcm = new Int16Array(data.buffer, data.byteOffset, data.length / 2);
    // The same 16-bit samples back (x / 32767 is written as x), 20 times: what `sox` concatenation makes.
    const long = Float32Array.from({ length: pcm.length * 20 }, (_, i) => pcm[i % pcm.length]! / 32767);
    const wav = makeWav(long, { rate: 22050 });
    const seconds = long.length / 22050;
    expect(seconds).toBeGreaterThan(120);
    const valid = (cues: { start: number; end: number }[], what: string) => {
      expect({ what, count: cues.length > 3 }).toEqual({ what, count: true });
      cues.forEach((c, i) => {
        expect({ what, i, ...c, ok: c.start <= c.end && c.end <= seconds + 0.01 && (i === 0 || c.start >= cues[i - 1]!.start) }).toEqual({ what, i, ...c, ok: true });
      });
    };
    const seconds_ = (t: string) => t.split(/[:,.]/).map(Number).reduce((a, x, i) => (i < 3 ? a * 60 + x : a + x / 1000), 0);
    const cuesOf = (text: string) => [...text.matchAll(/^([\d:,.]+) --> ([\d:,.]+)$/gm)].map((m) => ({ start: seconds_(m[1]!), end: seconds_(m[2]!) }));

    const verbose = await transcribe(wav, { response_format: "verbose_json", language: "en" });
    expect(verbose.status).toBe(200);
    valid(verbose.body.segments, "verbose_json");
    const srt = await transcribe(wav, { response_format: "srt", language: "en" });
    valid(cuesOf(srt.text), "srt");
    const vtt = await transcribe(wav, { response_format: "vtt", language: "en" });
    valid(cuesOf(vtt.text), "vtt");
  }, 240_000);
});

describe("other formats", () => {
  const ffmpeg = Bun.which("ffmpeg");

  test.skipIf(!ffmpeg)("with ffmpeg on the PATH, MP3, Ogg, Opus, M4A, WebM and FLAC are decoded through it", async () => {
    const formats = [
      ["mp3", ["-f", "mp3"]],
      ["ogg", ["-c:a", "libvorbis", "-f", "ogg"]],
      ["opus", ["-c:a", "libopus", "-f", "opus"]],
      ["m4a", ["-c:a", "aac", "-movflags", "frag_keyframe+empty_moov", "-f", "ipod"]],
      ["webm", ["-c:a", "libopus", "-f", "webm"]],
      ["flac", ["-f", "flac"]],
    ] as const;
    for (const [ext, args] of formats) {
      const proc = Bun.spawn([ffmpeg!, "-hide_banner", "-loglevel", "error", "-i", join(FIXTURES, "callback.wav"), ...args, "pipe:1"], { stdout: "pipe" });
      const encoded = new Uint8Array(await new Response(proc.stdout).arrayBuffer());
      expect(await proc.exited).toBe(0);
      const r = await transcribe(encoded, { language: "en" }, token, `callback.${ext}`);
      expect({ ext, status: r.status }).toEqual({ ext, status: 200 });
      expect(r.body.text.toLowerCase()).toContain("call me back");
    }
  }, 120_000);

  test("without ffmpeg, an MP3 is 415 naming what works", async () => {
    // An MP3 frame header is enough for the type check; PATH without ffmpeg for this one server.
    const mp3 = new Uint8Array(4096);
    mp3.set([0x49, 0x44, 0x33, 0x04, 0, 0, 0, 0, 0, 0]);
    mp3.set([0xff, 0xfb, 0x90, 0x64], 10);
    const path = process.env.PATH;
    process.env.PATH = "/nonexistent";
    try {
      const r = await transcribe(mp3, {}, token, "talk.mp3");
      expect(r.status).toBe(415);
      expect(r.body.message).toContain("needs ffmpeg");
      expect(r.body.message).toContain("WAV");
    } finally {
      process.env.PATH = path;
    }
  });
});

describe("bad uploads", () => {
  test("not audio, a liar, truncated, empty, too big, a bad field: 4xx JSON, never 500", async () => {
    const wav = await fixture("callback.wav");
    const pdf = new TextEncoder().encode("%PDF-1.7\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n");
    const cases: [string, Promise<{ status: number; body: { success: boolean; message: string } }>, number, string][] = [
      ["a PDF named .wav", transcribe(pdf, {}, token, "speech.wav"), 415, "not audio"],
      ["text", transcribe(new TextEncoder().encode("hello there, this is not a recording at all"), {}, token, "x.mp3"), 415, "send WAV"],
      ["a truncated WAV", transcribe(wav.subarray(0, 20_000)), 400, "truncated"],
      ["an empty file", transcribe(new Uint8Array(0)), 400, "empty"],
      ["26 MB", transcribe(new Uint8Array(26 * 1024 * 1024)), 413, "25 MB"],
      ["an unknown language", transcribe(wav, { language: "klingon" }), 400, "language"],
      ["an unknown format", transcribe(wav, { response_format: "docx" }), 400, "response_format"],
      ["word timestamps", transcribe(wav, { "timestamp_granularities[]": "word" }), 400, "segment"],
      ["an unknown field", transcribe(wav, { speed: "2" }), 422, "speed"],
    ];
    for (const [name, pending, status, says] of cases) {
      const r = await pending;
      expect({ name, status: r.status, success: r.body.success }).toEqual({ name, status, success: false });
      expect(r.body.message).toContain(says);
    }
    const anonymous = await h.app.handle(new Request("http://hearth.test/api/audio/transcriptions", { method: "POST", body: new FormData() }));
    expect(anonymous.status).toBe(401);
  }, 60_000);
});

describe("the queue", () => {
  test("concurrent requests are served one after another; one whose caller left is skipped", async () => {
    const wav = await fixture("thanks.wav");
    const order: string[] = [];
    const first = transcribe(wav, { language: "en" }).then((r) => (order.push("first"), r));
    const leaver = new AbortController();
    const fd = new FormData();
    fd.append("file", new File([wav], "a.wav"));
    const left = h.app.handle(new Request("http://hearth.test/api/audio/transcriptions", { method: "POST", headers: { authorization: `Bearer ${token}` }, body: fd, signal: leaver.signal })).catch((e) => e);
    const third = transcribe(wav, { language: "en" }).then((r) => (order.push("third"), r));
    leaver.abort();
    const [a, , c] = await Promise.all([first, left, third]);
    expect(a.status).toBe(200);
    expect(c.status).toBe(200);
    expect(order).toEqual(["first", "third"]);
    expect(h.services.transcriber.stats().skipped).toBeGreaterThanOrEqual(1);
  }, 60_000);
});

describe("without the model", () => {
  test("/health says why and a request is 503", async () => {
    const empty = mkdtempSync(join(tmpdir(), "hearth-no-models-"));
    const bare = await createHarness({ HEARTH_MODELS_DIR: empty, HEARTH_OFFLINE: "1" });
    try {
      const health = await bare.call("GET", "/health", { token: await bare.login() }); // details are for owners/admins
      expect(health.body.checks.transcriber.status).toBe("unavailable");
      expect(health.body.checks.transcriber.reason).toContain("Xenova/whisper-tiny");
      const fd = new FormData();
      fd.append("file", new File([await fixture("thanks.wav")], "a.wav"));
      const r = await bare.call("POST", "/api/audio/transcriptions", { token: await bare.login(), raw: fd });
      expect(r.status).toBe(503);
      expect(r.body.message).toContain("Xenova/whisper-tiny");
    } finally {
      await bare.close();
    }
  }, 30_000);

  test("a model file that does not match its pin: each request is 503 and /health says unavailable, not ok", async () => {
    // The real models, linked file by file, except Whisper's encoder: a copy with 100 bytes zeroed.
    const dir = mkdtempSync(join(tmpdir(), "hearth-bad-model-"));
    const link = (from: string, to: string) => {
      for (const entry of readdirSync(from, { withFileTypes: true })) {
        if (entry.isDirectory()) link(join(from, entry.name), (mkdirSync(join(to, entry.name)), join(to, entry.name)));
        else symlinkSync(join(from, entry.name), join(to, entry.name));
      }
    };
    link(TEST_MODELS_DIR, dir);
    const encoder = join(dir, "Xenova/whisper-tiny/onnx/encoder_model_quantized.onnx");
    const bytes = readFileSync(encoder);
    bytes.fill(0, 5_000_000, 5_000_100);
    rmSync(encoder);
    writeFileSync(encoder, bytes);
    const bad = await createHarness({ HEARTH_MODELS_DIR: dir, HEARTH_OFFLINE: "1" });
    try {
      const owner = await bad.login();
      const wav = await fixture("thanks.wav");
      const fd = () => {
        const form = new FormData();
        form.append("file", new File([wav], "a.wav"));
        return form;
      };
      for (let i = 0; i < 2; i++) {
        const r = await bad.call("POST", "/api/audio/transcriptions", { token: owner, raw: fd() });
        expect(r.status).toBe(503);
        expect(r.body.message).toContain("does not match its pinned SHA-256");
        const health = await bad.call("GET", "/health", { token: owner });
        expect(health.body.checks.transcriber.status).toBe("unavailable");
        expect(health.body.checks.transcriber.reason).toContain("encoder_model_quantized.onnx does not match its pinned SHA-256");
      }
    } finally {
      await bad.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
