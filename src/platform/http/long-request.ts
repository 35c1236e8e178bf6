// Requests whose answer may take longer than Bun's idle timeout: a long transcription, an agent
// asked to wait for its answer, an integration's check, a backup. Bun counts a handler's silence
// as idleness and closes the connection after the timeout (the client still waiting gets a reset
// and the work is aborted), so while such a request is worked on its timeout is re-armed; once it
// is answered, the connection idles out as usual. (SSE streams send heartbeats instead.)

/** What a server offers for this (Bun's, and Elysia's view of it). */
type TimeoutControl = { timeout(request: Request, seconds: number): void };

/** Bun's idle timeout of every connection (app.ts listenOptions). */
export const IDLE_TIMEOUT_S = 30;

/**
 * Runs `work` with the request's idle timeout re-armed until it settles. uWebSockets counts
 * timeouts in ticks of 4 s, so the timeout is re-armed a third of the way into it. No-op without a
 * server (app.handle in tests).
 */
export async function whileWorking<T>(server: TimeoutControl | null | undefined, request: Request, work: () => Promise<T>, idleTimeoutS = IDLE_TIMEOUT_S): Promise<T> {
  if (!server) return work();
  const rearm = setInterval(() => {
    // The client may have left; its request's timeout is then nobody's concern.
    if (!request.signal.aborted) server.timeout(request, idleTimeoutS);
  }, (idleTimeoutS * 1000) / 3);
  try {
    return await work();
  } finally {
    clearInterval(rearm);
  }
}
