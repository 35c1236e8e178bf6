// HTTP routes of spec §4.5 for knowledge bases and file storage (search lives in search-routes.ts).
import { Elysia, t } from "elysia";
import type { AuthPlugin } from "../../platform/auth/plugin";
import { invalid } from "../../platform/errors";
import { PaginationQuery, pageOf, pageWindow } from "../../platform/http/pagination";
import { IdParams, errors, ok, okList, otherResponses } from "../../platform/http/schemas";
import type { Principal } from "../../platform/auth/principal";
import { CreateKnowledgeBaseBody, FileIdQuery, KnowledgeBase, KnowledgeFile, ReplaceBody, StorageQuery, StorageReplaceBody, UpdateKnowledgeBaseBody, UploadBody } from "./model";
import type { KnowledgeBaseRow, KnowledgeFileRow, KnowledgeService } from "./service";

const baseView = (kb: KnowledgeBaseRow, fileCount = 0, bytes = 0) => ({
  id: kb.id,
  product_id: kb.productId,
  name: kb.name,
  description: kb.description,
  is_default: kb.isDefault,
  embedding_model: kb.embeddingModel,
  embedding_dim: kb.embeddingDim,
  file_count: fileCount,
  bytes,
  created_at: kb.createdAt.toISOString(),
  updated_at: kb.updatedAt.toISOString(),
});

export const fileView = (f: KnowledgeFileRow) => ({
  id: f.id,
  knowledge_base_id: f.knowledgeBaseId,
  product_id: f.productId,
  name: f.name,
  format: f.format,
  mime_type: f.mimeType,
  size: f.size,
  sha256: f.sha256,
  status: f.status,
  progress: f.progress,
  error: f.error,
  chunk_count: f.chunkCount,
  embedding_model: f.embeddingModel,
  created_at: f.createdAt.toISOString(),
  updated_at: f.updatedAt.toISOString(),
});

/** Content-Disposition that keeps any file name intact (RFC 6266 / 5987). */
const disposition = (name: string) =>
  `attachment; filename="${name.replace(/[^\x20-\x7e]|["\\]/g, "_")}"; filename*=UTF-8''${encodeURIComponent(name)}`;

