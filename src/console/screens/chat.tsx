// Assistant chat: sessions, the answer streamed token by token (fetch + SSE parser), a stop
// button, and citations [n] that open the cited passage with its file and page.
import { useEffect, useRef, useState } from "preact/hooks";
import { del, get, qs } from "../api";
import { ask, deskOf, dropChat, isDraft, newChat, openChat, setError, setQuestion, type Source } from "../chat-store";
import { workspace } from "../state";
import { Action, ErrorNote, Field, Note, useLoad, when } from "../ui/kit";

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
  // The conversations live in the chat store, so an answer streams on while another screen is open.
  const desk = deskOf(ws.id);
  const shown = desk.shown;
  const [cited, setCited] = useState<Source | null>(null);
  const end = useRef<HTMLDivElement>(null);
  // The cited passage takes the focus (and is scrolled to: on a phone it sits below the
  // conversation); closing it gives the focus back to the [n] that opened it.
  const passage = useRef<HTMLElement>(null);
  const opener = useRef<HTMLElement | null>(null);
  const cite = (s: Source) => {
    opener.current = document.activeElement as HTMLElement | null;
    setCited(s);
  };
  useEffect(() => {
    const el = passage.current;
    if (!cited || !el) return;
    el.focus({ preventScroll: true });
    const r = el.getBoundingClientRect();
    if (r.top < 0 || r.bottom > window.innerHeight) el.scrollIntoView({ block: "start" });
  }, [cited]);
  const thread = desk.threads[shown] ?? { messages: [] };
  const messages = thread.messages;
  const sessionId = isDraft(shown) ? null : shown;
  useEffect(() => end.current?.scrollIntoView?.({ block: "end" }), [messages]);
  // Each answer that ends (here or while another screen was open) moves its session in the list.
  const answered = useRef(desk.answered);
  useEffect(() => {
    if (desk.answered === answered.current) return;
    answered.current = desk.answered;
    sessions.reload();
  }, [desk.answered]);

  const submit = (e: Event) => {
    e.preventDefault();
    void ask(ws.id, desk.question.trim());
  };
  const { stage, error } = thread;

  return (
    <div class="chat">
      <aside class="sessions card" aria-label="Chat sessions">
        <button
          type="button"
          class="primary"
          onClick={() => {
            newChat(ws.id);
            setCited(null);
          }}
        >
          New chat
        </button>
        <ul>
          {sessions.data?.map((s) => (
            <li key={s.session_id}>
              <button type="button" class={`link ${s.session_id === sessionId ? "current" : ""}`} onClick={() => (setCited(null), void openChat(ws.id, s.session_id))}>
                {s.title || s.session_id}
              </button>
              <small class="muted">{when(s.updated_at)}</small>
              <Action
                class="icon"
                aria-label={`Delete chat ${s.title}`}
                confirm="Delete this chat?"
                onError={(err) => setError(ws.id, shown, err)}
                run={async () => {
                  await del(`/api/assistant/chat/sessions/${encodeURIComponent(s.session_id)}${qs({ product_id: ws.id })}`);
                  dropChat(ws.id, s.session_id);
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
              {m.role === "assistant" ? <Cited text={m.content} sources={m.sources} onCite={cite} /> : <p>{m.content}</p>}
              {m.mode === "retrieval-only" && <small class="muted">No language model available: these are the best passages.</small>}
              {m.status === "interrupted" && <small class="muted">Stopped before the end.</small>}
            </div>
          ))}
          {stage && <p class="muted stage" role="status">{stage === "retrieving" ? "Searching the documents…" : stage === "generating" ? "Writing…" : "Connecting…"}</p>}
          <div ref={end} />
        </div>
        <ErrorNote error={error} />
        <form class="ask" onSubmit={submit}>
          <Field label="Your question">
            {(id) => (
              <textarea
                id={id}
                rows={2}
                maxLength={8000}
                value={desk.question}
                onInput={(e) => setQuestion(ws.id, e.currentTarget.value)}
                onKeyDown={(e) => {
                  if (e.key !== "Enter" || e.shiftKey) return;
                  e.preventDefault();
                  if (thread.abort) return;
                  (e.currentTarget.form as HTMLFormElement).requestSubmit();
                }}
              />
            )}
          </Field>
          {thread.abort ? (
            <button type="button" class="danger" onClick={() => thread.abort?.abort()}>
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
        <aside class="source card" aria-label="Cited passage" tabIndex={-1} ref={passage}>
          <header class="card-head">
            <h2>
              [{cited.index}] {cited.file_name}
            </h2>
            <button
              type="button"
              onClick={() => {
                setCited(null);
                if (opener.current?.isConnected) opener.current.focus();
              }}
              aria-label="Close the passage"
            >
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
