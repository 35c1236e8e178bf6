// Agents: the catalog (install with its settings), the installed agents, invoking one, and its
// executions with every tool call and the tokens used.
import { useState } from "preact/hooks";
import { del, get, post } from "../api";
import { workspace } from "../state";
import { Action, Badge, ErrorNote, Field, Note, Section, Spinner, json, useLoad } from "../ui/kit";
import { SchemaForm, invalidJson, type Schema } from "../ui/schema-form";
import { AgentRuns } from "./agent-runs";

interface Template {
  id: string;
  name: string;
  description: string;
  settings_schema: Schema;
  triggers: string[];
  tools: string[];
}

export interface Agent {
  id: string;
  name: string;
  description: string;
  template: string | null;
  workflow_id: string | null;
  tools: string[];
  status: string;
}

function Install(props: { template: Template; onInstalled: (a: Agent) => void; onCancel: () => void }) {
  const [name, setName] = useState(props.template.name);
  const [settings, setSettings] = useState<Record<string, unknown>>({});
  const [error, setError] = useState<unknown>(null);
  return (
    <form
      class="grid-form install"
      aria-label={`Install ${props.template.name}`}
      onSubmit={async (e) => {
        e.preventDefault();
        setError(null);
        const bad = invalidJson(settings);
        if (bad) return setError(new Error(bad));
        try {
          props.onInstalled(await post<Agent>("/api/agent-base/install", { product_id: workspace.value!.id, template: props.template.id, name, settings }));
        } catch (err) {
          setError(err);
        }
      }}
    >
      <Field label="Agent name">{(id) => <input id={id} required maxLength={200} value={name} onInput={(e) => setName(e.currentTarget.value)} />}</Field>
      <SchemaForm schema={props.template.settings_schema} value={settings} onChange={setSettings} />
      <ErrorNote error={error} />
      <div class="actions">
        <button class="primary" type="submit">
          Install
        </button>
        <button type="button" onClick={props.onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}

function Invoke(props: { agent: Agent; onDone: () => void }) {
  const [query, setQuery] = useState("");
  const [result, setResult] = useState<any>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  return (
    <form
      onSubmit={async (e) => {
        e.preventDefault();
        setBusy(true);
        setError(null);
        setResult(null);
        try {
          setResult(await post(`/api/agent-base/${props.agent.id}/invoke`, { input: { query }, wait: true }));
        } catch (err) {
          setError(err);
        } finally {
          setBusy(false);
          props.onDone();
        }
      }}
    >
      <Field label={`Ask ${props.agent.name}`}>{(id) => <textarea id={id} rows={2} required value={query} onInput={(e) => setQuery(e.currentTarget.value)} />}</Field>
      <button class="primary" type="submit" disabled={busy}>
        {busy ? "Running…" : "Invoke"}
      </button>
      {busy && <progress aria-label="Agent running" />}
      <ErrorNote error={error} />
      {result && (
        <div class="result" aria-label="Agent result">
          <Badge value={result.status} />
          {result.output?.text ? <p class="answer">{result.output.text}</p> : result.output !== undefined ? <pre>{json(result.output)}</pre> : null}
          {result.error && <Note kind="error">{result.error}</Note>}
        </div>
      )}
    </form>
  );
}

export function Agents() {
  const ws = workspace.value!;
  const catalog = useLoad(() => get<Template[]>("/api/agent-base/catalog"), [], "catalog");
  const agents = useLoad(() => get<Agent[]>(`/api/agent-base?product_id=${ws.id}&pageSize=100`), [ws.id], `agents:${ws.id}`);
  const [installing, setInstalling] = useState<Template | null>(null);
  const [chosen, setChosen] = useState<string | null>(null);
  const [runsChanged, setRunsChanged] = useState(0);
  const [error, setError] = useState<unknown>(null);
  const agent = agents.data?.find((a) => a.id === chosen);
  return (
    <>
      <Section title="Installed agents">
        <ErrorNote error={error || agents.error} />
        {agents.loading && !agents.data ? (
          <Spinner />
        ) : agents.data?.length ? (
          <ul class="list">
            {agents.data.map((a) => (
              <li key={a.id} class={a.id === chosen ? "current" : ""}>
                <button type="button" class="link" aria-pressed={a.id === chosen} onClick={() => setChosen(a.id)}>
                  {a.name}
                </button>
                <Badge value={a.status} />
                <span class="muted">{a.template ?? "custom"}</span>
                <Action
                  class="danger"
                  confirm={`Uninstall “${a.name}”? Its triggers stop and running executions are stopped.`}
                  onError={setError}
                  run={async () => {
                    await del(`/api/agent-base?id=${a.id}`);
                    if (chosen === a.id) setChosen(null);
                    agents.reload();
                  }}
                >
                  Uninstall
                </Action>
              </li>
            ))}
          </ul>
        ) : (
          !agents.error && <Note>No agents yet: install one from the catalog.</Note>
        )}
      </Section>
      {agent && (
        <Section title={agent.name}>
          <p class="muted">{agent.description}</p>
          <p class="muted">Tools: {agent.tools.join(", ") || "none"}</p>
          <Invoke agent={agent} onDone={() => setRunsChanged((n) => n + 1)} key={agent.id} />
          <AgentRuns agentId={agent.id} changed={runsChanged} />
        </Section>
      )}
      <Section title="Catalog">
        {catalog.error ? <ErrorNote error={catalog.error} /> : null}
        {installing ? (
          <Install
            template={installing}
            onCancel={() => setInstalling(null)}
            onInstalled={(a) => {
              setInstalling(null);
              agents.reload();
              setChosen(a.id);
            }}
          />
        ) : (
          <div class="cards">
            {catalog.data?.map((t) => (
              <article class="tile" key={t.id} aria-label={t.name}>
                <h3>{t.name}</h3>
                <p>{t.description}</p>
                <p class="muted">
                  Triggers: {t.triggers.join(", ")}
                  {t.tools.length ? ` · tools: ${t.tools.join(", ")}` : ""}
                </p>
                <button type="button" onClick={() => setInstalling(t)}>
                  Install {t.name}
                </button>
              </article>
            ))}
          </div>
        )}
      </Section>
    </>
  );
}
