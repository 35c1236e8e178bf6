// Schemas of the knowledge base and file storage endpoints.
import { t } from "elysia";
import { Int, Timestamp, Uuid } from "../../platform/http/schemas";
import { PaginationQuery } from "../../platform/http/pagination";

export const KnowledgeBase = t.Object({
  id: Uuid,
  product_id: Uuid,
  name: t.String(),
  description: t.Nullable(t.String()),
  is_default: t.Boolean(),
  embedding_model: t.String(),
  embedding_dim: Int(),
  file_count: Int(),
  bytes: Int(),
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const CreateKnowledgeBaseBody = t.Object(
  { product_id: t.Optional(Uuid), name: t.String({ minLength: 1, maxLength: 200 }), description: t.Optional(t.Nullable(t.String({ maxLength: 2000 }))) },
  { additionalProperties: false },
);

export const UpdateKnowledgeBaseBody = t.Object(
  { name: t.Optional(t.String({ minLength: 1, maxLength: 200 })), description: t.Optional(t.Nullable(t.String({ maxLength: 2000 }))) },
  { additionalProperties: false, minProperties: 1 },
);

export const KnowledgeFile = t.Object({
  id: Uuid,
  knowledge_base_id: Uuid,
  product_id: Uuid,
  name: t.String(),
  format: t.UnionEnum(["pdf", "docx", "csv", "json", "xml", "md", "txt"]),
  mime_type: t.String(),
  size: Int(),
  sha256: t.String(),
  status: t.UnionEnum(["queued", "processing", "ready", "failed"]),
  progress: t.Number({ minimum: 0, maximum: 1 }),
  error: t.Nullable(t.String()),
  chunk_count: Int(),
  embedding_model: t.Nullable(t.String()),
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const UploadBody = t.Object({
  file: t.File({ description: "The document: CSV, PDF, DOCX, TXT, MD, JSON or XML, at most 50 MB" }),
  knowledge_base_id: t.Optional(Uuid),
  product_id: t.Optional(t.String({ format: "uuid", description: "Workspace whose Default knowledge base receives the file, when no knowledge_base_id is given" })),
});

export const ReplaceBody = t.Object({
  file: t.Optional(t.File({ description: "New content; the file is ingested again" })),
  name: t.Optional(t.String({ minLength: 1, maxLength: 255 })),
});

/** PUT /api/knowledge-base/storage: the same as PUT .../storage/file/{id}, the file named in the body. */
export const StorageReplaceBody = t.Object({ file_id: Uuid, ...ReplaceBody.properties });

export const FileIdQuery = t.Object({ file_id: Uuid });

export const StorageQuery = t.Object({
  knowledge_base_id: Uuid,
  ...PaginationQuery.properties,
});

// The search and embedding-state endpoints (search-routes.ts).
export const SearchBody = t.Object(
  {
    query: t.String({ minLength: 1, maxLength: 4000 }),
    product_id: t.Optional(Uuid),
    knowledge_base_ids: t.Optional(t.Array(Uuid, { minItems: 1, maxItems: 50 })),
    top_k: t.Optional(t.Integer({ minimum: 1, maximum: 100, default: 5 })),
    mode: t.Optional(t.UnionEnum(["vector", "hybrid", "keyword"], { description: 'Default "vector"; chat and MCP use "hybrid"' })),
    min_score: t.Optional(t.Number({ minimum: -1, maximum: 1 })),
  },
  { additionalProperties: false },
);

export const SearchResult = t.Object({
  chunk_id: Int(),
  file_id: Uuid,
  file_name: t.String(),
  knowledge_base_id: Uuid,
  text: t.String(),
  page: t.Optional(Int()),
  headings: t.Array(t.String()),
  score: t.Number(),
});

export const Scope = t.Object({ knowledge_base_id: t.Optional(Uuid), file_id: t.Optional(Uuid) }, { additionalProperties: false });

export const EmbeddingState = t.Object({
  model: t.String(),
  embedder: t.UnionEnum(["loading", "ok", "unavailable"]),
  reason: t.Optional(t.String()),
  files: t.Array(
    t.Object({
      file_id: Uuid,
      name: t.String(),
      status: t.String(),
      chunk_count: Int(),
      embedding_model: t.Nullable(t.String()),
      embedded: t.Boolean(),
    }),
  ),
});
