// The main-thread side of the knowledge inference worker: chunking and embedding requests,
// and the embedder's state for /health. Embedding is sent in small sub-batches, each waiting its
// lane's turn in the worker, so a workspace's big batch holds back another's request by at most
// one sub-batch.
import { createWorkerClient } from "../../platform/ml/worker-client";
import { workerUrl } from "../../platform/native";
import { modelPresence } from "../../platform/ml/models";
import type { CheckState } from "../../platform/parts";
import type { Chunk } from "./ingest/chunk";

/** The chunks of one part of a document, and their vectors when they came embedded. */
export interface ChunkedPart {
  chunks: Chunk[];
  embedded?: { dim: number; vectors: Float32Array[] };
}

export interface KnowledgeEmbedder {
  readonly model: string;
  status(): Promise<{ state: "loading" | "ok" | "unavailable"; reason?: string; dim?: number }>;
  health(): Promise<CheckState>;
  /**
   * The file named `fileName` (its title goes into each chunk's vector, context.ts) in chunks, one
   * part of the document after the other (`parts`: documentParts, as the parser child gives them),
   * each part a request that waits for `lane`'s turn in the worker (a workspace; see embed): another
   * workspace's upload or a search waits for one part of a large file, never for all of it. A
   * document of one part whose chunks hold at most one sub-batch of text comes back embedded too
   * (`embedded`, in order): a small file takes one turn in the worker instead of two, so it waits
   * for another workspace's work once, not twice.
   */
  chunk(parts: string[], fileName: string, lane?: string): AsyncGenerator<ChunkedPart>;
  /**
   * One vector per text; rejects when the model is unavailable. Lanes take turns sub-batch by
   * sub-batch: ingestion passes its workspace; by default the texts go in the lane of queries.
   */
  embed(texts: string[], lane?: string): Promise<{ dim: number; vectors: Float32Array[] }>;
  stop(): Promise<void>;
}

/**
 * Characters of text per inference request: one chunk of a file (~250 word pieces, 50-80 ms on 2
 * cores), or a few short texts together. On 2 cores a batch of 1 embeds as many texts a second as a
 * batch of 8 (per-text time is flat, larger batches only pad more), so throughput does not suffer.
 */
export const SUB_BATCH_CHARS = 512;
/** The lane of search queries and other interactive embeddings: served in turn with ingestion's. */
export const QUERY_LANE = "query";

/** Consecutive groups of texts of at most SUB_BATCH_CHARS together (one text at least). */
export function subBatches(texts: string[]): string[][] {
  const out: string[][] = [];
  let size = Infinity;
  for (const t of texts) {
    if (size + t.length > SUB_BATCH_CHARS) out.push([]), (size = 0);
    out.at(-1)!.push(t);
    size += t.length;
  }
  return out;
}

/** One vector per `dim` floats, as views of `flat`. */
const split = (flat: Float32Array, dim: number) => Array.from({ length: flat.length / dim }, (_, i) => flat.subarray(i * dim, (i + 1) * dim));

export function createKnowledgeEmbedder(opts: { modelsDir: string; model: string; offline: boolean; maxTokens: number }): KnowledgeEmbedder {
  // In the binary the worker is an entry point of its own, named by its path from the project root.
  const url = workerUrl("features/knowledge/ingest/worker.ts");
  const client = createWorkerClient(url, { modelsDir: opts.modelsDir, model: opts.model, offline: opts.offline });
  type State = { state: "loading" | "ok" | "unavailable"; reason?: string; dim?: number };
  // Once the model is loaded the answer does not change until the worker fails, so it is kept:
  // /health and every search would otherwise wait behind an embedding batch in the worker's queue.
  let ready: State | undefined;
  // Until a feature asks for the model, /health looks at its files and loads nothing.
  let asked = false;
  // The worker's last answer, for /health: while the worker loads the model it answers late (the
  // load blocks its thread for up to a second), and /health must not wait for it.
  let known: State = { state: "loading" };
  let asking: Promise<State> | undefined;
  const status = (): Promise<State> => {
    asked = true;
    if (ready) return Promise.resolve(ready);
    asking ??= client
      .call<State>("status", null)
      .then(
        (s) => {
          if (s.state === "ok") ready = s;
          return (known = s);
        },
        (e: Error) => {
          known = { state: "unavailable", reason: e.message };
          throw e;
        },
      )
      .finally(() => (asking = undefined));
    return asking;
  };
  return {
    model: opts.model,
    status,
    async health() {
      if (!asked) {
        const present = modelPresence(opts.modelsDir, opts.model);
        return present.ok ? { status: "ok", detail: `${opts.model} (loads at the first request)` } : { status: "unavailable", reason: present.reason };
      }
      // Answered from what the worker last said; the question in flight updates it for the next call.
      if (!ready) void status().catch(() => {});
      const s = ready ?? known;
      if (s.state === "ok") return { status: "ok", detail: `${opts.model} (${s.dim} dimensions)` };
      if (s.state === "loading") return { status: "loading", detail: opts.model };
      return { status: "unavailable", reason: s.reason ?? "unknown" };
    },
    async *chunk(parts, fileName, lane) {
      asked = true;
      type Reply = { chunks: Chunk[]; dim?: number; vectors?: Float32Array };
      const embedWithin = parts.length === 1 ? SUB_BATCH_CHARS : 0;
      for (const part of parts) {
        const r = await client.call<Reply>("chunk", { part, fileName, maxTokens: opts.maxTokens, embedWithin }, [], lane);
        yield { chunks: r.chunks, ...(r.vectors && r.dim ? { embedded: { dim: r.dim, vectors: split(r.vectors, r.dim) } } : {}) };
      }
    },
    async embed(texts, lane = QUERY_LANE) {
      asked = true;
      // All sub-batches are sent at once: the worker serves them in order, between other lanes' turns.
      const parts = await Promise.all(subBatches(texts).map((batch) => client.call<{ dim: number; vectors: Float32Array }>("embed", { texts: batch }, [], lane))).catch((e) => {
        ready = undefined;
        throw e;
      });
      return { dim: parts[0]?.dim ?? 0, vectors: parts.flatMap((r) => split(r.vectors, r.dim)) };
    },
    stop: () => {
      ready = undefined;
      known = { state: "loading" };
      asked = false;
      return client.stop();
    },
  };
}