export function knowledgeRoutes({ auth, knowledge }: { auth: AuthPlugin; knowledge: KnowledgeService }) {
  const upload = async (principal: Parameters<KnowledgeService["upload"]>[0], body: { file: File; knowledge_base_id?: string; product_id?: string }, set: { status?: number | string }) => {
    const { file, duplicate } = await knowledge.upload(principal, {
      knowledgeBaseId: body.knowledge_base_id,
      productId: body.product_id,
      name: body.file.name,
      file: body.file,
    });
    set.status = duplicate ? 200 : 202;
    return {
      success: true as const,
      message: duplicate ? "The same file is already in this knowledge base; here is its record" : "File stored; ingestion queued",
      data: fileView(file),
    };
  };
  const uploadDoc = {
    auth: "any:strict" as const,
    body: UploadBody,
    parse: "multipart/form-data" as const,
    response: { 200: ok(KnowledgeFile, "Already present"), 202: ok(KnowledgeFile, "Stored, ingestion queued"), ...errors(400, 401, 404, 413, 415, 422, 429) },
  };

  // Spec §4.5 manages files at /storage too (PUT, DELETE): the same as the routes by file id.
  const replace = async (principal: Principal, id: string, body: { file?: File; name?: string }, set: { status?: number | string }) => {
    if (!body.file && !body.name) throw invalid("Send a new file, a new name, or both");
    const file = await knowledge.replaceFile(principal, id, { name: body.name, file: body.file });
    set.status = body.file ? 202 : 200;
    return { success: true as const, message: body.file ? "File replaced; ingestion queued" : "File renamed", data: fileView(file) };
  };
  const replaceDoc = { auth: "any:strict" as const, response: { 200: ok(KnowledgeFile), 202: ok(KnowledgeFile), ...errors(400, 401, 404, 409, 413, 415, 422, 429) } };
  const remove = async (principal: Principal, id: string) => {
    await knowledge.deleteFile(principal, id);
    return { success: true as const, message: "File deleted with its chunks and vectors", data: { id: id.toLowerCase() } };
  };
  const removeDoc = { auth: "any" as const, response: { 200: ok(t.Object({ id: IdParams.properties.id })), ...errors(400, 401, 404, 429) } };

  return new Elysia()
    .use(auth)
    .guard({ detail: { tags: ["Knowledge base"] } })
    .post("/api/knowledge-base/storage/upload", ({ principal, body, set }) => upload(principal, body, set), { ...uploadDoc, detail: { summary: "Upload a file (multipart/form-data)" } })
    .post("/api/knowledge-base/storage", ({ principal, body, set }) => upload(principal, body, set), { ...uploadDoc, detail: { summary: "Upload a file (same as /storage/upload)" } })
    .get(
      "/api/knowledge-base/storage",
      ({ principal, query }) => {
        const w = pageWindow(query);
        const { rows, total } = knowledge.listFiles(principal, query.knowledge_base_id, w);
        return { success: true as const, data: rows.map(fileView), pagination: { page: w.page, pageSize: w.pageSize, total } };
      },
      { auth: "any", query: StorageQuery, response: { 200: okList(KnowledgeFile), ...errors(400, 401, 404, 429) }, detail: { summary: "List files of a knowledge base" } },
    )
    .get(
      "/api/knowledge-base/storage/:id",
      ({ principal, params, query }) => {
        const w = pageWindow(query);
        const { rows, total } = knowledge.listFiles(principal, params.id, w);
        return { success: true as const, data: rows.map(fileView), pagination: { page: w.page, pageSize: w.pageSize, total } };
      },
      { auth: "any", params: IdParams, query: PaginationQuery, response: { 200: okList(KnowledgeFile), ...errors(400, 401, 404, 429) }, detail: { summary: "List items of a knowledge base, with status and progress" } },
    )
    .get(
      "/api/knowledge-base/storage/file/:id/download",
      ({ principal, params }) => {
        const { file, content } = knowledge.download(principal, params.id);
        return new Response(content, {
          headers: { "content-type": file.mimeType, "content-length": String(file.size), "content-disposition": disposition(file.name), "x-content-sha256": file.sha256 },
        });
      },
      {
        auth: "any",
        params: IdParams,
        detail: {
          summary: "Download the exact bytes uploaded",
          responses: otherResponses(
            { 200: { description: "The file's bytes, with its own content type, Content-Disposition (its name) and X-Content-SHA256", content: { "application/octet-stream": { schema: { type: "string", format: "binary" } } } } },
            400, 401, 404, 429,
          ),
        },
      },
    )
    .get("/api/knowledge-base/storage/file/:id", ({ principal, params }) => ({ success: true as const, data: fileView(knowledge.requireFile(principal, params.id)) }), {
      auth: "any",
      params: IdParams,
      response: { 200: ok(KnowledgeFile), ...errors(400, 401, 404, 429) },
      detail: { summary: "A file's record: status, progress, error" },
    })
    .put("/api/knowledge-base/storage/file/:id", ({ principal, params, body, set }) => replace(principal, params.id, body, set), {
      ...replaceDoc,
      params: IdParams,
      body: ReplaceBody,
      detail: { summary: "Replace a file's content (re-ingested) or rename it; multipart or JSON {name}" },
    })
    .put("/api/knowledge-base/storage", ({ principal, body, set }) => replace(principal, body.file_id, body, set), {
      ...replaceDoc,
      body: StorageReplaceBody,
      detail: { summary: "Replace or rename the file named by file_id (same as PUT /storage/file/{id}); multipart or JSON {file_id, name}" },
    })
    .delete("/api/knowledge-base/storage/file/:id", ({ principal, params }) => remove(principal, params.id), { ...removeDoc, params: IdParams, detail: { summary: "Delete a file" } })
    .delete("/api/knowledge-base/storage", ({ principal, query }) => remove(principal, query.file_id), {
      ...removeDoc,
      query: FileIdQuery,
      detail: { summary: "Delete the file named by ?file_id= (same as DELETE /storage/file/{id})" },
    })
    .post(
      "/api/knowledge-base",
      ({ principal, body, set }) => {
        set.status = 201;
        return { success: true as const, message: "Knowledge base created", data: baseView(knowledge.createBase(principal, { productId: body.product_id, name: body.name, description: body.description ?? undefined })) };
      },
      { auth: "any", body: CreateKnowledgeBaseBody, parse: "json", response: { 201: ok(KnowledgeBase, "Created"), ...errors(400, 401, 404, 409, 422, 429) }, detail: { summary: "Create a knowledge base" } },
    )
    .get(
      "/api/knowledge-base/:id",
      ({ principal, params, query }) => ({
        success: true as const,
        ...pageOf(knowledge.listBases(principal, params.id).map((b) => baseView(b.kb, b.fileCount, b.bytes)), query),
      }),
      { auth: "any", params: IdParams, query: PaginationQuery, response: { 200: okList(KnowledgeBase), ...errors(400, 401, 404, 429) }, detail: { summary: "List knowledge bases of a workspace (the id is the workspace's)" } },
    )
    .put(
      "/api/knowledge-base/:id",
      ({ principal, params, body }) => ({ success: true as const, message: "Knowledge base updated", data: baseView(knowledge.updateBase(principal, params.id, body)) }),
      { auth: "any", params: IdParams, body: UpdateKnowledgeBaseBody, parse: "json", response: { 200: ok(KnowledgeBase), ...errors(400, 401, 404, 409, 422, 429) }, detail: { summary: "Rename a knowledge base" } },
    )
    .delete(
      "/api/knowledge-base/:id",
      async ({ principal, params }) => {
        await knowledge.deleteBase(principal, params.id);
        return { success: true as const, message: "Knowledge base deleted with all its files", data: { id: params.id } };
      },
      { auth: "any", params: IdParams, response: { 200: ok(t.Object({ id: IdParams.properties.id })), ...errors(400, 401, 404, 429) }, detail: { summary: "Delete a knowledge base and everything in it" } },
    );
}
