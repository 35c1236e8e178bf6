// Chat sessions and their messages, inside the caller's workspace: a session of another workspace
// is "not found", a client-chosen id is taken when it is new.
import { and, asc, count, desc, eq, sql } from "drizzle-orm";
import type { Db } from "../../platform/db/database";
import type { Clock } from "../../platform/clock";
import { invalid, notFound } from "../../platform/errors";
import type { PageWindow } from "../../platform/http/pagination";
import type { Principal } from "../../platform/auth/principal";
import type { WorkspacesService } from "../workspaces/service";
import { chatMessages, chatSessions, type AnswerMetadata, type StoredSource } from "./table";
import { excerpt, type Turn } from "./prompt";

/** Client-chosen session ids: letters, digits and . _ : - (a UUID fits), at most 128. */
export const SESSION_ID_PATTERN = "^[A-Za-z0-9._:-]{1,128}$";
const SESSION_ID = new RegExp(SESSION_ID_PATTERN);

export type ChatSessionRow = typeof chatSessions.$inferSelect;
export type ChatMessageRow = typeof chatMessages.$inferSelect;

export function createChatService({ db, clock, workspaces }: { db: Db; clock: Clock; workspaces: WorkspacesService }) {
  const now = () => new Date(clock.now());

  /** The session if the caller may see it (its workspace is visible to them); otherwise "not found". */
  const requireSession = (principal: Principal, id: string): ChatSessionRow => {
    const session = db.select().from(chatSessions).where(eq(chatSessions.id, id)).get();
    if (!session) throw notFound("Chat session");
    try {
      workspaces.requireVisible(principal, session.productId);
    } catch {
      throw notFound("Chat session");
    }
    return session;
  };

  return {
    requireSession,

    /**
     * Stores a question in one transaction (one disk sync) with the session it goes to: the named one
     * if it is the caller's and in `productId`, a new one under the client's id if that id is unused,
     * or a new one with a fresh UUID. Returns the session and its earlier complete turns.
     */
    ask(principal: Principal, productId: string, id: string | undefined, question: string, turns: number): { session: ChatSessionRow; history: Turn[] } {
      if (id !== undefined && !SESSION_ID.test(id)) throw invalid("session_id may hold letters, digits and . _ : - (at most 128)");
      const sessionId = id ?? crypto.randomUUID();
      const at = now();
      return db.transaction((tx) => {
        // Insert-or-keep, then read back: two requests naming the same new id both end in one session.
        tx.insert(chatSessions).values({ id: sessionId, productId, title: excerpt(question, 80), createdAt: at, updatedAt: at }).onConflictDoNothing().run();
        const session = requireSession(principal, sessionId);
        if (session.productId !== productId) throw notFound("Chat session");
        const history = tx
          .select({ role: chatMessages.role, content: chatMessages.content })
          .from(chatMessages)
          .where(and(eq(chatMessages.sessionId, sessionId), eq(chatMessages.status, "complete")))
          .orderBy(desc(chatMessages.id))
          .limit(turns)
          .all()
          .reverse();
        tx.insert(chatMessages).values({ sessionId, role: "user", content: question, createdAt: at }).run();
        tx.update(chatSessions).set({ updatedAt: at }).where(eq(chatSessions.id, sessionId)).run();
        return { session, history };
      });
    },

    addAnswer(sessionId: string, answer: { content: string; status: "complete" | "interrupted"; sources: StoredSource[]; metadata: AnswerMetadata }) {
      const at = now();
      db.transaction((tx) => {
        tx.insert(chatMessages).values({ sessionId, role: "assistant", content: answer.content, status: answer.status, sources: answer.sources, metadata: answer.metadata, createdAt: at }).run();
        tx.update(chatSessions).set({ updatedAt: at }).where(eq(chatSessions.id, sessionId)).run();
      });
    },

    messages(principal: Principal, sessionId: string, w: PageWindow) {
      const session = requireSession(principal, sessionId);
      const rows = db.select().from(chatMessages).where(eq(chatMessages.sessionId, session.id)).orderBy(asc(chatMessages.id)).limit(w.pageSize).offset(w.offset).all();
      const total = db.select({ n: count() }).from(chatMessages).where(eq(chatMessages.sessionId, session.id)).get()!.n;
      return { session, rows, total };
    },

    sessions(principal: Principal, productId: string, w: PageWindow) {
      const workspace = workspaces.requireVisible(principal, productId);
      const messageCount = sql<number>`(SELECT count(*) FROM chat_messages AS m WHERE m.session_id = "chat_sessions"."id")`;
      const rows = db
        .select({ session: chatSessions, messageCount })
        .from(chatSessions)
        .where(eq(chatSessions.productId, workspace.id))
        .orderBy(desc(chatSessions.updatedAt), desc(chatSessions.id))
        .limit(w.pageSize)
        .offset(w.offset)
        .all();
      const total = db.select({ n: count() }).from(chatSessions).where(eq(chatSessions.productId, workspace.id)).get()!.n;
      return { rows, total };
    },

    /** Deletes a session with its messages. */
    remove(principal: Principal, sessionId: string) {
      const session = requireSession(principal, sessionId);
      db.delete(chatSessions).where(eq(chatSessions.id, session.id)).run();
    },
  };
}

export type ChatService = ReturnType<typeof createChatService>;
