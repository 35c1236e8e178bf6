// Reads a server-sent event stream with a real SSE parser (eventsource-parser), as a client would.
import { createParser } from "eventsource-parser";

export interface ReceivedEvent {
  id?: string;
  event?: string;
  data: any;
}

export interface SseReader {
  events: ReceivedEvent[];
  comments: string[];
  /** Resolves once an event named `name` has arrived (or the stream ended). */
  until(name: string): Promise<ReceivedEvent | undefined>;
  /** Resolves when the stream ends. */
  ended: Promise<void>;
}

export function readSse(res: Response): SseReader {
  const events: ReceivedEvent[] = [];
  const comments: string[] = [];
  const waiters: { name: string; resolve: (e: ReceivedEvent | undefined) => void }[] = [];
  const parser = createParser({
    onEvent(e) {
      const ev = { id: e.id, event: e.event, data: JSON.parse(e.data) };
      events.push(ev);
      for (const w of waiters.filter((w) => w.name === e.event)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(ev);
      }
    },
    onComment: (c) => void comments.push(c),
  });
  const ended = (async () => {
    const decoder = new TextDecoder();
    try {
      for await (const chunk of res.body!) parser.feed(decoder.decode(chunk as Uint8Array, { stream: true }));
    } catch {
      // the reader was cancelled or the connection dropped; what arrived is kept
    }
    for (const w of waiters.splice(0)) w.resolve(undefined);
  })();
  return {
    events,
    comments,
    ended,
    until: (name) => {
      const seen = events.find((e) => e.event === name);
      return seen ? Promise.resolve(seen) : new Promise((resolve) => waiters.push({ name, resolve }));
    },
  };
}

/** Every event of a finished stream. */
export async function allEvents(res: Response): Promise<ReceivedEvent[]> {
  const r = readSse(res);
  await r.ended;
  return r.events;
}
