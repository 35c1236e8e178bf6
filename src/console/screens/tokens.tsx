// API Tokens tab: create (name required, expiry optional, role), the secret shown once, the list
// with prefix, status, expiry and last use, revoke / renew / regenerate / delete, and the audit log.
import { useState } from "preact/hooks";
import { del, get, post } from "../api";
import { workspace } from "../state";
import { Action, Badge, Copy, ErrorNote, Field, Note, Section, Spinner, useLoad, when } from "../ui/kit";

interface Token {
  id: string;
  token_name: string;
  token_prefix: string;
  role: "USER" | "SYSTEM";
  status: string;
  expires_at: string | null;
  last_used_at: string | null;
  created_at: string;
}

/** The new secret, held only in this component's state and dropped when dismissed. */
function Secret(props: { name: string; secret: string; onDone: () => void }) {
  return (
    <div class="secret" role="alert" aria-label="New token secret">
      <strong>Copy the secret of “{props.name}” now.</strong> It is shown only this once: Hearth keeps only its hash.
      <div class="row">
        <code class="secret-value" data-testid="token-secret">
          {props.secret}
        </code>
        <Copy text={props.secret} />
        <button type="button" class="primary" onClick={props.onDone}>
          I have copied it
        </button>
      </div>
    </div>
  );
}

function CreateToken(props: { onCreated: (name: string, secret: string) => void }) {
  const [name, setName] = useState("");
  const [expires, setExpires] = useState("");
  const [role, setRole] = useState("USER");
  const [error, setError] = useState<unknown>(null);
  return (
    <form
      class="grid-form"
      onSubmit={async (e) => {
        e.preventDefault();
        setError(null);
        try {
          const body: Record<string, unknown> = { product_id: workspace.value!.id, token_name: name.trim(), role };
          if (expires) body.expires_at = new Date(expires).toISOString();
          const created = await post<{ token: string; token_name: string }>("/api/api-tokens", body);
          setName("");
          setExpires("");
          props.onCreated(created.token_name, created.token);
        } catch (err) {
          setError(err);
        }
      }}
    >
      <Field label="Token name">{(id) => <input id={id} required maxLength={200} value={name} onInput={(e) => setName(e.currentTarget.value)} />}</Field>
      <Field label="Expires (optional)" hint="Leave empty for a token that does not expire.">
        {(id, hint) => <input id={id} type="datetime-local" aria-describedby={hint} value={expires} onInput={(e) => setExpires(e.currentTarget.value)} />}
      </Field>
      <Field label="Role" hint="SYSTEM tokens can manage the workspace; USER tokens act as a user.">
        {(id, hint) => (
          <select id={id} aria-describedby={hint} value={role} onChange={(e) => setRole(e.currentTarget.value)}>
            <option value="USER">USER</option>
            <option value="SYSTEM">SYSTEM</option>
          </select>
        )}
      </Field>
      <button class="primary" type="submit">
        Create token
      </button>
      <ErrorNote error={error} />
    </form>
  );
}

/** `changed` goes up after an action on the token (revoke, renew, regenerate): the log is read
 * again, once, so its new row shows; a closed log is not read at all. */
