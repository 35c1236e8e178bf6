// Triggers of the workspace's active workflows (manual, schedule, webhook): next run, webhook
// address, and a Run button for manual ones. On a server without the trigger routes it says so.
import { useEffect, useRef, useState } from "preact/hooks";
import { ApiError, get, post, qs } from "../api";
import { workspace } from "../state";
import { Action, Badge, ErrorNote, Note, Section, useLoad, when } from "../ui/kit";
import { missingRoute } from "./integrations";
import { Execution } from "./workflow-run";

interface Trigger {
  id: string;
  type: string;
  workflow_id: string;
  node_id: string;
  next_run_at?: string | null;
  webhook_url?: string | null;
}

/** A server without the trigger routes answers 404, or 400 where /api/agent-base/{id} takes the path. */
const noTriggerRoutes = (e: unknown) => missingRoute(e) || (e instanceof ApiError && e.status === 400 && /'id'/.test(e.message));

/** `changed` goes up when the caller changed the workflows (a new one brings its triggers). */
export function Triggers(props: { changed?: number; names?: Record<string, string>; onEnd?: () => void }) {
  const ws = workspace.value!;
  const list = useLoad(() => get<Trigger[]>(`/api/agent-base/triggers${qs({ product_id: ws.id })}`), [ws.id], `triggers:${ws.id}`);
  const [started, setStarted] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const seen = useRef(props.changed ?? 0);
  useEffect(() => {
    if ((props.changed ?? 0) === seen.current) return;
    seen.current = props.changed ?? 0;
    list.reload();
  }, [props.changed]);
  return (
    <Section title="Triggers">
      {noTriggerRoutes(list.error) ? (
        <Note kind="warn">Triggers are not available on this server.</Note>
      ) : list.error ? (
        <ErrorNote error={list.error} />
      ) : list.data?.length ? (
        <ul class="list">
          {list.data.map((t) => (
            <li key={t.id}>
              <Badge value={t.type} /> {props.names?.[t.workflow_id] && <strong>{props.names[t.workflow_id]}</strong>} <code>{t.node_id}</code>
              {t.next_run_at && <span class="muted">next run {when(t.next_run_at)}</span>}
              {t.webhook_url && <code>{t.webhook_url}</code>}
              {t.type === "manual" && (
                <Action
                  onError={setError}
                  aria-label={`Run ${props.names?.[t.workflow_id] ?? "workflow"}: ${t.node_id}`}
                  run={async () => {
                    setError(null);
                    setStarted((await post<{ id: string }>(`/api/agent-base/triggers/${t.id}/execute`, {})).id);
                  }}
                >
                  Run
                </Action>
              )}
            </li>
          ))}
        </ul>
      ) : (
        <p class="muted">No triggers.</p>
      )}
      <ErrorNote error={error} />
      {started && <Execution key={started} id={started} onEnd={props.onEnd} />}
    </Section>
  );
}
