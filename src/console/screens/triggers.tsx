// Triggers of the workspace's active workflows (manual, schedule, webhook): next run, webhook
// address, and a Run button for manual ones. On a server without the trigger routes it says so.
import { ApiError, get, post, qs } from "../api";
import { workspace } from "../state";
import { Action, Badge, ErrorNote, Note, Section, useLoad, when } from "../ui/kit";
import { missingRoute } from "./integrations";

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

export function Triggers(props: { onStarted?: (executionId: string) => void }) {
  const ws = workspace.value!;
  const list = useLoad(() => get<Trigger[]>(`/api/agent-base/triggers${qs({ product_id: ws.id })}`), [ws.id], `triggers:${ws.id}`);
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
              <Badge value={t.type} /> <code>{t.node_id}</code>
              {t.next_run_at && <span class="muted">next run {when(t.next_run_at)}</span>}
              {t.webhook_url && <code>{t.webhook_url}</code>}
              {t.type === "manual" && (
                <Action run={async () => props.onStarted?.((await post<{ id: string }>(`/api/agent-base/triggers/${t.id}/execute`, {})).id)}>Run</Action>
              )}
            </li>
          ))}
        </ul>
      ) : (
        <p class="muted">No triggers.</p>
      )}
    </Section>
  );
}
