// Knowledge bases: the workspace's Default one made on first need, create, list with file counts,
// rename, delete with everything in them; each checked against the caller's workspace.
import { and, count, desc, eq, sql } from "drizzle-orm";
import type { Principal } from "../../platform/auth/principal";
import { durableCommit } from "../../platform/db/durability";
import { conflict, notFound, unprocessable } from "../../platform/errors";
import { nonBlank } from "../../platform/validator";
import { knowledgeBases, knowledgeFiles } from "./table";
import type { ChunkDrain } from "./drain";
import type { KnowledgeBaseRow, KnowledgeDeps } from "./service";

export const DEFAULT_KB = "Default";

export function createKnowledgeBases({ db, clock, workspaces, embedding, sync }: KnowledgeDeps, drain: ChunkDrain) {
  const now = () => new Date(clock.now());

  // Prepared once: every search, upload and file request looks these up (building a drizzle query
  // cost more than running it: ~200 µs of the event loop each).
  const baseById = db.select().from(knowledgeBases).where(eq(knowledgeBases.id, sql.placeholder("id"))).prepare();
  const baseIdsOf = db.select({ id: knowledgeBases.id }).from(knowledgeBases).where(eq(knowledgeBases.productId, sql.placeholder("productId"))).prepare();
  const defaultBaseOf = db
    .select()
    .from(knowledgeBases)
    .where(and(eq(knowledgeBases.productId, sql.placeholder("productId")), eq(knowledgeBases.isDefault, true)))
    .prepare();

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

  /** The knowledge base if it belongs to a workspace the caller may use; otherwise "not found". */
  const requireBase = (principal: Principal, id: string): KnowledgeBaseRow => {
    const kb = baseById.get({ id: id.toLowerCase() });
    if (!kb || !workspaces.canSee(principal, kb.productId)) throw notFound("Knowledge base");
    return kb;
  };

  const nameTaken = (productId: string, name: string) =>
    db.select({ id: knowledgeBases.id }).from(knowledgeBases).where(and(eq(knowledgeBases.productId, productId), eq(knowledgeBases.name, name))).get() !== undefined;

  return {
    ensureDefault,
    requireBase,

    /** Whether the knowledge base still exists (checked again inside an upload's transaction). */
    baseExists: (id: string): boolean => Boolean(baseById.get({ id })),

    /** Ids of a workspace's knowledge bases, for checks that act as the workspace (a graph's node names one). */
    basesOfWorkspace: (productId: string): string[] => baseIdsOf.all({ productId }).map((r) => r.id),

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

    /** A new knowledge base in the named workspace, or the token's own when none is named (as workflows and agents do). */
    createBase(principal: Principal, input: { productId?: string; name: string; description?: string }): KnowledgeBaseRow {
      const productId = input.productId ?? (principal.kind === "token" ? principal.productId : undefined);
      if (!productId) throw unprocessable("product_id is required: the workspace the knowledge base belongs to");
      const w = workspaces.requireVisible(principal, productId);
      ensureDefault(w.id);
      const name = nonBlank(input.name);
      if (nameTaken(w.id, name)) throw conflict(`This workspace already has a knowledge base named "${name}"`);
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
      const name = patch.name === undefined ? kb.name : nonBlank(patch.name);
      if (name !== kb.name && nameTaken(kb.productId, name)) throw conflict(`This workspace already has a knowledge base named "${name}"`);
      const next = { name, description: patch.description === undefined ? kb.description : patch.description?.trim() || null, updatedAt: now() };
      db.update(knowledgeBases).set(next).where(eq(knowledgeBases.id, kb.id)).run();
      return { ...kb, ...next };
    },

    /**
     * Deletes the knowledge base with all its files, chunks, keyword rows and vectors: the chunks
     * drained first (drain.ts), the rest in one transaction, durable when it resolves.
     */
    async deleteBase(principal: Principal, id: string) {
      const kb = requireBase(principal, id);
      await drain.base(kb.id);
      await durableCommit(db, sync, () => db.delete(knowledgeBases).where(eq(knowledgeBases.id, kb.id)).run());
    },
  };
}

export type KnowledgeBases = ReturnType<typeof createKnowledgeBases>;
