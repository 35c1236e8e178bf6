// Workspaces (the spec's products): every tenant check for workspace-owned data starts here.
import { and, count, eq, sql } from "drizzle-orm";
import type { Db } from "../../platform/db/database";
import type { Clock } from "../../platform/clock";
import { forbidden, notFound } from "../../platform/errors";
import { nonBlank } from "../../platform/validator";
import type { PageWindow } from "../../platform/http/pagination";
import { isOrgAdmin, type Principal } from "../../platform/auth/principal";
import { products } from "./table";

export type WorkspaceRow = typeof products.$inferSelect;

export function createWorkspacesService({ db, clock }: { db: Db; clock: Clock }) {
  // Every workspace-scoped request looks its workspace up, so rows are remembered (frozen: callers
  // copy, never change them); update and remove below, the only writers of a workspace row, forget it.
  const selectById = db.select().from(products).where(eq(products.id, sql.placeholder("id"))).prepare();
  const known = new Map<string, WorkspaceRow>();
  const byId = (id: string): WorkspaceRow | undefined => {
    const key = id.toLowerCase();
    const hit = known.get(key);
    if (hit) return hit;
    const row = selectById.get({ id: key });
    if (!row) return undefined;
    if (known.size >= 10_000) known.delete(known.keys().next().value!);
    known.set(key, Object.freeze(row));
    return row;
  };


  const visibleTo = (principal: Principal, w: WorkspaceRow) => (principal.kind === "token" ? principal.productId === w.id : principal.organizationId === w.organizationId);

  /** The workspace if the caller may see it (undefined for another tenant's or a missing one). */
  const findVisible = (principal: Principal, id: string): WorkspaceRow | undefined => {
    const w = byId(id);
    return w && visibleTo(principal, w) ? w : undefined;
  };

  /** The workspace if the caller may see it; a workspace of another tenant is "not found". */
  const requireVisible = (principal: Principal, id: string): WorkspaceRow => {
    const w = findVisible(principal, id);
    if (!w) throw notFound("Workspace");
    return w;
  };

  /** Owners, admins and super admins manage every workspace of the organization; members their own. */
  const canManage = (principal: Principal, w: WorkspaceRow) =>
    principal.kind === "user" && (isOrgAdmin(principal) || w.createdBy === principal.userId);

  /** Told after a workspace is deleted (its tokens went with it: caches of them must forget). */
  const removed: ((id: string) => void)[] = [];
  const removing: ((id: string) => Promise<unknown>)[] = [];
  const deleting: ((id: string) => void)[] = [];

  const requireManageable = (principal: Principal, id: string): WorkspaceRow => {
    const w = requireVisible(principal, id);
    if (principal.kind === "token") throw forbidden("API tokens cannot change workspaces");
    if (!canManage(principal, w)) throw forbidden("Only owners, admins and the workspace's creator may manage it");
    return w;
  };

  return {
    organizationOf: (id: string) => byId(id)?.organizationId,
    requireVisible,
    findVisible,

    /** Whether the caller may see data of this workspace (a resource's owner): false for another tenant's or a missing one. */
    canSee: (principal: Principal, productId: string): boolean => findVisible(principal, productId) !== undefined,
    requireManageable,
    canManage,

    list(principal: Principal, w: PageWindow) {
      const where = principal.kind === "token" ? eq(products.id, principal.productId) : eq(products.organizationId, principal.organizationId);
      const total = db.select({ n: count() }).from(products).where(where).get()?.n ?? 0;
      const rows = db.select().from(products).where(where).orderBy(products.createdAt, products.id).limit(w.pageSize).offset(w.offset).all();
      return { rows, total };
    },

    /** Creates a workspace in the organization the caller acts in. */
    create(principal: Principal, input: { name: string; description?: string }): WorkspaceRow {
      if (principal.kind === "token") throw forbidden("API tokens cannot create workspaces");
      return this.createIn(principal.organizationId, principal.userId, input);
    },

    createIn(organizationId: string, createdBy: string | null, input: { name: string; description?: string }): WorkspaceRow {
      const now = new Date(clock.now());
      const row: WorkspaceRow = {
        id: crypto.randomUUID(),
        organizationId,
        name: nonBlank(input.name),
        description: input.description?.trim() || null,
        createdBy,
        createdAt: now,
        updatedAt: now,
      };
      db.insert(products).values(row).run();
      return row;
    },

    update(principal: Principal, id: string, patch: { name?: string; description?: string | null }): WorkspaceRow {
      const w = requireManageable(principal, id);
      const next = {
        name: patch.name === undefined ? w.name : nonBlank(patch.name),
        description: patch.description === undefined ? w.description : patch.description?.trim() || null,
        updatedAt: new Date(clock.now()),
      };
      db.update(products).set(next).where(eq(products.id, w.id)).run();
      known.delete(w.id);
      return { ...w, ...next };
    },

    /** Deletes the workspace and, through foreign keys, everything it owns (what is large drained first: onRemoving). */
    async remove(principal: Principal, id: string): Promise<void> {
      const w = requireManageable(principal, id);
      for (const fn of removing) await fn(w.id);
      for (const fn of deleting) fn(w.id);
      db.delete(products).where(and(eq(products.id, w.id), eq(products.organizationId, w.organizationId))).run();
      known.delete(w.id);
      for (const fn of removed) fn(w.id);
    },

    onRemoved: (fn: (id: string) => void) => void removed.push(fn),
    /** Work before a workspace's rows go, in slices of its own (knowledge drains its chunks). */
    onRemoving: (fn: (id: string) => Promise<unknown>) => void removing.push(fn),
    /** Work in the delete's own turn, right before it: nothing starts in between (workflows stop what runs). */
    onDeleting: (fn: (id: string) => void) => void deleting.push(fn),
  };
}

export type WorkspacesService = ReturnType<typeof createWorkspacesService>;
