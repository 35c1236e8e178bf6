// Knowledge bases and their files: create, list, rename, delete; upload with de-duplication,
// download, replace; every call checked against the caller's workspace.
import { and, count, desc, eq, sql } from "drizzle-orm";
import type { Db } from "../../platform/db/database";
import type { Clock } from "../../platform/clock";
import { conflict, invalid, notFound, tooLarge, unprocessable, unsupportedMedia } from "../../platform/errors";
import type { PageWindow } from "../../platform/http/pagination";
import type { Principal } from "../../platform/auth/principal";
import { relaxed } from "../../platform/db/durability";
import { jobKind, type JobQueue } from "../../platform/jobs/queue";
import type { WorkspacesService } from "../workspaces/service";
import { knowledgeBases, knowledgeChunks, knowledgeFiles } from "./table";
import { digestOf, type ContentStore } from "./content";
import { DETECT_BYTES, detectFormat, mimeOf, SUPPORTED } from "./ingest/detect";
import { megabytes, PARSE_CAPS } from "./ingest/parse";
import { declaredInflatedBytes } from "./ingest/zip-directory";

export type KnowledgeBaseRow = typeof knowledgeBases.$inferSelect;
/** A file's record; where its bytes are kept (content_id) stays inside this service and ingestion. */
export type KnowledgeFileRow = Omit<typeof knowledgeFiles.$inferSelect, "contentId">;

export const MAX_FILE_BYTES = 50 * 1024 * 1024;
export const INGEST_JOB = jobKind<{ fileId: string }>("knowledge.ingest");
export const EMBED_JOB = jobKind<{ fileId: string }>("knowledge.embed");
export const DEFAULT_KB = "Default";

export interface EmbeddingIdentity {
  model: string;
  dim: number;
}

interface Deps {
  db: Db;
  clock: Clock;
  workspaces: WorkspacesService;
  jobs: JobQueue;
  /** Where files' bytes are kept (content.ts). */
  content: ContentStore;
  embedding: EmbeddingIdentity;
  /** Makes commits so far durable off the event loop (platform/db/durability.ts); without it uploads are full commits. */
  sync?: () => Promise<void>;
}

const unsupported = (name: string) => unsupportedMedia(`${name} is not a supported document; upload one of ${SUPPORTED}`);

