// The knowledge inference worker: chunks parsed sections with the embedding model's own
// tokenizer and embeds text, off the HTTP event loop. Without the model it still chunks (with a
// conservative estimate of tokens), so files get keyword-indexed while embedding waits.
import { loadEmbedder, type EmbedderOptions, type LoadedEmbedder } from "../../../platform/ml/transformers";
import { serveWorker } from "../../../platform/ml/worker-client";
import { lowerThreadPriority } from "../../../platform/priority";
import { chunkPlaced, type PlacedSection } from "./chunk";
import { chunkContext, embeddingText } from "./context";
import type { Section } from "./parse";

/** Room left for the model's own [CLS]/[SEP] tokens. */
const SPECIAL_TOKENS = 2;
const OVERLAP_TOKENS = 32;
/** Estimate when no tokenizer is loaded: word pieces rarely average fewer than 3 characters. */
const estimateTokens = (text: string) => Math.ceil(text.length / 3);

// Below the HTTP thread (platform/priority.ts), before ONNX Runtime starts its pool threads.
lowerThreadPriority();

let loading: Promise<LoadedEmbedder> | undefined;
let state: { state: "loading" | "ok" | "unavailable"; reason?: string; dim?: number; maxTokens?: number } = { state: "loading" };

serveWorker({
  init(opts: EmbedderOptions) {
    loading = loadEmbedder(opts);
    loading.then(
      (e) => (state = { state: "ok", dim: e.dim, maxTokens: e.maxTokens }),
      (err: Error) => (state = { state: "unavailable", reason: err.message }),
    );
    loading.catch(() => {});
  },

  status: () => state,
  // Answered after the model load has settled, so the worker is never terminated mid-load.
  quiesce: async () => void (await loading?.catch(() => undefined)),

  /**
   * Chunks a part of the file named `fileName` (the JSON of its placed sections: documentParts), each
   * chunk sized to fit the window with its context line (context.ts); when their text is at most
   * `embedWithin` characters, embeds them in the same turn.
   */
  async chunk({ part, fileName, maxTokens, embedWithin = 0 }: { part: string; fileName: string; maxTokens: number; embedWithin?: number }) {
    const placed = JSON.parse(part) as PlacedSection[];
    const embedder = await loading?.catch(() => undefined);
    const count = embedder ? embedder.countTokens : estimateTokens;
    const window = (embedder?.maxTokens ?? maxTokens) - SPECIAL_TOKENS;
    const contextOf = (s: Section) => chunkContext(fileName, s.headings);
    const chunks = chunkPlaced(placed, { maxTokens: window, overlapTokens: OVERLAP_TOKENS, countTokens: count, contextOf });
    const small = embedder && chunks.length > 0 && chunks.reduce((n, c) => n + c.text.length, 0) <= embedWithin;
    // A failed embedding here is retried by the ingestion's own embed step.
    const texts = chunks.map((c) => embeddingText(chunkContext(fileName, c.headings), c.text));
    const embedded = small ? await embedAll(embedder, texts).catch(() => ({})) : {};
    return { chunks, ...embedded };
  },

  async embed({ texts }: { texts: string[] }) {
    if (!loading) throw new Error("embedder not initialised");
    return embedAll(await loading, texts);
  },
});

/** The vectors of `texts` in one Float32Array (transferred, not copied, to the main thread). */
async function embedAll(embedder: LoadedEmbedder, texts: string[]) {
  const vectors = await embedder.embed(texts);
  const flat = new Float32Array(vectors.length * embedder.dim);
  vectors.forEach((v, i) => flat.set(v, i * embedder.dim));
  return { dim: embedder.dim, model: embedder.model, vectors: flat };
}
