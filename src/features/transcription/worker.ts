// The transcription inference worker: loads Whisper once, at its first request, and transcribes
// or detects the language of one window (≤ 30 s of 16 kHz mono) per request. A worker of its own,
// not the embedder's: a ten-minute recording must not hold up the query embedding of a search.
import { loadTranscriber, type LoadedTranscriber, type TranscriberOptions } from "../../platform/ml/transformers";
import { serveWorker } from "../../platform/ml/worker-client";

let options: TranscriberOptions | undefined;
let loading: Promise<LoadedTranscriber> | undefined;
let state: { state: "idle" | "loading" | "ok" | "unavailable"; reason?: string } = { state: "idle" };

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

serveWorker({
  init(opts: TranscriberOptions) {
    options = opts;
  },

  status: () => state,

  async transcribe({ samples, language }: { samples: Float32Array; language: string | null }) {
    return (await load()).transcribe(samples, language);
  },

  async languages() {
    return (await load()).languages;
  },

  async detect({ samples }: { samples: Float32Array }) {
    return { language: await (await load()).detectLanguage(samples) };
  },
});
