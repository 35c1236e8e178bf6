// One execution, live: its nodes and events streamed over SSE (resuming with Last-Event-ID after
// a lost connection), pause / continue / stop, and approve or reject a waiting approval.
import { useEffect, useRef, useState } from "preact/hooks";
import { get, post } from "../api";
import { openSse } from "../sse";
import { Action, Badge, ErrorNote, Field, json } from "../ui/kit";

interface NodeRun {
  node_id: string;
  type: string;
  status: string;
  attempt: number;
  output?: unknown;
  error?: string;
  kind?: string;
}
interface Status {
  id: string;
  status: string;
  output?: unknown;
  error?: string;
  nodes?: NodeRun[];
}
interface Event {
  id?: string;
  event: string;
  data: any;
}

const ENDED = ["succeeded", "failed", "stopped"];

function describe(e: Event): string {
  const d = e.data ?? {};
  switch (e.event) {
    case "status":
      return `status → ${d.status}`;
    case "node_started":
      return `${d.node_id} (${d.type}) started${d.attempt > 1 ? `, attempt ${d.attempt}` : ""}`;
    case "node_finished":
      return `${d.node_id} ${d.status}${d.duration_ms !== undefined ? ` in ${d.duration_ms} ms` : ""}${d.error ? `: ${d.error}` : ""}`;
    case "node_retry":
      return `${d.node_id} retries in ${d.delay_ms} ms: ${d.error}`;
    case "node_waiting":
      return `${d.node_id} waits${d.message ? `: ${d.message}` : ""}`;
    case "done":
      return `done: ${d.status}${d.error ? ` (${d.error})` : ""}`;
    default:
      return `${e.event} ${json(d)}`;
  }
}

/** The execution as its events tell it: the event log replays from the start, so it alone gives
 * the status, every node and the output, and no status request is needed per event. */
function applyEvent(st: Status, e: Event): Status {
  const d = e.data ?? {};
  const nodes = [...(st.nodes ?? [])];
  const at = nodes.findIndex((n) => n.node_id === d.node_id);
  const node = (patch: Partial<NodeRun>) => {
    const next = { ...(at >= 0 ? nodes[at]! : { node_id: d.node_id, type: "", status: "", attempt: 1 }), ...patch };
    if (at >= 0) nodes[at] = next;
    else nodes.push(next);
    return { ...st, nodes };
  };
  switch (e.event) {
    case "status":
      return { ...st, status: d.status };
    case "node_started":
      return node({ type: d.type, status: "running", attempt: d.attempt ?? 1, error: undefined });
    case "node_finished":
      return node({ status: d.status, output: d.output, error: d.error });
    case "node_waiting":
      return node({ status: "waiting", output: d.message !== undefined ? { message: d.message } : d.until ? { until: d.until } : undefined, kind: d.kind });
    case "node_retry":
      return node({ status: "retrying", error: d.error });
    case "done":
      return { ...st, status: d.status, output: d.output, error: d.error };
    default:
      return st;
  }
}

