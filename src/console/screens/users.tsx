// Users of the organization: everyone sees who is in it; owners and admins add a user, change a
// role or a name, set a password and remove a user, each refusal shown by its action. The
// security trail is the screen's second tab (security-trail.tsx).
import { Fragment } from "preact";
import { useState } from "preact/hooks";
import { del, endSession, post, put } from "../api";
import { follow, path } from "../router";
import { actingOrgId, user, type User } from "../state";
import { Action, Badge, ErrorNote, Field, Note, Section, Spinner, forget, when } from "../ui/kit";
import { PAGE, powers, useUsers, type Role } from "../users";
import { SecurityTrail } from "./security-trail";

export function Users() {
  const me = user.value!;
  const trail = powers(me).manage && path.value.startsWith("/users/activity");
  return (
    <>
      <div class="tabs" role="tablist" aria-label="Users">
        <a role="tab" href="/users" onClick={follow} aria-selected={!trail}>
          Users
        </a>
        {powers(me).manage && (
          <a role="tab" href="/users/activity" onClick={follow} aria-selected={trail}>
            Security trail
          </a>
        )}
      </div>
      {trail ? <SecurityTrail /> : <UserList />}
    </>
  );
}

/** A random password a person can read out or paste: 16 letters and digits, no look-alikes. */
function randomPassword() {
  const chars = "abcdefghjkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789";
  return Array.from(crypto.getRandomValues(new Uint32Array(16)), (n) => chars[n % chars.length]).join("");
}

function AddUser(props: { roles: readonly Role[]; onAdded: (u: User) => void }) {
  const empty = { email: "", name: "", role: "member" as Role, password: "" };
  const [form, setForm] = useState(empty);
  const [shown, setShown] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [added, setAdded] = useState<User | null>(null);
  const set = (k: keyof typeof empty) => (e: { currentTarget: { value: string } }) => setForm({ ...form, [k]: e.currentTarget.value });
  return (
    <form
      class="grid-form"
      aria-label="Add a user"
      onSubmit={async (e) => {
        e.preventDefault();
        setError(null);
        setAdded(null);
        try {
          const body = { email: form.email.trim(), role: form.role, password: form.password, ...(form.name.trim() ? { name: form.name.trim() } : {}) };
          const u = await post<User>(`/api/organizations/${actingOrgId.value}/users`, body);
          setForm(empty);
          setShown(false);
          setAdded(u);
          props.onAdded(u);
        } catch (err) {
          setError(err);
        }
      }}
    >
      <Field label="Email" required>
        {(id) => <input id={id} type="email" required maxLength={320} autocomplete="off" value={form.email} onInput={set("email")} />}
      </Field>
      <Field label="Name" hint="Optional: the part of the email before @ if left empty.">
        {(id, hint) => <input id={id} maxLength={200} aria-describedby={hint} value={form.name} onInput={set("name")} />}
      </Field>
      <Field label="Role">
        {(id) => (
          <select id={id} value={form.role} onChange={set("role")}>
            {props.roles.map((r) => (
              <option value={r}>{r}</option>
            ))}
          </select>
        )}
      </Field>
      <Field label="Initial password" required hint="At least 8 characters. Give it to them yourself; they can change it under Settings › My account.">
        {(id, hint) => (
          <span class="row">
            {/* Shown once generated, so it can be handed over. */}
            {shown ? (
              <input id={id} type="text" required minLength={8} maxLength={1024} autocomplete="off" aria-describedby={hint} value={form.password} onInput={set("password")} />
            ) : (
              <input id={id} type="password" required minLength={8} maxLength={1024} autocomplete="new-password" aria-describedby={hint} value={form.password} onInput={set("password")} />
            )}
            <button type="button" onClick={() => (setForm({ ...form, password: randomPassword() }), setShown(true))}>
              Generate
            </button>
          </span>
        )}
      </Field>
      <button class="primary" type="submit">
        Add user
      </button>
      <ErrorNote error={error} />
      {added && <Note kind="ok">Added {added.email} as {added.role}.</Note>}
    </form>
  );
}

