// Assistant chat: sessions, the answer streamed token by token (fetch + SSE parser), a stop
// button, and citations [n] that open the cited passage with its file and page.
import { useEffect, useRef, useState } from "preact/hooks";
import { del, get, qs } from "../api";
import { openSse } from "../sse";
import { workspace } from "../state";
import { Action, ErrorNote, Field, Note, useLoad, when } from "../ui/kit";

interface Source {
  index: number;
  file_id: string;
  file_name: string;
  page?: number;
  score: number;
  excerpt: string;
}

interface Message {
  role: "user" | "assistant";
  content: string;
  status?: string;
  sources?: Source[];
  mode?: string;
}

interface Session {
  session_id: string;
  title: string;
  message_count: number;
  updated_at: string;
}

/** The answer with each [n] turned into a button that opens source n. */
function Cited(props: { text: string; sources?: Source[]; onCite: (s: Source) => void }) {
  const parts = props.text.split(/(\[\d+\])/g);
  return (
    <p class="answer">
      {parts.map((part) => {
        const n = part.match(/^\[(\d+)\]$/)?.[1];
        const source = n ? props.sources?.find((s) => s.index === Number(n)) : undefined;
        return source ? (
          <button type="button" class="cite-link" aria-label={`Source ${n}: ${source.file_name}${source.page ? `, page ${source.page}` : ""}`} onClick={() => props.onCite(source)}>
            [{n}]
          </button>
        ) : (
          part
        );
      })}
    </p>
  );
}

export function Chat() {
  const ws = workspace.value!;
  const sessions = useLoad(() => get<Session[]>(`/api/assistant/chat/sessions${qs({ product_id: ws.id, pageSize: 50 })}`), [ws.id], `sessions:${ws.id}`);
  const [sessionId, setSessionId] = useState<string | null>(null);
  const [messages, setMessages] = useState<Message[]>([]);
  const [question, setQuestion] = useState("");
  const [stage, setStage] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [cited, setCited] = useState<Source | null>(null);
  const abort = useRef<AbortController | null>(null);
  const end = useRef<HTMLDivElement>(null);

  useEffect(() => end.current?.scrollIntoView?.({ block: "end" }), [messages]);
  useEffect(() => () => abort.current?.abort(), []);

  const open = async (id: string) => {
    setError(null);
    setCited(null);
    setSessionId(id);
    try {
      const h = await get<{ messages: (Message & { metadata?: { mode?: string } })[] }>(`/api/assistant/chat/history${qs({ session_id: id, product_id: ws.id, pageSize: 100 })}`);
      setMessages(h.messages.map((m) => ({ ...m, mode: m.metadata?.mode })));
    } catch (e) {
      setError(e);
    }
  };

  const ask = async (e: Event) => {
    e.preventDefault();
    const text = question.trim();
    if (!text) return;
    setQuestion("");
    setError(null);
    setMessages((m) => [...m, { role: "user", content: text }, { role: "assistant", content: "" }]);
    const patch = (p: Partial<Message> | ((m: Message) => Partial<Message>)) =>
      setMessages((m) => {
        const last = m[m.length - 1]!;
        return [...m.slice(0, -1), { ...last, ...(typeof p === "function" ? p(last) : p) }];
      });
    const ctrl = new AbortController();
    abort.current = ctrl;
    setStage("connecting");
    try {
      const body: Record<string, unknown> = { message: text, product_id: ws.id };
      if (sessionId) body.session_id = sessionId;
      for await (const ev of await openSse("/api/assistant/chat", { body, signal: ctrl.signal })) {
        const data = JSON.parse(ev.data || "{}");
        if (ev.event === "session") setSessionId(data.session_id);
        else if (ev.event === "thinking") setStage(data.stage);
        else if (ev.event === "token") patch((m) => ({ content: m.content + data.delta }));
        else if (ev.event === "ai_response") patch({ content: data.answer, sources: data.sources, mode: data.metadata?.mode, status: "complete" });
        else if (ev.event === "error") setError(new Error(data.message));
        else if (ev.event === "done") break;
      }
    } catch (err) {
      if ((err as Error).name === "AbortError") patch({ status: "interrupted" });
      else setError(err);
    } finally {
      abort.current = null;
      setStage(null);
      sessions.reload();
    }
  };

  return (
    <div class="chat">
      <aside class="sessions card" aria-label="Chat sessions">
        <button
          type="button"
          class="primary"
          onClick={() => {
            setSessionId(null);
            setMessages([]);
            setCited(null);
          }}
        >
          New chat
        </button>
        <ul>
          {sessions.data?.map((s) => (
            <li key={s.session_id}>
              <button type="button" class={`link ${s.session_id === sessionId ? "current" : ""}`} onClick={() => open(s.session_id)}>
                {s.title || s.session_id}
              </button>
              <small class="muted">{when(s.updated_at)}</small>
              <Action
                class="icon"
                aria-label={`Delete chat ${s.title}`}
                confirm="Delete this chat?"
                onError={setError}
                run={async () => {
                  await del(`/api/assistant/chat/sessions/${encodeURIComponent(s.session_id)}${qs({ product_id: ws.id })}`);
                  if (s.session_id === sessionId) (setSessionId(null), setMessages([]));
                  sessions.reload();
                }}
              >
                ×
              </Action>
            </li>
          ))}
        </ul>
      </aside>
      <section class="conversation card" aria-label="Conversation">
        <div class="messages" aria-live="polite">
          {!messages.length && <Note>Ask a question about the documents of {ws.name}. Answers cite their passages as [1], [2]; click one to read it.</Note>}
          {messages.map((m, i) => (
            <div class={`msg msg-${m.role}`} key={i}>
              <span class="sr-only">{m.role === "user" ? "You:" : "Assistant:"}</span>
              {m.role === "assistant" ? <Cited text={m.content} sources={m.sources} onCite={setCited} /> : <p>{m.content}</p>}
              {m.mode === "retrieval-only" && <small class="muted">No language model available: these are the best passages.</small>}
              {m.status === "interrupted" && <small class="muted">Stopped before the end.</small>}
            </div>
          ))}
          {stage && <p class="muted stage" role="status">{stage === "retrieving" ? "Searching the documents…" : stage === "generating" ? "Writing…" : "Connecting…"}</p>}
          <div ref={end} />
        </div>
        <ErrorNote error={error} />
        <form class="ask" onSubmit={ask}>
          <Field label="Your question">
            {(id) => (
              <textarea
                id={id}
                rows={2}
                maxLength={8000}
                value={question}
                onInput={(e) => setQuestion(e.currentTarget.value)}
                onKeyDown={(e) => {
                  if (e.key !== "Enter" || e.shiftKey) return;
                  e.preventDefault();
                  (e.currentTarget.form as HTMLFormElement).requestSubmit();
                }}
              />
            )}
          </Field>
          {abort.current ? (
            <button type="button" class="danger" onClick={() => abort.current?.abort()}>
              Stop
            </button>
          ) : (
            <button type="submit" class="primary">
              Ask
            </button>
          )}
        </form>
      </section>
      {cited && (
        <aside class="source card" aria-label="Cited passage">
          <header class="card-head">
            <h2>
              [{cited.index}] {cited.file_name}
            </h2>
            <button type="button" onClick={() => setCited(null)} aria-label="Close the passage">
              Close
            </button>
          </header>
          <p class="cite">{cited.page ? `Page ${cited.page} · ` : ""}score {cited.score.toFixed(3)}</p>
          <blockquote>{cited.excerpt}</blockquote>
        </aside>
      )}
    </div>
  );
}
