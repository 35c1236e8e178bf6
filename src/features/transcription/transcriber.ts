// The main-thread side of transcription: one request at a time (Whisper already uses both cores),
// long audio cut into windows of at most 30 s at quiet moments, a caller who leaves dropped from
// the queue or stopped at the next window, and the transcriber's state for /health.
import { AppError } from "../../platform/errors";
import { modelPresence } from "../../platform/ml/models";
import { createWorkerClient } from "../../platform/ml/worker-client";
import { isCompiled } from "../../platform/native";
import type { CheckState } from "../system/health";
import { TARGET_RATE } from "./wav";

export interface Segment {
  id: number;
  start: number;
  end: number;
  text: string;
}

export interface Transcript {
  text: string;
  /** ISO 639-1 code, e.g. "en". */
  language: string;
  duration: number;
  segments: Segment[];
}

/** Whisper's window. */
const WINDOW_S = 30;
/** A window ends at the quietest moment of its last few seconds, so no word is cut in two. */
const SEARCH_S = 5;
const FRAME_S = 0.05;

/**
 * Window boundaries (sample offsets) for `samples`: each window at most 30 s, ending at the
 * quietest 50 ms frame within its last 5 s (or at 30 s when the audio is over by then).
 */
export function windows(samples: Float32Array, rate = TARGET_RATE): [number, number][] {
  const max = WINDOW_S * rate;
  const frame = Math.round(FRAME_S * rate);
  const out: [number, number][] = [];
  for (let start = 0; start < samples.length; ) {
    if (samples.length - start <= max) {
      out.push([start, samples.length]);
      break;
    }
    let best = start + max;
    let quietest = Infinity;
    for (let f = start + max - SEARCH_S * rate; f + frame <= start + max; f += frame) {
      let energy = 0;
      for (let i = f; i < f + frame; i++) energy += samples[i]! * samples[i]!;
      if (energy < quietest) {
        quietest = energy;
        best = f + Math.floor(frame / 2);
      }
    }
    out.push([start, best]);
    start = best;
  }
  return out;
}

type State = { state: "idle" | "loading" | "ok" } | { state: "unavailable"; reason: string };

export function createTranscriber(opts: { modelsDir: string; model: string; offline: boolean }) {
  const url = isCompiled() ? "./src/features/transcription/worker.ts" : new URL("./worker.ts", import.meta.url);
  const client = createWorkerClient(url, { modelsDir: opts.modelsDir, model: opts.model, offline: opts.offline });
  let state: State = { state: "idle" };
  // The queue: each request waits for the one before it; a request whose caller left is skipped.
  let tail: Promise<unknown> = Promise.resolve();
  const counts = { runs: 0, skipped: 0 };

  const call = async <T>(op: "languages" | "detect" | "transcribe", samples?: Float32Array, language: string | null = null): Promise<T> => {
    if (state.state === "idle") state = { state: "loading" };
    try {
      const copy = samples?.slice(); // its buffer moves to the worker
      const result = await client.call<T>(op, { samples: copy, language }, copy ? [copy.buffer] : []);
      state = { state: "ok" };
      return result;
    } catch (e) {
      if (state.state !== "ok") state = { state: "unavailable", reason: (e as Error).message };
      throw new AppError(503, "ServiceUnavailable", `Transcription is unavailable: ${(e as Error).message}`);
    }
  };

  let known: Set<string> | undefined;

  const run = async (samples: Float32Array, language: string | null, signal: AbortSignal): Promise<Transcript> => {
    if (language !== null) {
      known ??= new Set(await call<string[]>("languages"));
      if (!known.has(language)) throw new AppError(400, "ValidationError", `language "${language}" is not one Whisper knows; use an ISO 639-1 code such as "en" or "de", or leave it out to detect it`);
    }
    const spans = windows(samples);
    const detected = language ?? (await call<{ language: string }>("detect", samples.subarray(0, WINDOW_S * TARGET_RATE))).language;
    const segments: Segment[] = [];
    for (const [from, to] of spans) {
      if (signal.aborted) throw signal.reason;
      const part = await call<{ text: string; segments: { start: number; end: number; text: string }[] }>("transcribe", samples.subarray(from, to), detected);
      const offset = from / TARGET_RATE;
      const windowEnd = to / TARGET_RATE;
      for (const s of part.segments) {
        segments.push({ id: segments.length, start: round(offset + s.start), end: round(Math.min(offset + s.end, windowEnd)), text: s.text });
      }
    }
    return { text: segments.map((s) => s.text).join(" ").trim(), language: detected, duration: round(samples.length / TARGET_RATE), segments };
  };

  return {
    model: opts.model,

    /** Transcribes 16 kHz mono audio after every request queued before it; rejects with `signal.reason` if the caller leaves. */
    transcribe(samples: Float32Array, language: string | null, signal: AbortSignal): Promise<Transcript> {
      const turn = tail.then(() => {
        if (signal.aborted) {
          counts.skipped++;
          throw signal.reason;
        }
        counts.runs++;
        return run(samples, language, signal);
      });
      tail = turn.catch(() => {});
      return turn;
    },

    health(): CheckState {
      if (state.state === "ok") return { status: "ok", detail: opts.model };
      if (state.state === "loading") return { status: "loading", detail: opts.model };
      if (state.state === "unavailable") return { status: "unavailable", reason: state.reason };
      const present = modelPresence(opts.modelsDir, opts.model);
      return present.ok ? { status: "ok", detail: `${opts.model} (loads at the first request)` } : { status: "unavailable", reason: present.reason };
    },

    /** Requests run and requests skipped because their caller had left (tests, benchmarks). */
    stats: () => ({ ...counts }),

    stop: () => client.stop(),
  };
}

const round = (x: number) => Math.round(x * 100) / 100;

export type Transcriber = ReturnType<typeof createTranscriber>;
