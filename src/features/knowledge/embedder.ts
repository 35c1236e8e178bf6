// The main-thread side of the knowledge inference worker: chunking and embedding requests,
// and the embedder's state for /health.
import { createWorkerClient } from "../../platform/ml/worker-client";
import { isCompiled } from "../../platform/native";
import { modelPresence } from "../../platform/ml/models";
import type { CheckState } from "../system/health";
import type { Chunk } from "./ingest/chunk";
import type { Section } from "./ingest/parse";

export interface KnowledgeEmbedder {
  readonly model: string;
  status(): Promise<{ state: "loading" | "ok" | "unavailable"; reason?: string; dim?: number }>;
  health(): Promise<CheckState>;
  chunk(sections: Section[]): Promise<{ chunks: Chunk[]; counted: "model" | "estimate" }>;
  /** One vector per text; rejects when the model is unavailable. */
  embed(texts: string[]): Promise<{ dim: number; vectors: Float32Array[] }>;
  stop(): Promise<void>;
}

export function createKnowledgeEmbedder(opts: { modelsDir: string; model: string; offline: boolean; maxTokens: number }): KnowledgeEmbedder {
  // In the binary the worker is an entry point of its own, named by its path from the project root.
  const url = isCompiled() ? "./src/features/knowledge/ingest/worker.ts" : new URL("./ingest/worker.ts", import.meta.url);
  const client = createWorkerClient(url, { modelsDir: opts.modelsDir, model: opts.model, offline: opts.offline });
  type State = { state: "loading" | "ok" | "unavailable"; reason?: string; dim?: number };
  // Once the model is loaded the answer does not change until the worker fails, so it is kept:
  // /health and every search would otherwise wait behind an embedding batch in the worker's queue.
  let ready: State | undefined;
  // Until a feature asks for the model, /health looks at its files and loads nothing.
  let asked = false;
  const status = async (): Promise<State> => {
    asked = true;
    if (ready) return ready;
    const s = await client.call<State>("status", null);
    if (s.state === "ok") ready = s;
    return s;
  };
  return {
    model: opts.model,
    status,
    async health() {
      if (!asked) {
        const present = modelPresence(opts.modelsDir, opts.model);
        return present.ok ? { status: "ok", detail: `${opts.model} (loads at the first request)` } : { status: "unavailable", reason: present.reason };
      }
      const s = await status().catch((e: Error) => ({ state: "unavailable" as const, reason: e.message, dim: undefined }));
      if (s.state === "ok") return { status: "ok", detail: `${opts.model} (${s.dim} dimensions)` };
      if (s.state === "loading") return { status: "loading", detail: opts.model };
      return { status: "unavailable", reason: s.reason ?? "unknown" };
    },
    chunk: (sections) => {
      asked = true;
      return client.call("chunk", { sections, maxTokens: opts.maxTokens });
    },
    async embed(texts) {
      asked = true;
      const r = await client.call<{ dim: number; vectors: Float32Array }>("embed", { texts }).catch((e) => {
        ready = undefined;
        throw e;
      });
      return { dim: r.dim, vectors: texts.map((_, i) => r.vectors.subarray(i * r.dim, (i + 1) * r.dim)) };
    },
    stop: () => {
      ready = undefined;
      asked = false;
      return client.stop();
    },
  };
}
