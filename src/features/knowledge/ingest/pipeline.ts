// The ingestion job: parse (in a killable child) → chunk (worker, model tokenizer) → store chunks
// and keyword rows → embed in batches → vectors, with progress on the file row. Re-running it
// (after a crash, or to re-embed) starts the file over, so it is safe to repeat. Re-embedding
// re-chunks too: a new model has its own tokenizer and window, and chunks stored while no model
// was there were sized by an estimate. Its commits skip the fsync (platform/db/relaxed.ts): all of
// it is redone if lost, and the job's end, a full commit, makes it durable; the file is `ready` only
// in the last of them, after every chunk and vector.
import { and, asc, eq, isNull, lt, or, sql } from "drizzle-orm";
import type { Db } from "../../../platform/db/database";
import type { Clock } from "../../../platform/clock";
import type { Logger } from "../../../platform/log";
import { PermanentJobError, type JobContext } from "../../../platform/jobs/queue";
import { relaxed } from "../../../platform/db/durability";
import type { ChunkedPart, KnowledgeEmbedder } from "../embedder";
import type { Chunk } from "./chunk";
import type { VectorStore } from "../vector-store";
import { knowledgeChunks, knowledgeFiles } from "../table";
import type { ContentStore } from "../content";
import { parseIsolated, parseStoredFile, type IsolationLimits, DEFAULT_LIMITS } from "./isolate";
import type { FileFormat } from "./detect";
import { chunkContext, embeddingText } from "./context";
import { ParseError } from "./parse";
import { fileUpdates, type FilePatch } from "./file-updates";
import { createKeywordStore } from "../keyword-store";
import { nextTurn } from "../../../platform/db/drain";

/**
 * Chunks embedded per round (vectors and progress written after each). The embedder sends them to
 * the worker in sub-batches of about one chunk, which wait their workspace's turn there; small
 * batches also keep ONNX Runtime's arena small (~175 MB for 8 against ~500 MB for 32).
 */
export const EMBED_BATCH = 8;
/**
 * The version of how files are cut into chunks (parse.ts, chunk.ts, the worker's window and overlap)
 * and of what their vectors are computed from (context.ts). Bump it with any change to either: at
 * the next start every file cut by an older version is parsed, cut and embedded again
 * (catchUpEmbeddings), without anyone asking. Not bumped for chunking in parts (chunkParts): it
 * moves a chunk boundary or two in sections over 16 KB, and those already cut are as good.
 */
export const CHUNKING_VERSION = 3;
/** Chunks written per transaction; the event loop gets a turn between two, so requests are not held up. */
const INSERT_BATCH = 200;
/** Older CJK chunks indexed per commit (keyword-store.ts indexBacklog): ~10 ms. */
const BACKLOG_SLICE = 50;

interface Deps {
  db: Db;
  clock: Clock;
  log: Logger;
  embedder: KnowledgeEmbedder;
  vectors: VectorStore;
  /** Where files' bytes are kept (content.ts). */
  content: ContentStore;
  limits?: IsolationLimits;
  /** Chunks one file may become (HEARTH_MAX_CHUNKS_PER_FILE): checked before anything is stored or embedded. */
  maxChunks?: number;
}

