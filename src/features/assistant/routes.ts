// HTTP routes of spec §4.8: the chat answer as server-sent events, its history, and sessions.
import { Elysia, t } from "elysia";
import type { AuthPlugin } from "../../platform/auth/plugin";
import { AppError, invalid } from "../../platform/errors";
import { PaginationSchema, pageWindow } from "../../platform/http/pagination";
import { errors, eventStream, ok, okList, otherResponses } from "../../platform/http/schemas";
import { sseResponse } from "../../platform/http/sse";
import type { Logger } from "../../platform/log";
import { metadataView, sourceView, type Assistant } from "./chat";
import { ChatBody, ChatHistory, ChatSession, HistoryQuery, SessionParams, SessionQuery, SessionsQuery } from "./model";
import type { ChatMessageRow, ChatService } from "./service";

const messageView = (m: ChatMessageRow) => ({
  id: m.id,
  role: m.role,
  content: m.content,
  status: m.status,
  ...(m.sources ? { sources: m.sources.map(sourceView) } : {}),
  ...(m.metadata ? { metadata: metadataView(m.metadata) } : {}),
  created_at: m.createdAt.toISOString(),
});

export function assistantRoutes({ auth, assistant, chats, log, heartbeatMs }: { auth: AuthPlugin; assistant: Assistant; chats: ChatService; log: Logger; heartbeatMs?: number }) {
  return new Elysia()
    .use(auth)
    .guard({ detail: { tags: ["Assistant"] } })
    .post(
      "/api/assistant/chat",
      ({ principal, body, request, credentialsLive }) => {
        // Everything that can be refused is refused here, as JSON, before the stream starts.
        const prepared = assistant.prepare(principal, {
          message: body.message ?? "",
          sessionId: body.session_id,
          productId: body.product_id,
          knowledgeBaseIds: body.knowledge_base_ids,
          topK: body.top_k ?? 5,
          model: body.model,
        });
        return sseResponse(
          request,
          (signal) => assistant.answer(prepared, signal),
          (e) => {
            const known = e instanceof AppError;
            if (!known) log.error("assistant.failed", { error: (e as Error)?.stack ?? String(e) });
            return [
              { event: "error", data: { error: known ? e.code : "InternalError", message: known ? e.message : "The answer failed; the question is kept in the history" } },
              { event: "done", data: {} },
            ];
          },
          { heartbeatMs, live: credentialsLive(request, principal) },
        );
      },
      {
        auth: "any:strict",
        body: ChatBody,
        detail: {
          summary: "Ask the assistant; the answer streams as server-sent events",
          description:
            "Events, in order: `session` {session_id}, `thinking` {stage: retrieving}, `thinking` {stage: generating}, `token` {delta} as the model writes, " +
            "`ai_response` {answer, sources, metadata}, `done` {}. A failure is `error` {error, message} then `done`. Comment lines are heartbeats.",
          responses: otherResponses(eventStream("The answer's events, as the model writes it"), 400, 401, 403, 404, 413, 422, 429),
        },
      },
    )
    .get(
      "/api/assistant/chat/history",
      ({ principal, query }) => {
        const w = pageWindow(query);
        const { session, rows, total } = chats.messages(principal, query.session_id, query.product_id, w);
        return {
          success: true as const,
          data: { session_id: session.id, product_id: session.productId, title: session.title, messages: rows.map(messageView) },
          pagination: { page: w.page, pageSize: w.pageSize, total },
        };
      },
      { auth: "any", query: HistoryQuery, response: { 200: t.Object({ success: t.Literal(true), data: ChatHistory, pagination: PaginationSchema }), ...errors(400, 401, 404, 422, 429) }, detail: { summary: "Messages of a chat session, oldest first, with their sources" } },
    )
    .get(
      "/api/assistant/chat/sessions",
      ({ principal, query }) => {
        const productId = query.product_id ?? (principal.kind === "token" ? principal.productId : undefined);
        if (!productId) throw invalid("Name the workspace: product_id");
        const w = pageWindow(query);
        const { rows, total } = chats.sessions(principal, productId, w);
        return {
          success: true as const,
          data: rows.map(({ session: s, messageCount }) => ({ session_id: s.id, product_id: s.productId, title: s.title, message_count: messageCount, created_at: s.createdAt.toISOString(), updated_at: s.updatedAt.toISOString() })),
          pagination: { page: w.page, pageSize: w.pageSize, total },
        };
      },
      { auth: "any", query: SessionsQuery, response: { 200: okList(ChatSession), ...errors(400, 401, 404, 422, 429) }, detail: { summary: "Chat sessions of a workspace, most recent first" } },
    )
    .delete(
      "/api/assistant/chat/sessions/:id",
      ({ principal, params, query }) => {
        chats.remove(principal, params.id, query.product_id);
        return { success: true as const, message: "Session deleted", data: { session_id: params.id } };
      },
      { auth: "any", params: SessionParams, query: SessionQuery, response: { 200: ok(t.Object({ session_id: t.String() })), ...errors(400, 401, 404, 422, 429) }, detail: { summary: "Delete a chat session with its messages (its creator, or an owner, admin or SYSTEM token)" } },
    );
}
