// Executions of one agent, newest first, each with its tool calls (arguments, result, time).
import { useEffect } from "preact/hooks";
import { get } from "../api";
import { openSse } from "../sse";
import { Badge, ErrorNote, Spinner, json, useLoad, when } from "../ui/kit";

interface ToolCall {
  tool: string;
  arguments: unknown;
  result?: string;
  error?: string;
  duration_ms: number;
  step: number;
}

interface Run {
  id: string;
  status: string;
  trigger: { type: string };
  input: unknown;
  output?: any;
  error?: string;
  tool_calls: ToolCall[];
  usage: { prompt_tokens: number; completion_tokens: number };
  started_at: string | null;
  duration_ms: number | null;
}

const ENDED = ["succeeded", "failed", "stopped"];

/**
 * Resolves when execution `id` has ended: its live events (SSE, one request however long it
 * takes) are read until `done`. A broken stream is retried with a growing pause, so an idle
 * screen never spends the rate limit (10 a minute by default) on asking the same question.
 */
export async function untilEnded(id: string, signal: AbortSignal) {
  for (let attempt = 0; !signal.aborted; attempt++) {
    try {
      for await (const ev of await openSse(`/api/workflow/${id}/events`, { signal })) if (ev.event === "done") return;
      return;
    } catch (err) {
      if (signal.aborted) return;
      await new Promise((r) => setTimeout(r, Math.min(60_000, 2000 * 2 ** attempt)));
    }
  }
}

/** `changed` goes up when the caller knows the list changed (an invoke ended). */
export function AgentRuns(props: { agentId: string; changed?: number }) {
  const runs = useLoad(() => get<Run[]>(`/api/agent-base/${props.agentId}/executions?pageSize=20`), [props.agentId, props.changed ?? 0]);
  // No polling: while an execution is in progress its event stream says when it ends, then the
  // list is read once more; otherwise the list changes only when asked (Refresh) or invoked.
  const live = runs.data?.find((r) => !ENDED.includes(r.status));
  useEffect(() => {
    if (!live) return;
    const ctrl = new AbortController();
    void untilEnded(live.id, ctrl.signal).then(() => !ctrl.signal.aborted && runs.reload());
    return () => ctrl.abort();
  }, [live?.id]);
  if (runs.loading && !runs.data) return <Spinner />;
  if (runs.error) return <ErrorNote error={runs.error} />;
  return (
    <div class="runs">
      <div class="row">
        <h3>Executions</h3>
        <button type="button" onClick={runs.reload} disabled={runs.loading}>
          Refresh
        </button>
      </div>
      {!runs.data!.length && <p class="muted">None yet.</p>}
      {runs.data!.map((r) => (
        <details key={r.id} class="run">
          <summary>
            <Badge value={r.status} /> {when(r.started_at)} · {r.trigger.type} · {r.tool_calls.length} tool call{r.tool_calls.length === 1 ? "" : "s"}
            {r.duration_ms !== null ? ` · ${(r.duration_ms / 1000).toFixed(1)} s` : ""} · {r.usage.prompt_tokens + r.usage.completion_tokens} tokens
          </summary>
          <p>
            <strong>Input:</strong> <code>{json(r.input)}</code>
          </p>
          {r.tool_calls.length > 0 && (
            <ol class="tool-calls" aria-label="Tool calls">
              {r.tool_calls.map((c) => (
                <li>
                  <strong>{c.tool}</strong> <span class="muted">step {c.step}, {c.duration_ms} ms</span>
                  <pre>{json(c.arguments)}</pre>
                  {c.error ? <p class="error-text">{c.error}</p> : <pre class="result-text">{(c.result ?? "").slice(0, 2000)}</pre>}
                </li>
              ))}
            </ol>
          )}
          {r.output !== undefined && (
            <>
              <strong>Output</strong>
              {r.output?.text ? <p>{r.output.text}</p> : <pre>{json(r.output)}</pre>}
            </>
          )}
          {r.error && <p class="error-text">{r.error}</p>}
        </details>
      ))}
    </div>
  );
}
