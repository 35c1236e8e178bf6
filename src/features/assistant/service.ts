// Chat sessions and their messages. A session lives in one workspace (its id is unique there, so the
// same client-chosen id in two workspaces is two sessions) and belongs to whoever started it: a user,
// or an API token. Others get "not found", except owners, admins and SYSTEM tokens, who read them all.
import { and, asc, count, desc, eq, sql } from "drizzle-orm";
import type { Db } from "../../platform/db/database";
import type { Clock } from "../../platform/clock";
import { forbidden, invalid, notFound } from "../../platform/errors";
import type { PageWindow } from "../../platform/http/pagination";
import { isOrgAdmin, type Principal } from "../../platform/auth/principal";
import type { WorkspacesService } from "../workspaces/service";
import { chatMessages, chatSessions, type AnswerMetadata, type StoredSource } from "./table";
import { excerpt, type Turn } from "./prompt";

/** Client-chosen session ids: letters, digits and . _ : - (a UUID fits), at most 128. */
export const SESSION_ID_PATTERN = "^[A-Za-z0-9._:-]{1,128}$";
const SESSION_ID = new RegExp(SESSION_ID_PATTERN);

export type ChatSessionRow = typeof chatSessions.$inferSelect;
export type ChatMessageRow = typeof chatMessages.$inferSelect;

const ownerOf = (p: Principal) => (p.kind === "token" ? { ownerKind: "token" as const, ownerId: p.tokenId } : { ownerKind: "user" as const, ownerId: p.userId });
const owns = (p: Principal, s: ChatSessionRow) => {
  const o = ownerOf(p);
  return s.ownerKind === o.ownerKind && s.ownerId === o.ownerId;
};
/** Owners, admins (and super admins acting in the organization) and SYSTEM tokens in their workspace read every session. */
const readsAll = (p: Principal) => isOrgAdmin(p) || (p.kind === "token" && p.tokenRole === "SYSTEM");
const canRead = (p: Principal, s: ChatSessionRow) => owns(p, s) || readsAll(p);

