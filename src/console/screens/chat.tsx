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

/** One conversation on screen or streaming in the background: its messages, and while an answer
 * streams, the stage and the way to stop it. */
interface Thread {
  messages: Message[];
  stage?: string | null;
  abort?: AbortController | null;
  error?: unknown;
}

let draftSeq = 0;

export function Chat() {
  const ws = workspace.value!;
  const sessions = useLoad(() => get<Session[]>(`/api/assistant/chat/sessions${qs({ product_id: ws.id, pageSize: 50 })}`), [ws.id], `sessions:${ws.id}`);
  // Conversations by key: a session id, or "draft-n" until the server names the new session. A
  // stream writes only into its own conversation, whichever one is on screen meanwhile.
  const [threads, setThreads] = useState<Record<string, Thread>>({});
  const [shown, setShown] = useState(() => `draft-${++draftSeq}`);
  const [question, setQuestion] = useState("");
  const [cited, setCited] = useState<Source | null>(null);
  const streams = useRef(new Set<AbortController>());
  // Conversations with an answer streaming, known at once (state shows it only after a render).
  const busy = useRef(new Set<string>());
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
  const thread: Thread = threads[shown] ?? { messages: [] };
  const messages = thread.messages;
  const sessionId = shown.startsWith("draft-") ? null : shown;
  const setThread = (key: string, fn: (t: Thread) => Thread) => setThreads((all) => ({ ...all, [key]: fn(all[key] ?? { messages: [] }) }));

  useEffect(() => end.current?.scrollIntoView?.({ block: "end" }), [messages]);
  useEffect(() => () => streams.current.forEach((c) => c.abort()), []);

  const open = async (id: string) => {
    setCited(null);
    setShown(id);
    // A conversation still streaming here is shown as it is; the server's copy lacks the answer.
    if (threads[id]?.abort) return;
    setThread(id, (t) => ({ ...t, error: null }));
    try {
      const h = await get<{ messages: (Message & { metadata?: { mode?: string } })[] }>(`/api/assistant/chat/history${qs({ session_id: id, product_id: ws.id, pageSize: 100 })}`);
      setThread(id, (t) => (t.abort ? t : { ...t, messages: h.messages.map((m) => ({ ...m, mode: m.metadata?.mode })) }));
    } catch (e) {
      setThread(id, (t) => ({ ...t, error: e }));
    }
  };

  const ask = async (e: Event) => {
    e.preventDefault();
    const text = question.trim();
    // One answer at a time per conversation: Enter while one streams does nothing.
    if (!text || busy.current.has(shown)) return;
    let key = shown;
    busy.current.add(key);
    const ctrl = new AbortController();
    streams.current.add(ctrl);
    setQuestion("");
    setThread(key, (t) => ({ messages: [...t.messages, { role: "user", content: text }, { role: "assistant", content: "" }], stage: "connecting", abort: ctrl, error: null }));
    // The answer being written is the last message of this stream's own conversation.
    const patch = (p: Partial<Message> | ((m: Message) => Partial<Message>)) =>
      setThread(key, (t) => {
        const last = t.messages[t.messages.length - 1];
        if (!last || last.role !== "assistant") return t;
        return { ...t, messages: [...t.messages.slice(0, -1), { ...last, ...(typeof p === "function" ? p(last) : p) }] };
      });
    let created = false;
    try {
      const body: Record<string, unknown> = { message: text, product_id: ws.id };
      if (!key.startsWith("draft-")) body.session_id = key;
      for await (const ev of await openSse("/api/assistant/chat", { body, signal: ctrl.signal })) {
        const data = JSON.parse(ev.data || "{}");
        if (ev.event === "session" && data.session_id && data.session_id !== key) {
          // The draft becomes the session the server created: move it, and keep it on screen.
          const from = key;
          key = data.session_id;
          busy.current.delete(from);
          busy.current.add(key);
          created = true;
          setThreads((all) => {
            const { [from]: moved, ...rest } = all;
            return { ...rest, [key]: moved ?? { messages: [] } };
          });
          setShown((now) => (now === from ? key : now));
        } else if (ev.event === "thinking") setThread(key, (t) => ({ ...t, stage: data.stage }));
        else if (ev.event === "token") patch((m) => ({ content: m.content + data.delta }));
        else if (ev.event === "ai_response") patch({ content: data.answer, sources: data.sources, mode: data.metadata?.mode, status: "complete" });
        else if (ev.event === "error") setThread(key, (t) => ({ ...t, error: new Error(data.message) }));
        else if (ev.event === "done") break;
      }
    } catch (err) {
      if ((err as Error).name === "AbortError") patch({ status: "interrupted" });
      else setThread(key, (t) => ({ ...t, error: err }));
    } finally {
      streams.current.delete(ctrl);
      busy.current.delete(key);
      setThread(key, (t) => ({ ...t, abort: null, stage: null }));
      // A new conversation joins the list; an existing one is listed already.
      if (created) sessions.reload();
    }
  };

  const stage = thread.stage;
  const error = thread.error;
  const setError = (err: unknown) => setThread(shown, (t) => ({ ...t, error: err }));

  return (
    <div class="chat">
      <aside class="sessions card" aria-label="Chat sessions">
        <button
          type="button"
          class="primary"
          onClick={() => {
            setShown(`draft-${++draftSeq}`);
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
                  threads[s.session_id]?.abort?.abort();
                  if (s.session_id === shown) setShown(`draft-${++draftSeq}`);
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
