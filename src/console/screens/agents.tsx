// Agents: the catalog (install with its settings), the installed agents, invoking one, and its
// executions with every tool call and the tokens used.
import { useEffect, useRef, useState } from "preact/hooks";
import { ApiError, del, get, post } from "../api";
import { workspace } from "../state";
import { Action, Badge, ErrorNote, Field, Note, Section, Spinner, forget, json, useLoad } from "../ui/kit";
import { SchemaForm, invalidJson, type Schema } from "../ui/schema-form";
import { AgentRuns } from "./agent-runs";
import { KnowledgeBasePicker } from "./knowledge-picker";

/** An agent is installed or uninstalled with its workflow and trigger: the Workflows screen's lists are stale then. */
const forgetAgentWorkflows = () => {
  forget("workflows:");
  forget("triggers:");
};

interface Template {
  id: string;
  name: string;
  description: string;
  settings_schema: Schema;
  /** JSON Schema of an invoke's input (newer servers). */
  input_schema?: Schema;
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
      <SchemaForm
        schema={props.template.settings_schema}
        value={settings}
        onChange={setSettings}
        custom={{ knowledge_base_ids: (v, set, s) => <KnowledgeBasePicker value={v as string[] | undefined} onChange={set} hint={s.description} /> }}
      />
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

/** The field a 422 names ("input.audio_url is required ..."), if the form has it. */
const fieldOf = (err: unknown, names: string[]) => {
  if (!(err instanceof ApiError) || err.status !== 422) return undefined;
  const name = /\binput\.([\w-]+)/.exec(err.message)?.[1];
  return name && names.includes(name) ? name : undefined;
};

/** With the agent's input schema (its template's, from the catalog): a field per property, and
 * when the schema lets the input hold other fields too (ticket triage takes any object: the
 * ticket), a JSON object for them, open at once if no field is required. Without a schema (a
 * custom agent): a query, and any other input as JSON. */
function Invoke(props: { agent: Agent; schema?: Schema; onDone: () => void }) {
  const names = Object.keys(props.schema?.properties ?? {});
  const schema = names.length ? props.schema : undefined;
  const takesMore = !schema || schema.additionalProperties !== false;
  const [input, setInput] = useState<Record<string, unknown>>({});
  const [query, setQuery] = useState("");
  const [raw, setRaw] = useState("");
  const [fieldErrors, setFieldErrors] = useState<Record<string, string>>({});
  const [result, setResult] = useState<any>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const form = useRef<HTMLFormElement>(null);
  // A field the server refused gets the focus, so its message is read out with it.
  useEffect(() => void form.current?.querySelector<HTMLElement>("[aria-invalid=true]")?.focus(), [fieldErrors]);
  /** The input to send, or a sentence saying why there is none. */
  const body = (): Record<string, unknown> | string => {
    let extra: unknown = {};
    if (takesMore && raw.trim()) {
      try {
        extra = JSON.parse(raw);
      } catch (err) {
        return `The JSON input is not valid JSON: ${(err as Error).message}`;
      }
      if (extra === null || typeof extra !== "object" || Array.isArray(extra)) return "The JSON input must be an object { … }";
    }
    if (schema) return invalidJson(input) ?? { ...(extra as Record<string, unknown>), ...input };
    return { ...(extra as Record<string, unknown>), ...(query.trim() ? { query } : {}) };
  };
  const jsonInput = takesMore && (
    <details class="advanced" open={Boolean(raw) || Boolean(schema && !schema.required?.length)}>
      <summary>{schema ? "More input: JSON" : "Advanced: JSON input"}</summary>
      <Field label="Input (JSON object)" hint={`${schema?.description ? `${schema.description}. ` : ""}Sent as the invoke's input; ${schema ? "the fields above are" : "a query above is"} added to it.`}>
        {(id, describedBy) => (
          <textarea id={id} class="code" rows={4} autocomplete="off" placeholder='{ "…": "…" }' aria-describedby={describedBy} value={raw} onInput={(e) => setRaw(e.currentTarget.value)} />
        )}
      </Field>
    </details>
  );
  return (
    <form
      ref={form}
      aria-label={`Invoke ${props.agent.name}`}
      onSubmit={async (e) => {
        e.preventDefault();
        setError(null);
        setFieldErrors({});
        const sent = body();
        if (typeof sent === "string") return setError(new Error(sent));
        setBusy(true);
        setResult(null);
        try {
          setResult(await post(`/api/agent-base/${props.agent.id}/invoke`, { input: sent, wait: true }));
        } catch (err) {
          const field = fieldOf(err, schema ? names : ["query"]);
          if (field) setFieldErrors({ [field]: (err as Error).message });
          else setError(err);
        } finally {
          setBusy(false);
          props.onDone();
        }
      }}
    >
      {schema ? (
        <>
          <SchemaForm schema={schema} value={input} onChange={setInput} errors={fieldErrors} />
          {jsonInput}
        </>
      ) : (
        <>
          <Field label={`Ask ${props.agent.name}`} required={!raw.trim()} error={fieldErrors.query}>
            {(id, describedBy) => (
              <textarea id={id} rows={2} required={!raw.trim()} aria-describedby={describedBy} aria-invalid={fieldErrors.query ? true : undefined} value={query} onInput={(e) => setQuery(e.currentTarget.value)} />
            )}
          </Field>
          {jsonInput}
        </>
      )}
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
  const schema = catalog.data?.find((t) => t.id === agent?.template)?.input_schema;
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
                    forgetAgentWorkflows();
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
          <Invoke agent={agent} schema={schema} onDone={() => setRunsChanged((n) => n + 1)} key={`${agent.id}:${Boolean(schema)}`} />
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
              forgetAgentWorkflows();
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