export function createChatService({ db, clock, workspaces }: { db: Db; clock: Clock; workspaces: WorkspacesService }) {
  const now = () => new Date(clock.now());
  const visible = (principal: Principal, productId: string) => {
    try {
      return workspaces.requireVisible(principal, productId);
    } catch {
      return undefined;
    }
  };

  /**
   * The session `id` the caller may read: in `productId` (an API token's own workspace by default),
   * or, for a user naming no workspace, the one of its organization's workspaces that has it (its
   * own first). Anything else is "not found"; an id the user has in several workspaces is a 400.
   */
  const findSession = (principal: Principal, id: string, productId?: string): ChatSessionRow => {
    const workspaceId = productId ?? (principal.kind === "token" ? principal.productId : undefined);
    if (workspaceId !== undefined) {
      const workspace = visible(principal, workspaceId);
      const session = workspace && db.select().from(chatSessions).where(and(eq(chatSessions.id, id), eq(chatSessions.productId, workspace.id))).get();
      if (!session || !canRead(principal, session)) throw notFound("Chat session");
      return session;
    }
    const readable = db
      .select()
      .from(chatSessions)
      .where(eq(chatSessions.id, id))
      .all()
      .filter((s) => visible(principal, s.productId) && canRead(principal, s));
    if (readable.length === 0) throw notFound("Chat session");
    if (readable.length === 1) return readable[0]!;
    const own = readable.filter((s) => owns(principal, s));
    if (own.length === 1) return own[0]!;
    throw invalid("This session_id exists in several workspaces; name the workspace with product_id");
  };

  return {
    findSession,

    /**
     * Stores a question in one transaction (one disk sync) with the session it goes to: the named one
     * if the caller started it, a new one under the client's id if that id is unused in `productId`,
     * or a new one with a fresh UUID. Returns the session and its earlier complete turns.
     */
    ask(principal: Principal, productId: string, id: string | undefined, question: string, turns: number): { session: ChatSessionRow; history: Turn[] } {
      if (id !== undefined && !SESSION_ID.test(id)) throw invalid("session_id may hold letters, digits and . _ : - (at most 128)");
      const sessionId = id ?? crypto.randomUUID();
      const at = now();
      return db.transaction((tx) => {
        // Insert-or-keep, then read back: two requests naming the same new id both end in one session.
        tx.insert(chatSessions)
          .values({ id: sessionId, productId, ...ownerOf(principal), title: excerpt(question, 80), createdAt: at, updatedAt: at })
          .onConflictDoNothing()
          .run();
        const session = findSession(principal, sessionId, productId);
        // Those who may read another's conversation may not write into it.
        if (!owns(principal, session)) throw forbidden("Only the session's creator may continue it; start a new session");
        const history = tx
          .select({ role: chatMessages.role, content: chatMessages.content })
          .from(chatMessages)
          .where(and(eq(chatMessages.sessionKey, session.key), eq(chatMessages.status, "complete")))
          .orderBy(desc(chatMessages.id))
          .limit(turns)
          .all()
          .reverse();
        tx.insert(chatMessages).values({ sessionKey: session.key, role: "user", content: question, createdAt: at }).run();
        tx.update(chatSessions).set({ updatedAt: at }).where(eq(chatSessions.key, session.key)).run();
        return { session, history };
      });
    },

    addAnswer(sessionKey: number, answer: { content: string; status: "complete" | "interrupted"; sources: StoredSource[]; metadata: AnswerMetadata }) {
      const at = now();
      db.transaction((tx) => {
        tx.insert(chatMessages).values({ sessionKey, role: "assistant", content: answer.content, status: answer.status, sources: answer.sources, metadata: answer.metadata, createdAt: at }).run();
        tx.update(chatSessions).set({ updatedAt: at }).where(eq(chatSessions.key, sessionKey)).run();
      });
    },

    messages(principal: Principal, sessionId: string, productId: string | undefined, w: PageWindow) {
      const session = findSession(principal, sessionId, productId);
      const rows = db.select().from(chatMessages).where(eq(chatMessages.sessionKey, session.key)).orderBy(asc(chatMessages.id)).limit(w.pageSize).offset(w.offset).all();
      const total = db.select({ n: count() }).from(chatMessages).where(eq(chatMessages.sessionKey, session.key)).get()!.n;
      return { session, rows, total };
    },

    /** The workspace's sessions the caller may read: its own, or all of them for owners, admins and SYSTEM tokens. */
    sessions(principal: Principal, productId: string, w: PageWindow) {
      const workspace = workspaces.requireVisible(principal, productId);
      const { ownerKind, ownerId } = ownerOf(principal);
      const where = readsAll(principal)
        ? eq(chatSessions.productId, workspace.id)
        : and(eq(chatSessions.productId, workspace.id), eq(chatSessions.ownerKind, ownerKind), eq(chatSessions.ownerId, ownerId));
      const messageCount = sql<number>`(SELECT count(*) FROM chat_messages AS m WHERE m.session_key = "chat_sessions"."key")`;
      const rows = db
        .select({ session: chatSessions, messageCount })
        .from(chatSessions)
        .where(where)
        .orderBy(desc(chatSessions.updatedAt), desc(chatSessions.id))
        .limit(w.pageSize)
        .offset(w.offset)
        .all();
      const total = db.select({ n: count() }).from(chatSessions).where(where).get()!.n;
      return { rows, total };
    },

    /** Deletes a session with its messages: its creator, or an owner, admin or SYSTEM token. */
    remove(principal: Principal, sessionId: string, productId?: string) {
      const session = findSession(principal, sessionId, productId);
      db.delete(chatSessions).where(eq(chatSessions.key, session.key)).run();
    },
  };
}

export type ChatService = ReturnType<typeof createChatService>;
