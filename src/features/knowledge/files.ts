// Knowledge files: upload with de-duplication and format checks, replace, list, download, delete;
// each checked against the caller's workspace through its knowledge base.
import { and, count, desc, eq, sql } from "drizzle-orm";
import type { Principal } from "../../platform/auth/principal";
import type { Db } from "../../platform/db/database";
import { durableCommit } from "../../platform/db/durability";
import { conflict, invalid, notFound, tooLarge, unprocessable, unsupportedMedia } from "../../platform/errors";
import type { PageWindow } from "../../platform/http/pagination";
import { jobKind } from "../../platform/jobs/queue";
import type { KnowledgeBases } from "./bases";
import type { ChunkDrain } from "./drain";
import { digestOf } from "./content";
import { DETECT_BYTES, detectFormat, mimeOf, SUPPORTED } from "./ingest/detect";
import { megabytes, PARSE_CAPS } from "./ingest/parse";
import { declaredInflatedBytes } from "./ingest/zip-directory";
import { knowledgeChunks, knowledgeFiles } from "./table";
import type { KnowledgeBaseRow, KnowledgeDeps, KnowledgeFileRow } from "./service";

export const MAX_FILE_BYTES = 50 * 1024 * 1024;
export const INGEST_JOB = jobKind<{ fileId: string }>("knowledge.ingest");
export const EMBED_JOB = jobKind<{ fileId: string }>("knowledge.embed");

const unsupported = (name: string) => unsupportedMedia(`${name} is not a supported document; upload one of ${SUPPORTED}`);

/**
 * SQLite's and the system's words for a failure of Hearth's own storage (its database, its disk, its
 * open files), as opposed to the file's: "unable to open database file" when Hearth ran out of file
 * descriptors, "database or disk is full", "disk I/O error".
 */
const STORAGE_FAULT = /unable to open database file|database or disk is full|disk I\/O error|database (table )?is locked|readonly database|too many open files|no space left on device|\b(EMFILE|ENFILE|ENOSPC|EDQUOT|EIO|EROFS)\b/i;

/**
 * The error a failed file shows. The job queue hands the failure only its message, kept as it is on
 * the row; one that names Hearth's storage says so here, so the user retries the file (the same
 * bytes uploaded again, or PUT …/embeddings?file_id=) instead of looking for something to fix in it.
 * Read, not written, this way: files that failed so before say it too.
 */
export function shownError(file: Pick<KnowledgeFileRow, "id" | "status" | "error">): string | null {
  if (file.status !== "failed" || !file.error || !STORAGE_FAULT.test(file.error)) return file.error;
  return `Hearth's own storage failed while ingesting this file (${file.error}); nothing is wrong with the file. Retry it: upload the same file again, or PUT /api/knowledge-base/embeddings?file_id=${file.id}`;
}
const shown = <F extends KnowledgeFileRow>(file: F): F => (file.status === "failed" ? { ...file, error: shownError(file) } : file);

