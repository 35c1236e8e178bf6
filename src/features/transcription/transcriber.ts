// The main-thread side of transcription: one request at a time (Whisper already uses both cores),
// the upload handed to the worker, which decodes it and cuts it into windows of at most 30 s at
// quiet moments; a caller who leaves is dropped from the queue or stopped at the next window; the
// transcriber's state for /health.
import { AppError, type ErrorCode, invalid, unavailable } from "../../platform/errors";
import { modelPresence } from "../../platform/ml/models";
import { createWorkerClient, WorkerError } from "../../platform/ml/worker-client";
import { workerUrl } from "../../platform/native";
import type { CheckState } from "../../platform/parts";
import type { PreparedAudio } from "./audio";
import { placeSegments, round } from "./segments";
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

type State = { state: "idle" | "loading" | "ok" } | { state: "unavailable"; reason: string };

/** A window without sound comes back with no segments and the language still unknown when none was given. */
type Window = { done: true } | { done: false; language: string | null; from: number; to: number; segments: { start: number; end: number; text: string }[] };

export function createTranscriber(opts: { modelsDir: string; model: string; offline: boolean; maxSeconds: number }) {
  const url = workerUrl("features/transcription/worker.ts");
  const client = createWorkerClient(url, { modelsDir: opts.modelsDir, model: opts.model, offline: opts.offline });
  let state: State = { state: "idle" };
  // The queue: each request waits for the one before it; a request whose caller left is skipped.
  let tail: Promise<unknown> = Promise.resolve();
  const counts = { runs: 0, skipped: 0 };

  const call = async <T>(op: "languages" | "open" | "next" | "close", args: unknown = {}, transfer: ArrayBuffer[] = []): Promise<T> => {
    if (state.state === "idle") state = { state: "loading" };
    try {
      const result = await client.call<T>(op, args, transfer);
      // `open` and `close` only decode: the model is known to work once an op that needs it answers.
      if (op === "languages" || op === "next") state = { state: "ok" };
      return result;
    } catch (e) {
      // A decoder's 4xx (broken audio, over the cap) is the caller's; anything else means Whisper is not there,
      // even after an earlier success (a model that fails to load fails every request until Hearth restarts).
      if (e instanceof WorkerError && e.status && e.code) throw new AppError(e.status, e.code as ErrorCode, e.message);
      state = { state: "unavailable", reason: (e as Error).message };
      throw unavailable(`Transcription is unavailable: ${(e as Error).message}`);
    }
  };

  let known: Set<string> | undefined;

  const run = async (audio: PreparedAudio, language: string | null, signal: AbortSignal): Promise<Transcript> => {
    if (language !== null) {
      known ??= new Set(await call<string[]>("languages"));
      if (!known.has(language)) throw invalid(`language "${language}" is not one Whisper knows; use an ISO 639-1 code such as "en" or "de", or leave it out to detect it`);
    }
    // The upload's buffer moves to the worker, which decodes it there a window at a time.
    await call("open", { bytes: audio.bytes, source: audio.source }, [audio.bytes.buffer as ArrayBuffer]);
    const segments: Segment[] = [];
    let detected = language;
    let samples = 0;
    try {
      for (;;) {
        if (signal.aborted) throw signal.reason;
        const part = await call<Window>("next", { language: detected });
        if (part.done) break;
        detected = part.language;
        samples = part.to;
        for (const s of placeSegments(part.segments, part.from / TARGET_RATE, part.to / TARGET_RATE, segments.at(-1)?.start)) {
          segments.push({ id: segments.length, ...s });
        }
      }
    } finally {
      await call("close").catch(() => {});
    }
    return { text: segments.map((s) => s.text).join(" ").trim(), language: detected ?? "en", duration: round(samples / TARGET_RATE), segments };
  };

  const health = (): CheckState => {
    if (state.state === "ok") return { status: "ok", detail: opts.model };
    if (state.state === "loading") return { status: "loading", detail: opts.model };
    if (state.state === "unavailable") return { status: "unavailable", reason: state.reason };
    const present = modelPresence(opts.modelsDir, opts.model);
    return present.ok ? { status: "ok", detail: `${opts.model} (loads at the first request)` } : { status: "unavailable", reason: present.reason };
  };

  return {
    model: opts.model,

    /** Longest audio accepted, in seconds (HEARTH_AUDIO_MAX_MINUTES). */
    maxSeconds: opts.maxSeconds,

    /** Transcribes a checked upload after every request queued before it; rejects with `signal.reason` if the caller leaves. */
    transcribe(audio: PreparedAudio, language: string | null, signal: AbortSignal): Promise<Transcript> {
      const turn = tail.then(() => {
        if (signal.aborted) {
          counts.skipped++;
          throw signal.reason;
        }
        counts.runs++;
        return run(audio, language, signal);
      });
      tail = turn.catch(() => {});
      return turn;
    },

    /** Requests run and requests skipped because their caller had left (tests, benchmarks). */
    stats: () => ({ ...counts }),

    // A part of Hearth (platform/parts.ts): its worker ends at stop, /health reports the model.
    name: "transcription",
    checks: { transcriber: health },
    stop: () => client.stop(),
  };
}

export type Transcriber = ReturnType<typeof createTranscriber>;
