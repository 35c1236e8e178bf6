// The knowledge base's life: at start, pieces a crash left behind are swept, chunks stored before
// the keyword index knew CJK text are indexed again, and files stored while the embedding model was
// missing get their vectors once it is there; /health reports the vector extension and the
// embedder; at stop the embedder's worker ends.
import type { Logger } from "../../platform/log";
import type { JobQueue } from "../../platform/jobs/queue";
import { modelPresence } from "../../platform/ml/models";
import type { Part } from "../../platform/parts";
import type { ContentStore } from "./content";
import type { KnowledgeEmbedder } from "./embedder";
import type { Ingestion } from "./ingest/pipeline";
import { EMBED_JOB } from "./files";
import type { VectorStore } from "./vector-store";

const MODEL_RETRY_MS = 60_000;

export interface KnowledgePartDeps {
  content: ContentStore;
  vectors: VectorStore;
  ingestion: Ingestion;
  embedder: KnowledgeEmbedder;
  jobs: JobQueue;
  modelsDir: string;
  embeddingModel: string;
  /** The sqlite-vec version the database loaded. */
  vecVersion: string;
  log: Logger;
}

export function knowledgePart(d: KnowledgePartDeps): Part & { catchUpEmbeddings(): Promise<boolean> } {
  // Set by stop(): the embedding catch-up outlives start() and must not touch a closed database.
  let stopped = false;
  let modelWatch: ReturnType<typeof setInterval> | undefined;

  /**
   * Queues vectors for files stored while the model was missing, once it is there. With no such
   * file nothing is loaded (idle Hearth holds no model): true when the model's files are present.
   */
  const catchUpEmbeddings = async () => {
    if (d.ingestion.unembedded().length === 0) return modelPresence(d.modelsDir, d.embeddingModel).ok;
    const status = () => d.embedder.status().catch((e: Error) => ({ state: "unavailable" as const, reason: e.message }));
    let state = await status();
    while (state.state === "loading") {
      await Bun.sleep(200);
      state = await status();
    }
    if (state.state !== "ok" || stopped) return false;
    const files = d.ingestion.unembedded();
    for (const f of files) d.jobs.enqueue(EMBED_JOB, { fileId: f.id }, { group: f.productId });
    if (files.length) d.jobs.wake();
    return true;
  };

  return {
    name: "knowledge",
    catchUpEmbeddings,
    checks: {
      vectors: () => ({ status: "ok", detail: `sqlite-vec ${d.vecVersion}` }),
      embedder: () => d.embedder.health(),
    },
    start() {
      stopped = false;
      // Before any upload can start: pieces of uploads a crash cut off before their file row.
      const orphans = d.content.sweep();
      if (orphans > 0) d.log.info("knowledge: removed pieces of uploads cut off by a crash", { pieces: orphans });
      const strayVectors = d.vectors.sweepOrphansOnce();
      if (strayVectors > 0) d.log.info("knowledge: removed vectors of chunks deleted while they were embedded", { vectors: strayVectors });
      // In the background: keyword search finds such a chunk once its slice is done (~20 s for 100k).
      void d.ingestion.catchUpKeywords(() => stopped).then(
        (chunks) => chunks > 0 && d.log.info("knowledge: indexed the CJK text of chunks stored before as pairs of characters", { chunks }),
        (e: Error) => d.log.error("knowledge: indexing older CJK chunks failed; it resumes at the next start", { error: e.message }),
      );
      // Without its model the embedder is retried every minute, so copying the model into the
      // models dir is enough: the files stored meanwhile get their vectors then.
      void catchUpEmbeddings().then((ok) => {
        if (ok || stopped) return;
        modelWatch = setInterval(async () => {
          if (!modelPresence(d.modelsDir, d.embeddingModel).ok) return;
          await d.embedder.stop(); // a worker that failed to load the model starts afresh
          if (await catchUpEmbeddings()) clearInterval(modelWatch);
        }, MODEL_RETRY_MS);
        modelWatch.unref?.();
      });
    },
    async stop() {
      stopped = true;
      if (modelWatch) clearInterval(modelWatch);
      await d.embedder.stop();
    },
  };
}
