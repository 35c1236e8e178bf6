// One assistant answer: check the request and store the question (before any byte is streamed),
// then retrieve passages (a follow-up rewritten into a standalone query first), stream the model's
// answer and store it with its sources. Without a usable model the answer is the best passages.
import type { Principal } from "../../platform/auth/principal";
import { forbidden, invalid, notFound } from "../../platform/errors";
import type { Logger } from "../../platform/log";
import type { KnowledgeSearch } from "../knowledge/search";
import type { KnowledgeService } from "../knowledge/service";
import type { Llm } from "../../platform/llm/llm";
import { answerPrompt, cleanRewrite, excerpt, fallbackQuery, HISTORY_TURNS, retrievalOnlyAnswer, rewritePrompt, type Passage, type Turn } from "./prompt";
import type { ChatService } from "./service";
import type { AnswerMetadata, StoredSource } from "./table";

export interface ChatInput {
  message: string;
  sessionId?: string;
  productId?: string;
  knowledgeBaseIds?: string[];
  topK: number;
  model?: string;
}

export interface SourceView {
  index: number;
  file_id: string;
  file_name: string;
  chunk_id: number;
  page?: number;
  score: number;
  excerpt: string;
}

export type ChatEvent =
  | { event: "session"; data: { session_id: string } }
  | { event: "thinking"; data: { stage: "retrieving" | "generating" } }
  | { event: "token"; data: { delta: string } }
  | { event: "ai_response"; data: { answer: string; sources: SourceView[]; metadata: MetadataView } }
  | { event: "error"; data: { error: string; message: string } }
  | { event: "done"; data: Record<string, never> };

interface MetadataView {
  model: string;
  mode: "llm" | "retrieval-only";
  latency_ms: number;
  ttft_ms?: number;
  prompt_tokens?: number;
  completion_tokens?: number;
}

/** A checked request whose question is stored: what the stream needs. */
export interface PreparedChat {
  principal: Principal;
  sessionId: string;
  sessionKey: number;
  productId: string;
  knowledgeBaseIds?: string[];
  message: string;
  history: Turn[];
  topK: number;
  model: string;
  startedAt: number;
}

/** Tokens the model may write for one answer (at most a quarter of its window). */
const MAX_ANSWER_TOKENS = 1024;
const REWRITE_TOKENS = 96;
const REWRITE_TIMEOUT_MS = 15_000;

const toStored = (p: Passage): StoredSource => ({ index: p.index, fileId: p.fileId, fileName: p.fileName, chunkId: p.chunkId, page: p.page, score: p.score, excerpt: excerpt(p.text) });

export const sourceView = (s: StoredSource): SourceView => ({
  index: s.index,
  file_id: s.fileId,
  file_name: s.fileName,
  chunk_id: s.chunkId,
  ...(s.page === null ? {} : { page: s.page }),
  score: s.score,
  excerpt: s.excerpt,
});

export const metadataView = (m: AnswerMetadata): MetadataView => ({
  model: m.model,
  mode: m.mode,
  latency_ms: m.latencyMs,
  ...(m.ttftMs === undefined ? {} : { ttft_ms: m.ttftMs }),
  ...(m.promptTokens === undefined ? {} : { prompt_tokens: m.promptTokens }),
  ...(m.completionTokens === undefined ? {} : { completion_tokens: m.completionTokens }),
});

interface Deps {
  chats: ChatService;
  knowledge: KnowledgeService;
  search: KnowledgeSearch;
  llm: Llm;
  log: Logger;
}