export function createKnowledgeFiles({ db, clock, workspaces, jobs, content, sync }: KnowledgeDeps, { ensureDefault, requireBase, baseExists }: KnowledgeBases, drain: ChunkDrain) {
  const now = () => new Date(clock.now());
  const commitDurably = (write: () => void) => durableCommit(db, sync, write);

  /** Runs the commit that names freshly written content; if it fails, the content is removed. */
  const withContent = async (contentId: string, commit: () => Promise<void>) => {
    try {
      await commit();
    } catch (e) {
      content.discard(contentId);
      throw e;
    }
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
    if (!file || !workspaces.canSee(principal, file.productId)) throw notFound("File");
    return shown(file);
  };

  /**
   * Puts failed files back in the queue, in `tx`: each is ingested again from its stored bytes (a
   * failure of Hearth's, a full disk or too many open files, had failed a valid file for good).
   * Only files still failed at the commit are taken, so two retries queue one job; their ids.
   */
  const requeueFailed = (tx: Pick<Db, "update" | "insert">, files: KnowledgeFileRow[]): string[] => {
    const taken: string[] = [];
    for (const f of files) {
      if (f.status !== "failed") continue;
      const changed = tx
        .update(knowledgeFiles)
        .set({ status: "queued", progress: 0, error: null, updatedAt: now() })
        .where(and(eq(knowledgeFiles.id, f.id), eq(knowledgeFiles.status, "failed")))
        .returning({ id: knowledgeFiles.id })
        .all();
      if (changed.length === 0) continue;
      jobs.enqueue(INGEST_JOB, { fileId: f.id }, { tx, group: f.productId });
      taken.push(f.id);
    }
    return taken;
  };

  /** The upload's format, from its first bytes and name; refuses what is empty, too large or not a supported format. */
  const checkUpload = async (name: string, file: Blob) => {
    // Refused at once, as transcription does, rather than stored and queued only to fail with nothing to index.
    if (file.size === 0) throw invalid(`${name} is empty: there is nothing to index`);
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
    requireFile,

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
      if (existing?.status === "failed") {
        // The same bytes again where they failed: a retry, ingested again from the stored copy.
        let taken = false;
        await commitDurably(() => db.transaction((tx) => void (taken = requeueFailed(tx, [existing]).length > 0)));
        const file = fileById.get({ id: existing.id });
        if (taken && file) {
          jobs.wake();
          return { file, duplicate: false };
        }
        if (file) return { file: shown(file), duplicate: true };
      } else if (existing) return { file: existing, duplicate: true };
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
            if (!baseExists(kb.id)) throw notFound("Knowledge base");
            landed = fileBySha.get({ kb: kb.id, sha: digest });
            if (landed) return;
            tx.insert(knowledgeFiles).values({ ...row, contentId }).run();
            jobs.enqueue(INGEST_JOB, { fileId: row.id }, { tx, group: row.productId });
          }),
        ),
      );
      if (landed) {
        content.discard(contentId);
        return { file: shown(landed), duplicate: true };
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
      let oldChunks = 0;
      await withContent(contentId, () =>
        commitDurably(() =>
          db.transaction((tx) => {
            // Checked again after the bytes went in (several event-loop turns).
            if (!fileById.get({ id: file.id })) throw notFound("File");
            refuseClash();
            oldChunks = drain.lastChunkOf(file.id);
            // The old pieces go with the old content id (trigger knowledge_files_content_replaced).
            tx.update(knowledgeFiles).set({ ...next, contentId }).where(eq(knowledgeFiles.id, file.id)).run();
            jobs.enqueue(INGEST_JOB, { fileId: file.id }, { tx, group: file.productId });
          }),
        ),
      );
      // The old chunks (no longer searched: the file is queued) go a slice at a time, and only they:
      // the ingestion job may already be writing the new ones. It clears any a crash left first.
      await drain.fileUpTo(file.id, oldChunks);
      jobs.wake();
      return { ...file, ...next };
    },

    listFiles(principal: Principal, knowledgeBaseId: string, w: PageWindow) {
      const kb = requireBase(principal, knowledgeBaseId);
      const where = eq(knowledgeFiles.knowledgeBaseId, kb.id);
      const total = db.select({ n: count() }).from(knowledgeFiles).where(where).get()?.n ?? 0;
      const rows = db.select(fileColumns).from(knowledgeFiles).where(where).orderBy(desc(knowledgeFiles.createdAt), knowledgeFiles.id).limit(w.pageSize).offset(w.offset).all();
      return { kb, rows: rows.map(shown), total };
    },

    /** The file's record and its exact bytes, streamed a piece at a time. */
    download(principal: Principal, id: string): { file: KnowledgeFileRow; content: ReadableStream<Uint8Array> } {
      const file = requireFile(principal, id);
      return { file, content: content.stream(contentIdOf(file)) };
    },

    /** Ready files in scope: one file, or every file of a knowledge base. */
    filesInScope(principal: Principal, scope: { fileId?: string; knowledgeBaseId?: string }): KnowledgeFileRow[] {
      if (scope.fileId) return [requireFile(principal, scope.fileId)];
      if (!scope.knowledgeBaseId) throw invalid("Name a file_id or a knowledge_base_id");
      const kb = requireBase(principal, scope.knowledgeBaseId);
      return db.select(fileColumns).from(knowledgeFiles).where(eq(knowledgeFiles.knowledgeBaseId, kb.id)).all().map(shown);
    },

    /**
     * Queues a re-embedding of these files (for example after the model changed); failed ones are
     * ingested again (a retry). How many were queued; files being ingested are left to their job.
     */
    reembed(files: KnowledgeFileRow[]): number {
      const ready = files.filter((f) => f.status === "ready");
      let retried = 0;
      db.transaction((tx) => {
        for (const f of ready) jobs.enqueue(EMBED_JOB, { fileId: f.id }, { tx, group: f.productId });
        retried = requeueFailed(tx, files).length;
      });
      jobs.wake();
      return ready.length + retried;
    },

    /**
     * Forgets these files' vectors; keyword search keeps working. Each file says it has none first,
     * then its vectors go a slice at a time (drain.ts).
     */
    async dropEmbeddings(files: KnowledgeFileRow[], removeVectors: (chunkIds: number[]) => void) {
      for (const f of files) {
        const ids = db.select({ id: knowledgeChunks.id }).from(knowledgeChunks).where(eq(knowledgeChunks.fileId, f.id)).all().map((r) => r.id);
        db.update(knowledgeFiles).set({ embeddingModel: null, embeddedAt: null, updatedAt: now() }).where(eq(knowledgeFiles.id, f.id)).run();
        await drain.inSlices(ids, removeVectors);
      }
    },

    /**
     * Deletes the file with its bytes, chunks, keyword rows and vectors: the chunks drained first
     * (drain.ts), the rest in one transaction, durable when it resolves.
     */
    async deleteFile(principal: Principal, id: string) {
      const file = requireFile(principal, id);
      await drain.file(file.id);
      await commitDurably(() => db.delete(knowledgeFiles).where(eq(knowledgeFiles.id, file.id)).run());
    },
  };
}

export type KnowledgeFiles = ReturnType<typeof createKnowledgeFiles>;
