// Schemas of the assistant chat endpoints.
import { t } from "elysia";
import { Timestamp, Uuid, Int } from "../../platform/http/schemas";
import { PaginationQuery } from "../../platform/http/pagination";

/** The longest message accepted (characters); longer ones are refused with 422 before any streaming. */
export const MAX_MESSAGE_CHARS = 8000;

export const ChatBody = t.Object(
  {
    // Optional in the schema so that a missing message gets the same 400 as an empty one.
    message: t.Optional(t.String({ maxLength: MAX_MESSAGE_CHARS, description: `The question, at most ${MAX_MESSAGE_CHARS} characters` })),
    session_id: t.Optional(t.String({ maxLength: 128, description: "Continue this session, or start one under this id (letters, digits, . _ : -)" })),
    product_id: t.Optional(Uuid),
    knowledge_base_ids: t.Optional(t.Array(Uuid, { minItems: 1, maxItems: 50, description: "Search only these (default: every knowledge base of the workspace)" })),
    top_k: t.Optional(t.Integer({ minimum: 1, maximum: 20, default: 5, description: "Passages given to the model" })),
    model: t.Optional(t.String({ minLength: 1, maxLength: 200, description: "Ollama model for this answer (signed-in users and SYSTEM tokens)" })),
  },
  { additionalProperties: false },
);

export const Source = t.Object({
  index: Int({ description: "The number the answer cites: [index]" }),
  file_id: Uuid,
  file_name: t.String(),
  chunk_id: Int(),
  page: t.Optional(Int()),
  score: t.Number(),
  excerpt: t.String(),
});

export const ChatMessage = t.Object({
  id: Int(),
  role: t.UnionEnum(["user", "assistant"]),
  content: t.String(),
  status: t.UnionEnum(["complete", "interrupted"], { description: "interrupted: the model failed or the caller left mid-answer" }),
  sources: t.Optional(t.Array(Source)),
  metadata: t.Optional(t.Record(t.String(), t.Unknown())),
  created_at: Timestamp,
});

export const ChatHistory = t.Object({ session_id: t.String(), product_id: Uuid, title: t.String(), messages: t.Array(ChatMessage) });

export const ChatSession = t.Object({
  session_id: t.String(),
  product_id: Uuid,
  title: t.String(),
  message_count: Int(),
  created_at: Timestamp,
  updated_at: Timestamp,
});

const SessionWorkspace = t.Optional(t.String({ format: "uuid", description: "The session's workspace; needed only when a user has the same session_id in several" }));
export const HistoryQuery = t.Object({ session_id: t.String({ minLength: 1, maxLength: 128 }), product_id: SessionWorkspace, ...PaginationQuery.properties }, { additionalProperties: false });
export const SessionQuery = t.Object({ product_id: SessionWorkspace }, { additionalProperties: false });
export const SessionsQuery = t.Object({ product_id: t.Optional(Uuid), ...PaginationQuery.properties }, { additionalProperties: false });
export const SessionParams = t.Object({ id: t.String({ minLength: 1, maxLength: 128 }) });
