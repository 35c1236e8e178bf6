// The Assistant's conversations, kept outside its screen: the server stops writing an answer when
// its caller leaves, so a stream owned by the screen was cut off by a visit to another screen. Here
// it streams on, and the screen shows on its return the conversation it left, whole or still growing.
import { signal } from "@preact/signals";
import { get, qs } from "./api";
import { openSse } from "./sse";
import { forget } from "./ui/kit";

export interface Source {
  index: number;
  file_id: string;
  file_name: string;
  page?: number;
  score: number;
  excerpt: string;
}

export interface Message {
  role: "user" | "assistant";
  content: string;
  status?: string;
  sources?: Source[];
  mode?: string;
}

/** One conversation, on screen or not: its messages, and while an answer streams, the stage and
 * the way to stop it. */
export interface Thread {
  messages: Message[];
  stage?: string | null;
  abort?: AbortController | null;
  error?: unknown;
}

/** A workspace's conversations by key (a session id, or "draft-n" until the server names the new
 * session), the one on screen, the question being typed, and how many answers have ended (the
 * sessions list is read again after each). */
export interface Desk {
  threads: Record<string, Thread>;
  shown: string;
  question: string;
  answered: number;
}

let draftSeq = 0;
const draft = () => `draft-${++draftSeq}`;
export const isDraft = (key: string) => key.startsWith("draft-");

const desks = signal<Record<string, Desk>>({});
/** Counts sign-outs: a stream stopped by one writes nothing into the next user's desks. */
let generation = 0;
/** Conversations with an answer streaming, by workspace and key: known at once, before a render. */
const busy = new Set<string>();

/** The workspace's desk; reading it in a component re-renders that component when it changes. */
export function deskOf(ws: string): Desk {
  return desks.value[ws] ?? { threads: {}, shown: "draft-0", question: "", answered: 0 };
}

function update(ws: string, fn: (d: Desk) => Desk) {
  const all = desks.peek();
  desks.value = { ...all, [ws]: fn(all[ws] ?? deskOf(ws)) };
}

function setThread(ws: string, key: string, fn: (t: Thread) => Thread) {
  update(ws, (d) => ({ ...d, threads: { ...d.threads, [key]: fn(d.threads[key] ?? { messages: [] }) } }));
}

export const setQuestion = (ws: string, question: string) => update(ws, (d) => ({ ...d, question }));
export const setError = (ws: string, key: string, error: unknown) => setThread(ws, key, (t) => ({ ...t, error }));
export const newChat = (ws: string) => update(ws, (d) => ({ ...d, shown: draft() }));

/** Shows a session; one not streaming here is read from the server (its copy is the whole story). */
export async function openChat(ws: string, id: string) {
  update(ws, (d) => ({ ...d, shown: id }));
  if (deskOf(ws).threads[id]?.abort) return;
  setError(ws, id, null);
  try {
    const h = await get<{ messages: (Message & { metadata?: { mode?: string } })[] }>(`/api/assistant/chat/history${qs({ session_id: id, product_id: ws, pageSize: 100 })}`);
    setThread(ws, id, (t) => (t.abort ? t : { ...t, messages: h.messages.map((m) => ({ ...m, mode: m.metadata?.mode })) }));
  } catch (e) {
    setError(ws, id, e);
  }
}

/** A session deleted on the server: its stream stops, and a new chat replaces it on screen. */
export function dropChat(ws: string, id: string) {
  deskOf(ws).threads[id]?.abort?.abort();
  update(ws, (d) => {
    const { [id]: _gone, ...threads } = d.threads;
    return { ...d, threads, shown: d.shown === id ? draft() : d.shown };
  });
}

/** Asks `text` in the conversation on screen and streams the answer into that conversation,
 * whichever one is on screen meanwhile, and whether the Assistant screen is open or not. */
export async function ask(ws: string, text: string) {
  let key = deskOf(ws).shown;
  // One answer at a time per conversation: Enter while one streams does nothing.
  if (!text || busy.has(`${ws}/${key}`)) return;
  busy.add(`${ws}/${key}`);
  const ctrl = new AbortController();
  const epoch = generation;
  const change = (fn: (d: Desk) => Desk) => epoch === generation && update(ws, fn);
  const thread = (fn: (t: Thread) => Thread) => change((d) => ({ ...d, threads: { ...d.threads, [key]: fn(d.threads[key] ?? { messages: [] }) } }));
  // The answer being written is the last message of this stream's own conversation.
  const patch = (p: Partial<Message> | ((m: Message) => Partial<Message>)) =>
    thread((t) => {
      const last = t.messages[t.messages.length - 1];
      if (!last || last.role !== "assistant") return t;
      return { ...t, messages: [...t.messages.slice(0, -1), { ...last, ...(typeof p === "function" ? p(last) : p) }] };
    });
  change((d) => ({ ...d, question: "" }));
  thread((t) => ({ messages: [...t.messages, { role: "user", content: text }, { role: "assistant", content: "" }], stage: "connecting", abort: ctrl, error: null }));
  try {
    const body: Record<string, unknown> = { message: text, product_id: ws };
    if (!isDraft(key)) body.session_id = key;
    for await (const ev of await openSse("/api/assistant/chat", { body, signal: ctrl.signal })) {
      const data = JSON.parse(ev.data || "{}");
      if (ev.event === "session" && data.session_id && data.session_id !== key) {
        // The draft becomes the session the server created: moved, and kept on screen if it is.
        const from = key;
        key = data.session_id;
        busy.delete(`${ws}/${from}`);
        busy.add(`${ws}/${key}`);
        change((d) => {
          const { [from]: moved, ...rest } = d.threads;
          return { ...d, threads: { ...rest, [key]: moved ?? { messages: [] } }, shown: d.shown === from ? key : d.shown };
        });
      } else if (ev.event === "thinking") thread((t) => ({ ...t, stage: data.stage }));
      else if (ev.event === "token") patch((m) => ({ content: m.content + data.delta }));
      else if (ev.event === "ai_response") patch({ content: data.answer, sources: data.sources, mode: data.metadata?.mode, status: "complete" });
      else if (ev.event === "error") thread((t) => ({ ...t, error: new Error(data.message) }));
      else if (ev.event === "done") break;
    }
  } catch (err) {
    if ((err as Error).name === "AbortError") patch({ status: "interrupted" });
    else thread((t) => ({ ...t, error: err }));
  } finally {
    busy.delete(`${ws}/${key}`);
    thread((t) => ({ ...t, abort: null, stage: null }));
    // The session's place, title and time in the list changed (or a new one joined it): the list
    // is read again, at once if the screen is open, else when it opens.
    forget(`sessions:${ws}`);
    change((d) => ({ ...d, answered: d.answered + 1 }));
  }
}

/** Sign out: every answer stops and every conversation is forgotten. */
export function stopChats() {
  for (const d of Object.values(desks.peek())) for (const t of Object.values(d.threads)) t.abort?.abort();
  busy.clear();
  generation++;
  desks.value = {};
}