export function createAssistant({ chats, knowledge, search, llm, log }: Deps) {
  /** The workspace the message is about: the token's, or named by product_id, the session or the knowledge bases. */
  const workspaceOf = (principal: Principal, input: ChatInput): string => {
    if (principal.kind === "token") {
      if (input.productId && input.productId.toLowerCase() !== principal.productId) throw notFound("Workspace");
      return principal.productId;
    }
    if (input.productId) return input.productId.toLowerCase();
    if (input.sessionId) {
      try {
        return chats.findSession(principal, input.sessionId).productId;
      } catch {
        // A new client-chosen id: the workspace must come from elsewhere.
      }
    }
    if (input.knowledgeBaseIds?.length) return knowledge.requireBase(principal, input.knowledgeBaseIds[0]!).productId;
    throw invalid("Name the workspace: product_id, an existing session_id or knowledge_base_ids");
  };

  /** Passages for the query: hybrid search, or keyword search while the embedder is not ready. */
  const retrieve = async (p: PreparedChat, query: string): Promise<Passage[]> => {
    const hits = await search.searchBest(p.principal, { query, productId: p.productId, knowledgeBaseIds: p.knowledgeBaseIds, topK: p.topK });
    return hits.map((h, i) => ({ index: i + 1, chunkId: h.chunkId, fileId: h.fileId, fileName: h.fileName, page: h.page, headings: h.headings, score: h.score, text: h.text }));
  };

  /** A follow-up as a standalone query: rewritten by the model when there is one, else joined to the last question. */
  const standaloneQuery = async (p: PreparedChat, contextLength: number | null, signal: AbortSignal): Promise<string> => {
    if (p.history.length === 0) return p.message;
    if (contextLength === null) return fallbackQuery(p.history, p.message);
    try {
      const text = await llm.complete({ model: p.model, messages: rewritePrompt(p.history, p.message), contextLength, maxAnswerTokens: REWRITE_TOKENS, timeoutMs: REWRITE_TIMEOUT_MS, signal });
      return cleanRewrite(text) ?? fallbackQuery(p.history, p.message);
    } catch (e) {
      if (signal.aborted) throw e;
      log.warn("assistant.rewrite_failed", { reason: llm.describeFailure(e, p.model) });
      return fallbackQuery(p.history, p.message);
    }
  };

  return {
    /** Checks the request and stores the question; throws the 4xx the caller gets as JSON. */
    prepare(principal: Principal, input: ChatInput): PreparedChat {
      const message = input.message.trim();
      if (!message) throw invalid("message must not be empty");
      if (input.model !== undefined && principal.kind === "token" && principal.tokenRole !== "SYSTEM") {
        throw forbidden("Only SYSTEM tokens and signed-in users may choose the model");
      }
      const productId = workspaceOf(principal, input);
      for (const id of input.knowledgeBaseIds ?? []) {
        if (knowledge.requireBase(principal, id).productId !== productId) throw notFound("Knowledge base");
      }
      const { session, history } = chats.ask(principal, productId, input.sessionId, message, HISTORY_TURNS);
      return { principal, sessionId: session.id, sessionKey: session.key, productId, knowledgeBaseIds: input.knowledgeBaseIds, message, history, topK: input.topK, model: input.model ?? llm.defaultModel, startedAt: performance.now() };
    },

    /** The answer's events, in order; ends quietly when `signal` aborts (the caller left). */
    async *answer(p: PreparedChat, signal: AbortSignal): AsyncGenerator<ChatEvent> {
      yield { event: "session", data: { session_id: p.sessionId } };
      yield { event: "thinking", data: { stage: "retrieving" } };
      const status = await llm.status(p.model);
      const contextLength = status.state === "ok" ? status.contextLength : null;
      const query = await standaloneQuery(p, contextLength, signal);
      const found = await retrieve(p, query);
      yield { event: "thinking", data: { stage: "generating" } };

      const finish = (answer: string, sources: Passage[], meta: Omit<AnswerMetadata, "latencyMs" | "model">): ChatEvent => {
        const stored = sources.map(toStored);
        const metadata: AnswerMetadata = { model: p.model, latencyMs: Math.round(performance.now() - p.startedAt), ...meta };
        chats.addAnswer(p.sessionKey, { content: answer, status: "complete", sources: stored, metadata });
        return { event: "ai_response", data: { answer, sources: stored.map(sourceView), metadata: metadataView(metadata) } };
      };
      const retrievalOnly = function* (reason: string): Generator<ChatEvent> {
        const answer = retrievalOnlyAnswer(reason, found);
        yield { event: "token", data: { delta: answer } };
        yield finish(answer, found, { mode: "retrieval-only" });
      };

      if (status.state !== "ok") {
        yield* retrievalOnly(status.reason);
        yield { event: "done", data: {} };
        return;
      }

      const { messages, passages } = answerPrompt({ question: p.message, passages: found, history: p.history, contextLength: status.contextLength, maxAnswerTokens: Math.min(MAX_ANSWER_TOKENS, Math.floor(status.contextLength / 4)) });
      let answer = "";
      let ttftMs: number | undefined;
      let counts: { promptTokens?: number; completionTokens?: number } = {};
      try {
        for await (const piece of llm.stream({ model: p.model, messages, contextLength: status.contextLength, maxAnswerTokens: Math.min(MAX_ANSWER_TOKENS, Math.floor(status.contextLength / 4)), signal })) {
          if ("delta" in piece) {
            ttftMs ??= Math.round(performance.now() - p.startedAt);
            answer += piece.delta;
            yield { event: "token", data: { delta: piece.delta } };
          } else if ("done" in piece) {
            counts = { promptTokens: piece.promptTokens, completionTokens: piece.completionTokens };
          }
        }
      } catch (e) {
        const reason = llm.describeFailure(e, p.model);
        if (answer === "" && !signal.aborted) {
          // Nothing written yet: the model went away between the status check and now.
          llm.forget(p.model);
          log.warn("assistant.llm_unavailable", { reason });
          yield* retrievalOnly(reason);
          yield { event: "done", data: {} };
          return;
        }
        const metadata: AnswerMetadata = { model: p.model, mode: "llm", latencyMs: Math.round(performance.now() - p.startedAt), ttftMs };
        chats.addAnswer(p.sessionKey, { content: answer, status: "interrupted", sources: passages.map(toStored), metadata });
        if (signal.aborted) return;
        log.warn("assistant.llm_failed", { reason });
        yield { event: "error", data: { error: "ModelFailed", message: `The answer was cut off: ${reason}` } };
        yield { event: "done", data: {} };
        return;
      }
      yield finish(answer, passages, { mode: "llm", ttftMs, ...counts });
      yield { event: "done", data: {} };
    },
  };
}

export type Assistant = ReturnType<typeof createAssistant>;