export function createIngestion({ db, clock, log, embedder, vectors, content, limits = DEFAULT_LIMITS, maxChunks = 20_000 }: Deps) {
  const now = () => new Date(clock.now());
  const writeFile = fileUpdates(db);
  const keywords = createKeywordStore(db.$client);
  const updateFile = (id: string, patch: FilePatch) => writeFile(id, { ...patch, updatedAt: now() });
  /** A step of the job: redone if lost, so no fsync. */
  const setFile = (id: string, patch: FilePatch) => relaxed(db, () => updateFile(id, patch));
  const fileById = db.select().from(knowledgeFiles).where(eq(knowledgeFiles.id, sql.placeholder("id"))).prepare();
  // The launcher reads the bytes from the database file itself; an in-memory database cannot be shared.
  const dbPath = db.$client.filename;
  const parse = async (file: { format: FileFormat; contentId: string; size: number }, signal: AbortSignal) => {
    if (dbPath && dbPath !== ":memory:") return parseStoredFile(file.format, { dbPath, contentId: file.contentId, size: file.size }, limits, signal);
    const bytes = await content.read(file.contentId, file.size);
    if (!bytes) throw new ParseError("the file's bytes are missing");
    return parseIsolated(file.format, bytes, limits, signal);
  };

  /**
   * False once the file is deleted or its content replaced (its chunks and vectors went with the old
   * content, and a new job is queued for the new): the job stops at its next step.
   */
  const stillCurrent = (file: { id: string; contentId: string }) => fileById.get({ id: file.id })?.contentId === file.contentId;

  /**
   * Embeds a file's stored chunks in batches, writing progress between `from` and `to`; `embedded`:
   * their vectors already, in order (a small file, embedded with its chunking). Stops when the file
   * is deleted or replaced meanwhile: vectors written after that would name chunks that are gone.
   */
  async function embedFile(file: { id: string; contentId: string; name: string; knowledgeBaseId: string }, lane: string, ctx: JobContext, from: number, to: number, embedded?: { dim: number; vectors: Float32Array[] }) {
    const fileId = file.id;
    if (!stillCurrent(file)) return false;
    const chunks = db
      .select({ id: knowledgeChunks.id, text: knowledgeChunks.text, headings: knowledgeChunks.headings })
      .from(knowledgeChunks)
      .where(eq(knowledgeChunks.fileId, fileId))
      .orderBy(asc(knowledgeChunks.ordinal))
      .all();
    for (let i = 0; i < chunks.length; i += EMBED_BATCH) {
      if (ctx.signal.aborted) throw ctx.signal.reason;
      const batch = chunks.slice(i, i + EMBED_BATCH);
      const { dim, vectors: vs } = embedded?.vectors.length === chunks.length ? { dim: embedded.dim, vectors: embedded.vectors.slice(i, i + EMBED_BATCH) } : await embedder.embed(batch.map((c) => embeddingText(chunkContext(file.name, c.headings), c.text)), lane);
      const written = relaxed(db, () =>
        db.transaction(() => {
          if (!stillCurrent(file)) return false;
          vectors.put(dim, batch.map((c, j) => ({ chunkId: c.id, knowledgeBaseId: file.knowledgeBaseId, vector: vs[j]! })));
          updateFile(fileId, { progress: from + ((to - from) * Math.min(chunks.length, i + batch.length)) / chunks.length });
          return true;
        }),
      );
      if (!written) return false;
    }
    setFile(fileId, { embeddingModel: embedder.model, embeddedAt: now() });
    return true;
  }

  return {
    /** The `knowledge.ingest` job. */
    async ingest({ fileId }: { fileId: string }, ctx: JobContext) {
      const file = fileById.get({ id: fileId });
      if (!file) return; // deleted while queued
      /** Writes the job's progress on the file, unless the file was deleted or replaced meanwhile (then false: the job ends). */
      const step = (patch: FilePatch) => relaxed(db, () => stillCurrent(file) && (updateFile(fileId, patch), true));
      step({ status: "processing", progress: 0.02, error: null });

      let parts;
      try {
        parts = await parse(file, ctx.signal);
      } catch (e) {
        if (ctx.signal.aborted) throw e;
        if (!stillCurrent(file)) return; // the new content's job decides what the file is
        throw e instanceof ParseError ? new PermanentJobError(e.message) : e;
      }
      // A document without text failed in the parser child already (noTextReason).
      if (!step({ progress: 0.1 })) return;

      // The workspace is the file's lane in the inference worker: workspaces take turns there too.
      const lane = `workspace:${file.productId}`;
      const chunks: Chunk[] = [];
      let embedded: ChunkedPart["embedded"];
      for await (const part of embedder.chunk(parts, file.name, lane)) {
        if (ctx.signal.aborted) throw ctx.signal.reason;
        if (!stillCurrent(file)) return;
        chunks.push(...part.chunks);
        embedded = part.embedded;
        if (chunks.length > maxChunks) throw new PermanentJobError(`the file makes more than ${maxChunks} chunks, the limit per file (HEARTH_MAX_CHUNKS_PER_FILE)`);
      }
      if (chunks.length === 0) throw new PermanentJobError("the file's text produced no chunks");
      // Starting over: chunks of an earlier, interrupted run go first (their vectors by trigger). The
      // rest is written in short transactions; a crash in between is fine, the job starts over.
      relaxed(db, () => db.delete(knowledgeChunks).where(eq(knowledgeChunks.fileId, fileId)).run());
      for (let i = 0; i < chunks.length; i += INSERT_BATCH) {
        if (ctx.signal.aborted) throw ctx.signal.reason;
        if (!stillCurrent(file)) return;
        const rows = chunks.slice(i, i + INSERT_BATCH).map((c, j) => ({
          fileId,
          knowledgeBaseId: file.knowledgeBaseId,
          productId: file.productId,
          ordinal: i + j,
          text: c.text,
          page: c.page ?? null,
          headings: c.headings,
          charStart: c.charStart,
          charEnd: c.charEnd,
          tokens: c.tokens,
        }));
        relaxed(db, () =>
          db.transaction(() => {
            const written = db.insert(knowledgeChunks).values(rows).returning({ id: knowledgeChunks.id }).all();
            keywords.written(written.map((c) => c.id));
          }),
        );
        await nextTurn();
      }
      if (!step({ chunkCount: chunks.length, chunkingVersion: CHUNKING_VERSION, progress: 0.2, embeddingModel: null, embeddedAt: null })) return;

      const state = await embedder.status();
      if (state.state === "unavailable") {
        // Keyword search works now; the vectors follow once the model is there (catchUp).
        log.warn("file stored without vectors: embedder unavailable", { fileId, reason: state.reason });
      } else if (!(await embedFile(file, lane, ctx, 0.2, 1, embedded))) return;
      step({ status: "ready", progress: 1 });
    },

    /** Marks a file failed for good (the queue's onFailed hook, in the job's own full commit). */
    failed({ fileId }: { fileId: string }, error: string) {
      updateFile(fileId, { status: "failed", error });
    },

    /**
     * Indexes the CJK chunks stored before the keyword index had their pair form (keyword-store.ts),
     * a slice per commit and a turn of the event loop apart, until none is left or `stopped()`; how
     * many. A crash loses at most the slice it cut off: the list of those left is in the database.
     */
    async catchUpKeywords(stopped: () => boolean): Promise<number> {
      let indexed = 0;
      while (!stopped()) {
        const n = relaxed(db, () => keywords.indexBacklog(BACKLOG_SLICE));
        if (n === 0) break;
        indexed += n;
        await nextTurn();
      }
      return indexed;
    },

    /** Ready files that still lack vectors of the current model, or were cut by an older chunking. */
    unembedded(): { id: string; productId: string }[] {
      return db
        .select({ id: knowledgeFiles.id, productId: knowledgeFiles.productId })
        .from(knowledgeFiles)
        .where(and(eq(knowledgeFiles.status, "ready"), or(isNull(knowledgeFiles.embeddingModel), lt(knowledgeFiles.chunkingVersion, CHUNKING_VERSION))))
        .all();
    },
  };
}

export type Ingestion = ReturnType<typeof createIngestion>;