function Audit(props: { id: string; changed: number }) {
  const logs = useLoad(() => get<any[]>(`/api/api-tokens/${props.id}/audit-logs?limit=50`), [props.id, props.changed]);
  if (logs.loading && !logs.data) return <Spinner />;
  if (logs.error) return <ErrorNote error={logs.error} />;
  if (!logs.data!.length) return <p class="muted">No entries.</p>;
  return (
    <table class="table small">
      <caption class="sr-only">Audit log</caption>
      <thead>
        <tr>
          <th>When</th>
          <th>Action</th>
          <th>Endpoint</th>
          <th>Status</th>
          <th>Address</th>
          <th>Count</th>
        </tr>
      </thead>
      <tbody>
        {logs.data!.map((l) => (
          <tr>
            <td>{when(l.created_at)}</td>
            <td>{l.action}</td>
            <td>{l.endpoint ?? "—"}</td>
            <td>{l.status_code ?? "—"}</td>
            <td>{l.ip_address ?? "—"}</td>
            <td>{l.count ?? 1}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function TokenRow(props: { token: Token; onChange: () => void; onSecret: (name: string, secret: string) => void; onError: (e: unknown) => void }) {
  const t = props.token;
  const [open, setOpen] = useState(false);
  const [renewTo, setRenewTo] = useState("");
  const [changed, setChanged] = useState(0);
  const done = () => {
    setChanged((n) => n + 1);
    props.onChange();
  };
  const act = (fn: () => Promise<unknown>) => async () => {
    await fn();
    done();
  };
  return (
    <>
      <tr>
        <td data-label="Name">{t.token_name}</td>
        <td data-label="Prefix">
          <code>{t.token_prefix}…</code>
        </td>
        <td data-label="Role">{t.role}</td>
        <td data-label="Status">
          <Badge value={t.status} />
        </td>
        <td data-label="Expires">{t.expires_at ? when(t.expires_at) : "never"}</td>
        <td data-label="Last used">{when(t.last_used_at)}</td>
        <td class="actions">
          <Action onError={props.onError} disabled={t.status === "revoked"} confirm={`Revoke “${t.token_name}”? It stops working at once.`} run={act(() => post(`/api/api-tokens/${t.id}/revoke`))}>
            Revoke
          </Action>
          <Action
            onError={props.onError}
            disabled={t.status === "revoked"}
            confirm={`Regenerate “${t.token_name}”? The current secret stops working at once.`}
            run={async () => {
              const r = await post<{ token: string }>(`/api/api-tokens/${t.id}/regenerate`);
              props.onSecret(t.token_name, r.token);
              done();
            }}
          >
            Regenerate
          </Action>
          <Action onError={props.onError} class="danger" confirm={`Delete “${t.token_name}”? Its audit log stays readable.`} run={act(() => del(`/api/api-tokens/${t.id}`))}>
            Delete
          </Action>
          <button type="button" aria-expanded={open} onClick={() => setOpen(!open)}>
            {open ? "Hide" : "Renew, audit log"}
          </button>
        </td>
      </tr>
      {open && (
        <tr class="detail">
          <td colSpan={7}>
            <form
              class="row"
              onSubmit={async (e) => {
                e.preventDefault();
                try {
                  await post(`/api/api-tokens/${t.id}/renew`, { expires_at: new Date(renewTo).toISOString() });
                  done();
                } catch (err) {
                  props.onError(err);
                }
              }}
            >
              <Field label="Renew until">{(id) => <input id={id} type="datetime-local" required value={renewTo} onInput={(e) => setRenewTo(e.currentTarget.value)} />}</Field>
              <button type="submit" disabled={t.status === "revoked" || !t.expires_at} title={!t.expires_at ? "This token does not expire" : undefined}>
                Renew
              </button>
            </form>
            <h3>Audit log</h3>
            <Audit id={t.id} changed={changed} />
          </td>
        </tr>
      )}
    </>
  );
}

export function Tokens() {
  const ws = workspace.value!;
  const list = useLoad(() => get<Token[]>(`/api/api-tokens/product/${ws.id}?pageSize=100`), [ws.id], `tokens:${ws.id}`);
  const [secret, setSecret] = useState<{ name: string; secret: string } | null>(null);
  const [error, setError] = useState<unknown>(null);
  const onSecret = (name: string, value: string) => setSecret({ name, secret: value });
  return (
    <>
      <Section title="New API token">
        <CreateToken onCreated={(n, s) => (onSecret(n, s), list.reload())} />
        {secret && <Secret name={secret.name} secret={secret.secret} onDone={() => setSecret(null)} />}
      </Section>
      <Section title={`Tokens of ${ws.name}`}>
        <ErrorNote error={error || list.error} />
        {list.loading && !list.data ? (
          <Spinner />
        ) : list.data?.length ? (
          <div class="scroll">
            <table class="table stack">
              <thead>
                <tr>
                  <th>Name</th>
                  <th>Prefix</th>
                  <th>Role</th>
                  <th>Status</th>
                  <th>Expires</th>
                  <th>Last used</th>
                  <th>
                    <span class="sr-only">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {list.data.map((t) => (
                  <TokenRow key={t.id} token={t} onChange={list.reload} onSecret={onSecret} onError={setError} />
                ))}
              </tbody>
            </table>
          </div>
        ) : (
          !list.error && <Note>No tokens yet.</Note>
        )}
      </Section>
    </>
  );
}