/** The actions on one user, each with its own place for the server's answer. */
function Manage(props: { target: User; roles: readonly Role[]; onChanged: (u: User) => void; onRemoved: (u: User) => void }) {
  const t = props.target;
  const me = user.value!;
  const self = t.id === me.id;
  const [role, setRole] = useState<Role>(t.role);
  const [name, setName] = useState(t.name ?? "");
  const [password, setPassword] = useState("");
  const [errors, setErrors] = useState<Record<string, unknown>>({});
  const [done, setDone] = useState<string | null>(null);
  const url = `/api/organizations/${actingOrgId.value}/users/${t.id}`;
  /** Sends one change; its refusal is shown next to `what`, its success once for the user. */
  const change = (what: string, body: Record<string, string>, said: string) => async (e: Event) => {
    e.preventDefault();
    setErrors({});
    setDone(null);
    try {
      const u = await put<User>(url, body);
      if (self) user.value = { ...me, ...u };
      props.onChanged(u);
      setDone(said);
      if (what === "password") setPassword("");
    } catch (err) {
      setErrors({ [what]: err });
    }
  };
  return (
    <div class="manage">
      <form class="row" aria-label={`Role of ${t.email}`} onSubmit={change("role", { role }, `${t.email} is now ${role}.`)}>
        <Field label="Role">
          {(id) => (
            <select id={id} value={role} onChange={(e) => setRole(e.currentTarget.value as Role)}>
              {/* An owner's row is only editable by owners, so the current role is always offered. */}
              {props.roles.map((r) => (
                <option value={r}>{r}</option>
              ))}
            </select>
          )}
        </Field>
        <button type="submit" disabled={role === t.role}>
          Change role
        </button>
      </form>
      <ErrorNote error={errors.role} />
      <form class="row" aria-label={`Name of ${t.email}`} onSubmit={change("name", { name: name.trim() }, `Renamed to ${name.trim()}.`)}>
        <Field label="Name">{(id) => <input id={id} required maxLength={200} value={name} onInput={(e) => setName(e.currentTarget.value)} />}</Field>
        <button type="submit" disabled={!name.trim() || name.trim() === t.name}>
          Rename
        </button>
      </form>
      <ErrorNote error={errors.name} />
      {self ? (
        <p class="muted">
          Your own password: <a href="/settings/account" onClick={follow}>Settings › My account</a> (this session stays signed in).
        </p>
      ) : (
        <>
          <form class="row" aria-label={`Password of ${t.email}`} onSubmit={change("password", { password }, `New password set for ${t.email}; their sessions were signed out.`)}>
            <Field label="New password" hint="At least 8 characters. Every session of theirs ends; their API tokens keep working.">
              {(id, hint) => <input id={id} type="password" required minLength={8} maxLength={1024} autocomplete="new-password" aria-describedby={hint} value={password} onInput={(e) => setPassword(e.currentTarget.value)} />}
            </Field>
            <button type="submit">Set password</button>
          </form>
          <ErrorNote error={errors.password} />
        </>
      )}
      <Action
        class="danger"
        confirm={`Remove ${t.email}? Their sessions end at once and every API token they created is revoked. Audit log entries that name them stay.${self ? " You will be signed out." : ""}`}
        onError={(err) => setErrors({ remove: err })}
        run={async () => {
          setErrors({});
          setDone(null);
          await del(url);
          props.onRemoved(t);
          if (self) endSession("You removed your own account.");
        }}
      >
        Remove {self ? "my account" : "user"}
      </Action>
      <ErrorNote error={errors.remove} />
      {done && <Note kind="ok">{done}</Note>}
    </div>
  );
}

function UserList() {
  const me = user.value!;
  const org = actingOrgId.value!;
  const can = powers(me);
  const [page, setPage] = useState(1);
  const [open, setOpen] = useState<string | null>(null);
  const [removed, setRemoved] = useState<string | null>(null);
  const list = useUsers(org, page);
  const rows = list.data?.data ?? [];
  const total = list.data?.pagination?.total ?? rows.length;
  // A change made here updates the list from the server's answer (no second read of the list);
  // the trail, read only when its tab opens, is read again there.
  const changed = (fn: (users: User[], total: number) => [User[], number]) => {
    forget(`trail:${org}:`);
    list.update((l) => {
      const [data, n] = fn(l.data, l.pagination?.total ?? l.data.length);
      return { ...l, data, pagination: l.pagination && { ...l.pagination, total: n } };
    });
  };
  return (
    <>
      {can.manage ? (
        <Section title="Add a user">
          <AddUser roles={can.roles} onAdded={(u) => changed((us, n) => [page * PAGE > n ? [...us, u] : us, n + 1])} />
        </Section>
      ) : (
        <Note>Only owners and admins of the organization add, change or remove users.</Note>
      )}
      <Section title={`Users (${total})`}>
        <ErrorNote error={list.error} />
        {removed && <Note kind="ok">{removed}</Note>}
        {list.loading && !list.data ? (
          <Spinner />
        ) : (
          <div class="scroll">
            <table class="table stack">
              <thead>
                <tr>
                  <th>Name</th>
                  <th>Email</th>
                  <th>Role</th>
                  <th>Added</th>
                  {can.manage && (
                    <th>
                      <span class="sr-only">Actions</span>
                    </th>
                  )}
                </tr>
              </thead>
              <tbody>
                {rows.map((u) => (
                  <Fragment key={u.id}>
                    <tr>
                      <td data-label="Name">
                        {u.name} {u.id === me.id && <span class="badge">you</span>} {u.is_super_admin && <span class="badge">super admin</span>}
                      </td>
                      <td data-label="Email">{u.email}</td>
                      <td data-label="Role">
                        <Badge value={u.role} />
                      </td>
                      <td data-label="Added">{when(u.created_at)}</td>
                      {can.manage && (
                        <td class="actions">
                          {can.canEdit(u) ? (
                            <button type="button" aria-expanded={open === u.id} aria-label={`Manage ${u.email}`} onClick={() => setOpen(open === u.id ? null : u.id)}>
                              {open === u.id ? "Close" : "Manage"}
                            </button>
                          ) : (
                            <span class="muted">{u.is_super_admin ? "Only super admins change a super admin" : "Only owners change an owner"}</span>
                          )}
                        </td>
                      )}
                    </tr>
                    {open === u.id && (
                      <tr class="detail">
                        <td colSpan={5}>
                          <Manage
                            key={u.id}
                            target={u}
                            roles={can.roles}
                            onChanged={(v) => changed((us, n) => [us.map((x) => (x.id === v.id ? v : x)), n])}
                            onRemoved={(r) => {
                              setOpen(null);
                              setRemoved(`Removed ${r.email}: their sessions ended and their API tokens are revoked.`);
                              changed((us, n) => [us.filter((x) => x.id !== r.id), n - 1]);
                            }}
                          />
                        </td>
                      </tr>
                    )}
                  </Fragment>
                ))}
              </tbody>
            </table>
          </div>
        )}
        {total > PAGE && (
          <div class="row">
            <button type="button" disabled={page === 1} onClick={() => setPage(page - 1)}>
              Previous
            </button>
            <span class="muted">
              Page {page} of {Math.ceil(total / PAGE)}
            </span>
            <button type="button" disabled={page * PAGE >= total} onClick={() => setPage(page + 1)}>
              Next
            </button>
          </div>
        )}
      </Section>
    </>
  );
}
