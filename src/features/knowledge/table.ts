// Knowledge bases, their files (bytes kept in the database, in pieces), and the chunks made from them.
// The keyword index (FTS5) and the vectors (sqlite-vec) are virtual tables created by a custom
// migration and owned by vector-store.ts / keyword-store.ts.
import { blob, index, integer, primaryKey, real, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { users } from "../accounts/table";
import { products } from "../workspaces/table";

export const knowledgeBases = sqliteTable(
  "knowledge_bases",
  {
    id: text("id").primaryKey(),
    productId: text("product_id")
      .notNull()
      .references(() => products.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    description: text("description"),
    isDefault: integer("is_default", { mode: "boolean" }).notNull().default(false),
    // The model whose vectors this knowledge base holds; a different model means a re-embed.
    embeddingModel: text("embedding_model").notNull(),
    embeddingDim: integer("embedding_dim").notNull(),
    createdBy: text("created_by").references(() => users.id, { onDelete: "set null" }),
    createdAt: integer("created_at", { mode: "timestamp_ms" }).notNull(),
    updatedAt: integer("updated_at", { mode: "timestamp_ms" }).notNull(),
  },
  (t) => [uniqueIndex("knowledge_bases_name_idx").on(t.productId, t.name)],
);

export const knowledgeFiles = sqliteTable(
  "knowledge_files",
  {
    id: text("id").primaryKey(),
    knowledgeBaseId: text("knowledge_base_id")
      .notNull()
      .references(() => knowledgeBases.id, { onDelete: "cascade" }),
    productId: text("product_id")
      .notNull()
      .references(() => products.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    format: text("format", { enum: ["pdf", "docx", "csv", "json", "xml", "md", "txt"] }).notNull(),
    mimeType: text("mime_type").notNull(),
    size: integer("size").notNull(),
    sha256: text("sha256").notNull(),
    // The pieces of its bytes (knowledgeContentPieces); a new upload of the file gets a new id.
    contentId: text("content_id").notNull(),
    status: text("status", { enum: ["queued", "processing", "ready", "failed"] }).notNull(),
    progress: real("progress").notNull().default(0),
    error: text("error"),
    chunkCount: integer("chunk_count").notNull().default(0),
    // The chunking (ingest/pipeline.ts CHUNKING_VERSION) its chunks were cut with; files cut by an
    // older one are cut and embedded again at start-up. 0: before versions were recorded.
    chunkingVersion: integer("chunking_version").notNull().default(0),
    // Model of the vectors this file has; null until embedded (keyword search works before that).
    embeddingModel: text("embedding_model"),
    embeddedAt: integer("embedded_at", { mode: "timestamp_ms" }),
    createdBy: text("created_by").references(() => users.id, { onDelete: "set null" }),
    createdAt: integer("created_at", { mode: "timestamp_ms" }).notNull(),
    updatedAt: integer("updated_at", { mode: "timestamp_ms" }).notNull(),
  },
  (t) => [
    uniqueIndex("knowledge_files_sha_idx").on(t.knowledgeBaseId, t.sha256),
    index("knowledge_files_product_idx").on(t.productId),
    index("knowledge_files_content_idx").on(t.contentId),
  ],
);

/**
 * The uploaded bytes, apart from the file row so that listings never read them, in pieces written
 * one per event-loop turn (content.ts): a 50 MB upload never holds the loop for one long insert.
 * Pieces are written before the row that names them, so no foreign key; triggers (migration 0014)
 * delete a file's pieces with the file or when it names new ones, and a start removes pieces that
 * no file names (an upload cut off by a crash).
 */
export const knowledgeContentPieces = sqliteTable(
  "knowledge_content_pieces",
  {
    contentId: text("content_id").notNull(),
    seq: integer("seq").notNull(),
    bytes: blob("bytes", { mode: "buffer" }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.contentId, t.seq] })],
);


export const knowledgeChunks = sqliteTable(
  "knowledge_chunks",
  {
    // Integer ids: they are the rowids of the keyword index and the vector tables.
    id: integer("id").primaryKey({ autoIncrement: true }),
    fileId: text("file_id")
      .notNull()
      .references(() => knowledgeFiles.id, { onDelete: "cascade" }),
    knowledgeBaseId: text("knowledge_base_id").notNull(),
    productId: text("product_id").notNull(),
    ordinal: integer("ordinal").notNull(),
    text: text("text").notNull(),
    page: integer("page"),
    headings: text("headings", { mode: "json" }).$type<string[]>().notNull(),
    charStart: integer("char_start").notNull(),
    charEnd: integer("char_end").notNull(),
    tokens: integer("tokens").notNull(),
  },
  (t) => [index("knowledge_chunks_file_idx").on(t.fileId, t.ordinal), index("knowledge_chunks_kb_idx").on(t.knowledgeBaseId)],
);
