// Server-sent events from an async generator: numbered events written as they come, a comment
// line as heartbeat so idle timeouts never cut a slow answer, a failure turned into `error` then
// `done` instead of a dropped connection, and the generator's signal aborted when the caller leaves.

export interface SseEvent {
  event: string;
  data: unknown;
  /** A stored event's own number (replayable with Last-Event-ID); else events are numbered 1, 2, ... */
  id?: number;
}

/** Below Bun's idle timeout and the 10 s most proxies and clients tolerate. */
export const HEARTBEAT_MS = 5_000;

const encoder = new TextEncoder();

export const formatEvent = (id: number, e: SseEvent) => encoder.encode(`id: ${id}\nevent: ${e.event}\ndata: ${JSON.stringify(e.data)}\n\n`);

export const SSE_HEADERS = {
  "content-type": "text/event-stream; charset=utf-8",
  "cache-control": "no-cache, no-transform",
  connection: "keep-alive",
  // nginx and similar proxies would otherwise hold events back in their buffers.
  "x-accel-buffering": "no",
};

/** How to end each stream still open: they never end by themselves (event logs, long answers). */
const openStreams = new Set<() => void>();

/**
 * Ends every open stream (Hearth is stopping): its generator's signal aborts and the response ends,
 * so a graceful stop does not wait on them; clients reconnect (Last-Event-ID) to the next start.
 */
export function endAllStreams(): void {
  for (const end of [...openStreams]) end();
}

/**
 * A streaming response of the events `produce` yields. `produce` gets a signal that aborts when the
 * client disconnects; `onError` turns an exception into the final events (e.g. `error`, `done`).
 */
export function sseResponse(
  request: Request,
  produce: (signal: AbortSignal) => AsyncGenerator<SseEvent>,
  onError: (e: unknown) => SseEvent[],
  options: {
    heartbeatMs?: number;
    headers?: Record<string, string>;
    /** Whether the caller's credentials still hold; asked before each write, the stream ends once they do not. */
    live?: () => boolean;
  } = {},
): Response {
  const gone = new AbortController();
  const leave = () => gone.abort(new Error("the client disconnected"));
  request.signal.addEventListener("abort", leave, { once: true });
  let heartbeat: ReturnType<typeof setInterval> | undefined;
  let id = 0;

  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      const end = (why: string) => {
        gone.abort(new Error(why));
        clearInterval(heartbeat);
        try {
          controller.close();
        } catch {
          // already closed
        }
      };
      const stopping = () => end("Hearth is stopping");
      const write = (chunk: Uint8Array) => {
        if (gone.signal.aborted) return;
        // A revoked token or an ended session gets nothing more (an execution may wait for days):
        // the stream closes, without an event whose number a reconnect would skip past.
        if (options.live && !options.live()) return end("the caller's credentials no longer hold");
        try {
          controller.enqueue(chunk);
        } catch {
          leave();
        }
      };
      heartbeat = setInterval(() => write(encoder.encode(": keep-alive\n\n")), options.heartbeatMs ?? HEARTBEAT_MS);
      openStreams.add(stopping);
      // Runs detached from start(): events are flushed as they are enqueued.
      void (async () => {
        try {
          for await (const e of produce(gone.signal)) write(formatEvent((id = e.id ?? id + 1), e));
        } catch (e) {
          if (!gone.signal.aborted) for (const ev of onError(e)) write(formatEvent((id = ev.id ?? id + 1), ev));
        } finally {
          openStreams.delete(stopping);
          clearInterval(heartbeat);
          request.signal.removeEventListener("abort", leave);
          if (!gone.signal.aborted) {
            try {
              controller.close();
            } catch {
              // already closed by the client
            }
          }
        }
      })();
    },
    cancel() {
      clearInterval(heartbeat);
      leave();
    },
  });
  return new Response(body, { status: 200, headers: { ...SSE_HEADERS, ...options.headers } });
}