export function Execution(props: { id: string; order?: string[]; onEnd?: () => void; onChange?: () => void }) {
  const [status, setStatus] = useState<Status | null>(null);
  const [events, setEvents] = useState<Event[]>([]);
  const [tokens, setTokens] = useState("");
  const [error, setError] = useState<unknown>(null);
  const [comment, setComment] = useState("");
  const latest = useRef(0);
  // After an action, the status is read once (its events follow on the stream anyway). Answers
  // can overtake each other: only the newest request may set the status.
  const refresh = () => {
    const n = ++latest.current;
    return get<Status>(`/api/workflow/${props.id}/status`).then((s) => n === latest.current && setStatus(s), setError);
  };

  useEffect(() => {
    const ctrl = new AbortController();
    let last: string | undefined;
    const follow = async () => {
      for (let attempt = 0; !ctrl.signal.aborted; attempt++) {
        try {
          for await (const ev of await openSse(`/api/workflow/${props.id}/events`, { signal: ctrl.signal, lastEventId: last })) {
            last = ev.id ?? last;
            attempt = 0;
            setError(null);
            const data = ev.data ? JSON.parse(ev.data) : {};
            if (ev.event === "token") {
              setTokens((t) => t + (data.delta ?? ""));
              continue;
            }
            const event = { id: ev.id, event: ev.event, data };
            setEvents((list) => [...list, event]);
            setStatus((st) => applyEvent(st ?? { id: props.id, status: "queued", nodes: [] }, event));
            if (ev.event === "done") {
              props.onEnd?.();
              return;
            }
          }
          return;
        } catch (err) {
          if (ctrl.signal.aborted) return;
          setError(err);
          // The stream broke: wait, then resume from the last event seen.
          await new Promise((r) => setTimeout(r, Math.min(30_000, 1000 * 2 ** attempt)));
        }
      }
    };
    void follow();
    return () => ctrl.abort();
  }, [props.id]);

  const s = status?.status;
  const waitingApproval = status?.nodes?.find((n) => n.status === "waiting" && (n.type === "approval" || n.kind === "approval"));
  // In graph order where the graph is known, then in the order they ran.
  const rank = (id: string) => {
    const i = props.order?.indexOf(id) ?? -1;
    return i < 0 ? Number.MAX_SAFE_INTEGER : i;
  };
  const nodes = status?.nodes ? [...status.nodes].sort((a, b) => rank(a.node_id) - rank(b.node_id)) : undefined;
  const act = (path: string, body?: unknown) => async () => {
    await post(`/api/workflow/${props.id}/${path}`, body);
    setError(null);
    await refresh();
  };
  return (
    <div class="execution" aria-label="Execution">
      <div class="row">
        <strong>Execution</strong> <code>{props.id.slice(0, 8)}</code> {s && <Badge value={s} />}
      </div>
      {waitingApproval && (
        <div class="approval" role="alert">
          <strong>Waiting for approval</strong> at <code>{waitingApproval.node_id}</code>
          <Field label="Comment (optional)">{(id) => <input id={id} value={comment} onInput={(e) => setComment(e.currentTarget.value)} />}</Field>
          <div class="actions">
            <Action class="primary" onError={setError} run={act("continue", { node_id: waitingApproval.node_id, input: { approved: true, comment } })}>
              Approve
            </Action>
            <Action class="danger" onError={setError} confirm="Reject? The execution is stopped." run={act("stop")}>
              Reject
            </Action>
          </div>
        </div>
      )}
      {s && !ENDED.includes(s) && (
        <div class="actions">
          {s === "paused" ? (
            <Action onError={setError} run={act("continue", {})}>
              Continue
            </Action>
          ) : (
            <Action onError={setError} run={act("pause")} disabled={s === "queued" || s === "waiting" || Boolean(waitingApproval)} title={s === "waiting" || waitingApproval ? "An execution that waits cannot be paused" : undefined}>
              Pause
            </Action>
          )}
          <Action class="danger" onError={setError} confirm="Stop this execution?" run={act("stop")}>
            Stop
          </Action>
        </div>
      )}
      <ErrorNote error={error} />
      {nodes && nodes.length > 0 && (
        <table class="table small">
          <thead>
            <tr>
              <th>Node</th>
              <th>Type</th>
              <th>Status</th>
              <th>Output or error</th>
            </tr>
          </thead>
          <tbody>
            {nodes.map((n) => (
              <tr key={n.node_id}>
                <td>{n.node_id}</td>
                <td>
                  <code>{n.type}</code>
                </td>
                <td>
                  <Badge value={n.status} />
                </td>
                <td>{n.error ? <span class="error-text">{n.error}</span> : n.output !== undefined ? <code>{json(n.output).slice(0, 300)}</code> : ""}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {tokens && <p class="answer">{tokens}</p>}
      {status?.output !== undefined && ENDED.includes(s!) && (
        <div>
          <strong>Output</strong>
          <pre>{json(status.output)}</pre>
        </div>
      )}
      <h4>Events</h4>
      <ol class="events" aria-live="polite" aria-label="Events">
        {events.map((e) => (
          <li key={e.id}>{describe(e)}</li>
        ))}
      </ol>
    </div>
  );
}
