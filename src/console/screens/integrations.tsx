// Integrations: connector types, the workspace's integrations with their scope and status, create
// one (credentials are write-only: sent, never shown), and activate a template by giving it
// credentials. On a server without the integration routes it says so.
import { useState } from "preact/hooks";
import { ApiError, del, get, post, put, qs } from "../api";
import { workspace } from "../state";
import { Action, Badge, ErrorNote, Field, Note, Section, Spinner, useLoad } from "../ui/kit";
import { SchemaForm, invalidJson, type Schema } from "../ui/schema-form";

interface IntegrationType {
  type: string;
  id?: string;
  name?: string;
  description?: string;
  config_schema?: Schema;
  credentials_schema?: Schema;
  tools?: (string | { name: string })[];
}

interface Integration {
  id: string;
  title: string;
  type: string;
  scope: string;
  status: string;
  has_credentials: boolean;
  tools: string[];
}

const typeId = (t: IntegrationType) => t.type ?? t.id ?? "";
const toolName = (x: string | { name: string }) => (typeof x === "string" ? x : x.name);
export const missingRoute = (e: unknown) => e instanceof ApiError && e.status === 404;

function Credentials(props: { type?: IntegrationType; value: Record<string, unknown>; onChange: (v: Record<string, unknown>) => void }) {
  if (props.type?.credentials_schema) return <SchemaForm schema={props.type.credentials_schema} value={props.value} onChange={props.onChange} secret />;
  return (
    <Field label="Credentials (JSON, write-only)" hint='For example {"token": "…"}. Sent once, stored encrypted, never shown again.'>
      {(id, hint) => (
        <textarea
          id={id}
          class="code"
          rows={3}
          autocomplete="off"
          aria-describedby={hint}
          onChange={(e) => {
            try {
              props.onChange(e.currentTarget.value.trim() ? JSON.parse(e.currentTarget.value) : {});
            } catch {
              props.onChange({ __invalid: true });
            }
          }}
        />
      )}
    </Field>
  );
}

function Create(props: { types: IntegrationType[]; onCreated: () => void }) {
  const [type, setType] = useState(typeId(props.types[0]!));
  const [title, setTitle] = useState("");
  const [global, setGlobal] = useState(false);
  const [config, setConfig] = useState<Record<string, unknown>>({});
  const [credentials, setCredentials] = useState<Record<string, unknown>>({});
  const [error, setError] = useState<unknown>(null);
  const chosen = props.types.find((t) => typeId(t) === type);
  return (
    <form
      class="grid-form"
      autocomplete="off"
      onSubmit={async (e) => {
        e.preventDefault();
        const form = e.currentTarget as HTMLFormElement;
        setError(null);
        if (credentials.__invalid) return setError(new Error("The credentials are not valid JSON."));
        const bad = invalidJson(config) ?? invalidJson(credentials);
        if (bad) return setError(new Error(bad));
        try {
          const body: Record<string, unknown> = { title, type, config };
          if (!global) body.product_id = workspace.value!.id;
          if (Object.keys(credentials).length) body.credentials = credentials;
          await post("/api/integrations-base", body);
          setTitle("");
          setConfig({});
          setCredentials({});
          form.reset();
          props.onCreated();
        } catch (err) {
          setError(err);
        }
      }}
    >
      <Field label="Type">
        {(id) => (
          <select id={id} value={type} onChange={(e) => (setType(e.currentTarget.value), setConfig({}))}>
            {props.types.map((t) => (
              <option value={typeId(t)}>{t.name ?? typeId(t)}</option>
            ))}
          </select>
        )}
      </Field>
      <Field label="Title">{(id) => <input id={id} required maxLength={200} value={title} onInput={(e) => setTitle(e.currentTarget.value)} />}</Field>
      <label class="check">
        <input type="checkbox" checked={global} onChange={(e) => setGlobal(e.currentTarget.checked)} /> For the whole organization (global scope)
      </label>
      <fieldset>
        <legend>Configuration</legend>
        <SchemaForm schema={chosen?.config_schema} value={config} onChange={setConfig} />
      </fieldset>
      <fieldset>
        <legend>Credentials (optional: without them the integration is a template)</legend>
        <Credentials type={chosen} value={credentials} onChange={setCredentials} />
      </fieldset>
      <button class="primary" type="submit">
        Create integration
      </button>
      <ErrorNote error={error} />
    </form>
  );
}

function Activate(props: { integration: Integration; type?: IntegrationType; onDone: () => void }) {
  const [credentials, setCredentials] = useState<Record<string, unknown>>({});
  const [error, setError] = useState<unknown>(null);
  return (
    <form
      class="grid-form"
      autocomplete="off"
      onSubmit={async (e) => {
        e.preventDefault();
        setError(null);
        const bad = credentials.__invalid ? "The credentials are not valid JSON." : invalidJson(credentials);
        if (bad) return setError(new Error(bad));
        try {
          await put(`/api/integrations-base/${props.integration.id}`, { credentials });
          props.onDone();
        } catch (err) {
          setError(err);
        }
      }}
    >
      <Credentials type={props.type} value={credentials} onChange={setCredentials} />
      <button type="submit">{props.integration.has_credentials ? "Replace credentials" : "Add credentials and activate"}</button>
      <ErrorNote error={error} />
    </form>
  );
}

export function Integrations() {
  const ws = workspace.value!;
  const types = useLoad(() => get<IntegrationType[]>("/api/integrations-base/types"), [], "integration-types");
  const list = useLoad(() => get<Integration[]>(`/api/integrations-base${qs({ product_id: ws.id, pageSize: 100 })}`), [ws.id], `integrations:${ws.id}`);
  const [open, setOpen] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  if (types.loading && !types.data) return <Spinner />;
  if (missingRoute(types.error)) return <Note kind="warn">Integrations are not available on this server (its version has no /api/integrations-base).</Note>;
  if (types.error) return <ErrorNote error={types.error} />;
  return (
    <>
      <Section title="Integrations">
        <ErrorNote error={error || (missingRoute(list.error) ? null : list.error)} />
        {list.data?.length ? (
          <ul class="list">
            {list.data.map((i) => (
              <li key={i.id}>
                <strong>{i.title}</strong> <code>{i.type}</code> <Badge value={i.scope} /> <Badge value={i.status} />
                <span class="muted">{i.has_credentials ? "credentials set" : "no credentials"} · tools: {i.tools.join(", ") || "none"}</span>
                <button type="button" aria-expanded={open === i.id} onClick={() => setOpen(open === i.id ? null : i.id)}>
                  Credentials
                </button>
                <Action class="danger" confirm={`Delete “${i.title}”?`} onError={setError} run={async () => (await del(`/api/integrations-base/${i.id}`), list.reload())}>
                  Delete
                </Action>
                {open === i.id && <Activate integration={i} type={types.data!.find((t) => typeId(t) === i.type)} onDone={() => (setOpen(null), list.reload())} />}
              </li>
            ))}
          </ul>
        ) : (
          !list.error && <Note>No integrations yet.</Note>
        )}
      </Section>
      <Section title="New integration">
        <Create types={types.data!} onCreated={list.reload} />
      </Section>
      <Section title="Connector types">
        <div class="cards">
          {types.data!.map((t) => (
            <article class="tile" key={typeId(t)}>
              <h3>{t.name ?? typeId(t)}</h3>
              {t.description && <p>{t.description}</p>}
              <p class="muted">Tools: {(t.tools ?? []).map(toolName).join(", ") || "none"}</p>
            </article>
          ))}
        </div>
      </Section>
    </>
  );
}
