// Settings › My account: who is signed in, and changing one's own password. Hearth answers a new
// session and ends every other one, so the console switches to the new token at once.
import { useState } from "preact/hooks";
import { put, setToken } from "../api";
import { user, type User } from "../state";
import { ErrorNote, Field, Note, Section } from "../ui/kit";

function ChangePassword() {
  const empty = { current: "", next: "", confirm: "" };
  const [form, setForm] = useState(empty);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const [done, setDone] = useState(false);
  const set = (k: keyof typeof empty) => (e: { currentTarget: { value: string } }) => setForm({ ...form, [k]: e.currentTarget.value });
  const mismatch = form.confirm !== "" && form.confirm !== form.next ? "Does not match the new password." : undefined;
  return (
    <form
      class="grid-form"
      aria-label="Change my password"
      onSubmit={async (e) => {
        e.preventDefault();
        if (form.next !== form.confirm) return;
        setBusy(true);
        setError(null);
        setDone(false);
        try {
          const session = await put<{ token: string; user: User }>("/api/auth/password", { current_password: form.current, new_password: form.next });
          // The old token stopped working with this answer: every later request carries the new one.
          setToken(session.token);
          user.value = session.user;
          setForm(empty);
          setDone(true);
        } catch (err) {
          // A wrong current password is 403 (this session is fine), so nothing signs out here.
          setError(err);
        } finally {
          setBusy(false);
        }
      }}
    >
      {/* The account's name for password managers, which expect one beside a new password. */}
      <input type="email" autocomplete="username" value={user.value!.email} readOnly hidden />
      <Field label="Current password" required>
        {(id) => <input id={id} type="password" required maxLength={1024} autocomplete="current-password" value={form.current} onInput={set("current")} />}
      </Field>
      <Field label="New password" required hint="At least 8 characters.">
        {(id, hint) => <input id={id} type="password" required minLength={8} maxLength={1024} autocomplete="new-password" aria-describedby={hint} value={form.next} onInput={set("next")} />}
      </Field>
      <Field label="Confirm new password" required error={mismatch}>
        {(id, describedBy) => (
          <input id={id} type="password" required minLength={8} maxLength={1024} autocomplete="new-password" aria-invalid={Boolean(mismatch)} aria-describedby={describedBy} value={form.confirm} onInput={set("confirm")} />
        )}
      </Field>
      <button class="primary" type="submit" disabled={busy || Boolean(mismatch)}>
        {busy ? "Changing…" : "Change password"}
      </button>
      <ErrorNote error={error} />
      {done && <Note kind="ok">Password changed. Every other session of yours (other tabs, browsers and devices) was signed out; this one stays signed in. Your API tokens keep working.</Note>}
    </form>
  );
}

export function Account() {
  const me = user.value!;
  return (
    <>
      <Section title="My account">
        <dl class="facts">
          <dt>Email</dt>
          <dd>{me.email}</dd>
          <dt>Name</dt>
          <dd>{me.name}</dd>
          <dt>Role</dt>
          <dd>
            {me.role}
            {me.is_super_admin ? ", super admin" : ""}
          </dd>
          <dt>Organization</dt>
          <dd>
            <code>{me.organization_id}</code>
          </dd>
        </dl>
      </Section>
      <Section title="Change my password">
        <ChangePassword />
      </Section>
    </>
  );
}
