// The transcription inference worker: loads Whisper once, at its first request, and decodes and
// transcribes one upload a window (≤ 30 s of 16 kHz mono) per request, so the HTTP thread never
// decodes audio and the caller can stop between windows. A worker of its own, not the
// embedder's: a ten-minute recording must not hold up the query embedding of a search.
import { loadTranscriber, type LoadedTranscriber, type TranscriberOptions } from "../../platform/ml/transformers";
import { serveWorker } from "../../platform/ml/worker-client";
import type { AudioSource } from "./audio";
import { decodeBlocks } from "./decode";
import { hasSpeech, heard, loudFrames } from "./silence";
import { windowStream, type Window } from "./windows";
import { lowerThreadPriority } from "../../platform/priority";

// Below the HTTP thread (platform/priority.ts), before ONNX Runtime starts its pool threads and
// before any ffmpeg child, which inherit it: a long transcription leaves requests their time slices.
lowerThreadPriority();

let options: TranscriberOptions | undefined;
let loading: Promise<LoadedTranscriber> | undefined;
let state: { state: "idle" | "loading" | "ok" | "unavailable"; reason?: string } = { state: "idle" };
/** The upload being transcribed (the main thread's queue sends one at a time). */
let open: AsyncGenerator<Window> | undefined;

const load = () => {
  if (!options) throw new Error("transcriber not initialised");
  if (!loading) {
    state = { state: "loading" };
    loading = loadTranscriber(options);
    loading.then(
      () => (state = { state: "ok" }),
      (err: Error) => (state = { state: "unavailable", reason: err.message }),
    );
  }
  return loading;
};

const close = async () => {
  const windows = open;
  open = undefined;
  await windows?.return(undefined);
};

serveWorker({
  init(opts: TranscriberOptions) {
    options = opts;
  },

  status: () => state,

  async languages() {
    return (await load()).languages;
  },

  /** Starts decoding an upload (its bytes are transferred here); `next` reads it a window at a time. */
  async open({ bytes, source }: { bytes: Uint8Array; source: AudioSource }) {
    await close();
    open = windowStream(decodeBlocks(bytes, source));
    return {};
  },

  /** Transcribes the next window, detecting the language in the first one when none is given. */
  async next({ language }: { language: string | null }) {
    if (!open) throw new Error("no audio is open");
    // Loaded first, whatever the window holds: an answer to `next` tells the main thread Whisper works.
    const whisper = await load();
    const window = await open.next();
    if (window.done) {
      await close();
      return { done: true };
    }
    const { from, samples } = window.value;
    const to = from + samples.length;
    // A window without sound is not Whisper's to hear: it would invent text (silence.ts).
    const loud = loudFrames(samples);
    if (!hasSpeech(loud)) return { done: false, language, from, to, segments: [] };
    const lang = language ?? (await whisper.detectLanguage(samples));
    const part = await whisper.transcribe(samples, lang);
    // ONNX Runtime's tensors are small JS objects over large native buffers, so the collector does not
    // hurry to free them: without this, hours of audio grow the process by ~200 MB every few windows.
    Bun.gc(true);
    return { done: false, language: lang, from, to, segments: heard(part.segments, loud) };
  },

  close,
});