export function createKnowledgeService({ db, clock, workspaces, jobs, content, embedding, sync }: Deps) {
  const now = () => new Date(clock.now());
  /**
   * An acknowledged write (an upload and its job, a deletion): durable before the caller answers. The
   * fsync runs on the I/O pool, so the event loop serves other requests meanwhile; they may see the
   * rows (or their absence) first.
   */
  const commitDurably = async (write: () => void) => {
    if (!sync) return write();
    relaxed(db, write);
    await sync();
  };

  /** Runs the commit that names freshly written content; if it fails, the content is removed. */
  const withContent = async (contentId: string, commit: () => Promise<void>) => {
    try {
      await commit();
    } catch (e) {
      content.discard(contentId);
      throw e;
    }
  };

  const ensureDefault = (productId: string): KnowledgeBaseRow => {
    const existing = defaultBaseOf.get({ productId });
    if (existing) return existing;
    const row: KnowledgeBaseRow = {
      id: crypto.randomUUID(),
      productId,
      name: DEFAULT_KB,
      description: "Used when an upload names no knowledge base",
      isDefault: true,
      embeddingModel: embedding.model,
      embeddingDim: embedding.dim,
      createdBy: null,
      createdAt: now(),
      updatedAt: now(),
    };
    db.insert(knowledgeBases).values(row).onConflictDoNothing().run();
    return db.select().from(knowledgeBases).where(and(eq(knowledgeBases.productId, productId), eq(knowledgeBases.name, DEFAULT_KB))).get()!;
  };

  // Prepared once: every search, upload and file request looks these up (building a drizzle query
  // cost more than running it: ~200 µs of the event loop each).
  const baseById = db.select().from(knowledgeBases).where(eq(knowledgeBases.id, sql.placeholder("id"))).prepare();
  const baseIdsOf = db.select({ id: knowledgeBases.id }).from(knowledgeBases).where(eq(knowledgeBases.productId, sql.placeholder("productId"))).prepare();
  const defaultBaseOf = db
    .select()
    .from(knowledgeBases)
    .where(and(eq(knowledgeBases.productId, sql.placeholder("productId")), eq(knowledgeBases.isDefault, true)))
    .prepare();

  /** The knowledge base if it belongs to a workspace the caller may use; otherwise "not found". */
  const requireBase = (principal: Principal, id: string): KnowledgeBaseRow => {
    const kb = baseById.get({ id: id.toLowerCase() });
    if (!kb) throw notFound("Knowledge base");
    try {
      workspaces.requireVisible(principal, kb.productId);
    } catch {
      throw notFound("Knowledge base");
    }
    return kb;
  };

  const fileColumns = {
    id: knowledgeFiles.id,
    knowledgeBaseId: knowledgeFiles.knowledgeBaseId,
    productId: knowledgeFiles.productId,
    name: knowledgeFiles.name,
    format: knowledgeFiles.format,
    mimeType: knowledgeFiles.mimeType,
    size: knowledgeFiles.size,
    sha256: knowledgeFiles.sha256,
    status: knowledgeFiles.status,
    progress: knowledgeFiles.progress,
    error: knowledgeFiles.error,
    chunkCount: knowledgeFiles.chunkCount,
    chunkingVersion: knowledgeFiles.chunkingVersion,
    embeddingModel: knowledgeFiles.embeddingModel,
    embeddedAt: knowledgeFiles.embeddedAt,
    createdBy: knowledgeFiles.createdBy,
    createdAt: knowledgeFiles.createdAt,
    updatedAt: knowledgeFiles.updatedAt,
  };

  const fileById = db.select(fileColumns).from(knowledgeFiles).where(eq(knowledgeFiles.id, sql.placeholder("id"))).prepare();
  const fileBySha = db
    .select(fileColumns)
    .from(knowledgeFiles)
    .where(and(eq(knowledgeFiles.knowledgeBaseId, sql.placeholder("kb")), eq(knowledgeFiles.sha256, sql.placeholder("sha"))))
    .prepare();

  const contentIdById = db.select({ contentId: knowledgeFiles.contentId }).from(knowledgeFiles).where(eq(knowledgeFiles.id, sql.placeholder("id"))).prepare();
  /** Where a file's bytes are kept (not part of the record callers get). */
  const contentIdOf = (file: KnowledgeFileRow): string => {
    const row = contentIdById.get({ id: file.id });
    if (!row) throw notFound("File");
    return row.contentId;
  };

  const requireFile = (principal: Principal, id: string): KnowledgeFileRow => {
    const file = fileById.get({ id: id.toLowerCase() });
    if (!file) throw notFound("File");
    try {
      workspaces.requireVisible(principal, file.productId);
    } catch {
      throw notFound("File");
    }
    return file;
  };

  /** The upload's format, from its first bytes and name; refuses what is too large or not a supported format. */
  const checkUpload = async (name: string, file: Blob) => {
    if (file.size > MAX_FILE_BYTES) throw tooLarge(`${name} is larger than the 50 MB a knowledge file may be`);
    const format = detectFormat(name, new Uint8Array(await file.slice(0, DETECT_BYTES).arrayBuffer()));
    if (!format) throw unsupported(name);
    // A zip bomb that says what it inflates to is refused here, before it is stored or parsed.
    if (format === "docx") {
      const cap = PARSE_CAPS.maxInflatedBytes!;
      const declared = await declaredInflatedBytes(file);
      if (declared !== undefined && declared > cap) throw unprocessable(`${name} inflates to more than ${megabytes(cap)} (the limit per document)`);
    }
    return format;
  };

  return {
    ensureDefault,
    requireBase,
    requireFile,

    /** Ids of a visible workspace's knowledge bases (what a search of the whole workspace reads). */
    baseIds(principal: Principal, productId: string): string[] {
      const w = workspaces.requireVisible(principal, productId);
      return baseIdsOf.all({ productId: w.id }).map((r) => r.id);
    },

    listBases(principal: Principal, productId: string) {
      const w = workspaces.requireVisible(principal, productId);
      ensureDefault(w.id);
      const files = db
        .select({ kb: knowledgeFiles.knowledgeBaseId, n: count(), bytes: sql<number>`coalesce(sum(${knowledgeFiles.size}), 0)` })
        .from(knowledgeFiles)
        .where(eq(knowledgeFiles.productId, w.id))
        .groupBy(knowledgeFiles.knowledgeBaseId)
        .all();
      const stats = new Map(files.map((f) => [f.kb, f]));
      return db
        .select()
        .from(knowledgeBases)
        .where(eq(knowledgeBases.productId, w.id))
        .orderBy(desc(knowledgeBases.isDefault), knowledgeBases.createdAt)
        .all()
        .map((kb) => ({ kb, fileCount: stats.get(kb.id)?.n ?? 0, bytes: Number(stats.get(kb.id)?.bytes ?? 0) }));
    },

    createBase(principal: Principal, input: { productId: string; name: string; description?: string }): KnowledgeBaseRow {
      const w = workspaces.requireVisible(principal, input.productId);
      ensureDefault(w.id);
      const name = input.name.trim();
      if (db.select({ id: knowledgeBases.id }).from(knowledgeBases).where(and(eq(knowledgeBases.productId, w.id), eq(knowledgeBases.name, name))).get()) {
        throw conflict(`This workspace already has a knowledge base named "${name}"`);
      }
      const row: KnowledgeBaseRow = {
        id: crypto.randomUUID(),
        productId: w.id,
        name,
        description: input.description?.trim() || null,
        isDefault: false,
        embeddingModel: embedding.model,
        embeddingDim: embedding.dim,
        createdBy: principal.userId,
        createdAt: now(),
        updatedAt: now(),
      };
      db.insert(knowledgeBases).values(row).run();
      return row;
    },

    updateBase(principal: Principal, id: string, patch: { name?: string; description?: string | null }): KnowledgeBaseRow {
      const kb = requireBase(principal, id);
      const name = patch.name?.trim() ?? kb.name;
      if (name !== kb.name && db.select({ id: knowledgeBases.id }).from(knowledgeBases).where(and(eq(knowledgeBases.productId, kb.productId), eq(knowledgeBases.name, name))).get()) {
        throw conflict(`This workspace already has a knowledge base named "${name}"`);
      }
      const next = { name, description: patch.description === undefined ? kb.description : patch.description?.trim() || null, updatedAt: now() };
      db.update(knowledgeBases).set(next).where(eq(knowledgeBases.id, kb.id)).run();
      return { ...kb, ...next };
    },

    /** Deletes the knowledge base with all its files, chunks, keyword rows and vectors (one transaction, durable when it resolves). */
    async deleteBase(principal: Principal, id: string) {
      const kb = requireBase(principal, id);
      await commitDurably(() => db.delete(knowledgeBases).where(eq(knowledgeBases.id, kb.id)).run());
    },

    /**
     * Stores an upload and queues its ingestion in one transaction. The same bytes in the same
     * knowledge base return the existing record (`duplicate: true`) instead of a second copy.
     */
    async upload(principal: Principal, input: { knowledgeBaseId?: string; productId?: string; name: string; file: Blob }) {
      let kb: KnowledgeBaseRow;
      if (input.knowledgeBaseId) kb = requireBase(principal, input.knowledgeBaseId);
      else {
        const productId = input.productId ?? (principal.kind === "token" ? principal.productId : undefined);
        if (!productId) throw invalid("Name a knowledge_base_id or a product_id for the upload");
        kb = ensureDefault(workspaces.requireVisible(principal, productId).id);
      }
      const name = input.name.trim().slice(0, 255) || "upload";
      const format = await checkUpload(name, input.file);
      const digest = await digestOf(input.file);
      const existing = fileBySha.get({ kb: kb.id, sha: digest });
      if (existing) return { file: existing, duplicate: true };
      const row: KnowledgeFileRow = {
        id: crypto.randomUUID(),
        knowledgeBaseId: kb.id,
        productId: kb.productId,
        name,
        format,
        mimeType: mimeOf(format),
        size: input.file.size,
        sha256: digest,
        status: "queued",
        progress: 0,
        error: null,
        chunkCount: 0,
        chunkingVersion: 0, // set when ingestion cuts it
        embeddingModel: null,
        embeddedAt: null,
        createdBy: principal.userId,
        createdAt: now(),
        updatedAt: now(),
      };
      // The bytes go in over several event-loop turns; meanwhile the same bytes may have landed
      // from another upload, or the knowledge base may have been deleted: checked again below.
      const contentId = await content.write(input.file);
      let landed: KnowledgeFileRow | undefined;
      await withContent(contentId, () =>
        commitDurably(() =>
          db.transaction((tx) => {
            if (!baseById.get({ id: kb.id })) throw notFound("Knowledge base");
            landed = fileBySha.get({ kb: kb.id, sha: digest });
            if (landed) return;
            tx.insert(knowledgeFiles).values({ ...row, contentId }).run();
            jobs.enqueue(INGEST_JOB, { fileId: row.id }, { tx, group: row.productId });
          }),
        ),
      );
      if (landed) {
        content.discard(contentId);
        return { file: landed, duplicate: true };
      }
      jobs.wake();
      return { file: row, duplicate: false };
    },

    /** Replaces a file's bytes (re-ingested from scratch) and/or renames it. */
    async replaceFile(principal: Principal, id: string, input: { name?: string; file?: Blob }): Promise<KnowledgeFileRow> {
      const file = requireFile(principal, id);
      const name = input.name?.trim().slice(0, 255) || file.name;
      if (!input.file) {
        db.update(knowledgeFiles).set({ name, updatedAt: now() }).where(eq(knowledgeFiles.id, file.id)).run();
        return { ...file, name, updatedAt: now() };
      }
      const format = await checkUpload(name, input.file);
      const digest = await digestOf(input.file);
      const refuseClash = () => {
        const clash = fileBySha.get({ kb: file.knowledgeBaseId, sha: digest });
        if (clash && clash.id !== file.id) throw conflict(`The same content is already in this knowledge base as file ${clash.id}`);
      };
      refuseClash();
      const next = {
        name,
        format,
        mimeType: mimeOf(format),
        size: input.file.size,
        sha256: digest,
        status: "queued" as const,
        progress: 0,
        error: null,
        chunkCount: 0,
        embeddingModel: null,
        embeddedAt: null,
        updatedAt: now(),
      };
      const contentId = await content.write(input.file);
      await withContent(contentId, () =>
        commitDurably(() =>
          db.transaction((tx) => {
            // Checked again after the bytes went in (several event-loop turns).
            if (!fileById.get({ id: file.id })) throw notFound("File");
            refuseClash();
            tx.delete(knowledgeChunks).where(eq(knowledgeChunks.fileId, file.id)).run();
            // The old pieces go with the old content id (trigger knowledge_files_content_replaced).
            tx.update(knowledgeFiles).set({ ...next, contentId }).where(eq(knowledgeFiles.id, file.id)).run();
            jobs.enqueue(INGEST_JOB, { fileId: file.id }, { tx, group: file.productId });
          }),
        ),
      );
      jobs.wake();
      return { ...file, ...next };
    },

    listFiles(principal: Principal, knowledgeBaseId: string, w: PageWindow) {
      const kb = requireBase(principal, knowledgeBaseId);
      const where = eq(knowledgeFiles.knowledgeBaseId, kb.id);
      const total = db.select({ n: count() }).from(knowledgeFiles).where(where).get()?.n ?? 0;
      const rows = db.select(fileColumns).from(knowledgeFiles).where(where).orderBy(desc(knowledgeFiles.createdAt), knowledgeFiles.id).limit(w.pageSize).offset(w.offset).all();
      return { kb, rows, total };
    },

    /** The file's record and its exact bytes, streamed a piece at a time. */
    download(principal: Principal, id: string): { file: KnowledgeFileRow; content: ReadableStream<Uint8Array> } {
      const file = requireFile(principal, id);
      return { file, content: content.stream(contentIdOf(file)) };
    },

    /** The file's exact bytes, in memory (a workflow step that needs all of them at once). */
    async bytes(principal: Principal, id: string): Promise<Uint8Array> {
      const file = requireFile(principal, id);
      const bytes = await content.read(contentIdOf(file), file.size);
      if (!bytes) throw notFound("File content");
      return bytes;
    },

    /** Ready files in scope: one file, or every file of a knowledge base. */
    filesInScope(principal: Principal, scope: { fileId?: string; knowledgeBaseId?: string }): KnowledgeFileRow[] {
      if (scope.fileId) return [requireFile(principal, scope.fileId)];
      if (!scope.knowledgeBaseId) throw invalid("Name a file_id or a knowledge_base_id");
      const kb = requireBase(principal, scope.knowledgeBaseId);
      return db.select(fileColumns).from(knowledgeFiles).where(eq(knowledgeFiles.knowledgeBaseId, kb.id)).all();
    },

    /** Queues a re-embedding of these files (for example after the model changed). */
    reembed(files: KnowledgeFileRow[]): number {
      const ready = files.filter((f) => f.status === "ready");
      db.transaction((tx) => {
        for (const f of ready) jobs.enqueue(EMBED_JOB, { fileId: f.id }, { tx, group: f.productId });
      });
      jobs.wake();
      return ready.length;
    },

    /** Forgets these files' vectors; keyword search keeps working. */
    dropEmbeddings(files: KnowledgeFileRow[], removeVectors: (chunkIds: number[]) => void) {
      db.transaction(() => {
        for (const f of files) {
          const ids = db.select({ id: knowledgeChunks.id }).from(knowledgeChunks).where(eq(knowledgeChunks.fileId, f.id)).all().map((r) => r.id);
          removeVectors(ids);
          db.update(knowledgeFiles).set({ embeddingModel: null, embeddedAt: null, updatedAt: now() }).where(eq(knowledgeFiles.id, f.id)).run();
        }
      });
    },

    /** Deletes the file with its bytes, chunks, keyword rows and vectors in one transaction, durable when it resolves. */
    async deleteFile(principal: Principal, id: string) {
      const file = requireFile(principal, id);
      await commitDurably(() => db.delete(knowledgeFiles).where(eq(knowledgeFiles.id, file.id)).run());
    },
  };
}

export type KnowledgeService = ReturnType<typeof createKnowledgeService>;
