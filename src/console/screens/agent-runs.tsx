// Executions of one agent, newest first, each with its tool calls (arguments, result, time).
import { useEffect, useState } from "preact/hooks";
import { get } from "../api";
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

export function AgentRuns(props: { agentId: string }) {
  const runs = useLoad(() => get<Run[]>(`/api/agent-base/${props.agentId}/executions?pageSize=20`), [props.agentId]);
  const [tick, setTick] = useState(0);
  // Refresh while something is still running.
  const live = runs.data?.some((r) => !["succeeded", "failed", "stopped"].includes(r.status));
  useEffect(() => {
    const timer = setTimeout(() => (runs.reload(), setTick(tick + 1)), live ? 1000 : 5000);
    return () => clearTimeout(timer);
  }, [runs.data]);
  if (runs.loading && !runs.data) return <Spinner />;
  if (runs.error) return <ErrorNote error={runs.error} />;
  return (
    <div class="runs">
      <h3>Executions</h3>
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
