// Sign-in: email and password to POST /api/auth/login; the JWT goes to sessionStorage (see api.ts).
import { useState } from "preact/hooks";
import { post, sessionEnded, setToken } from "../api";
import { loadSession } from "../state";
import { ErrorNote, Field, Note } from "../ui/kit";

export function SignIn() {
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const session = await post<{ token: string }>("/api/auth/login", { email, password });
      setToken(session.token);
      await loadSession();
    } catch (err) {
      setToken(null);
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <main class="signin">
      <form class="card" onSubmit={submit} aria-label="Sign in">
        <h1>Hearth</h1>
        <p class="muted">Sign in to your workspace.</p>
        {sessionEnded.value && !error && <Note kind="warn">{sessionEnded.value}</Note>}
        <Field label="Email">
          {(id) => <input id={id} type="email" autocomplete="username" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} />}
        </Field>
        <Field label="Password">
          {(id) => (
            <input id={id} type="password" autocomplete="current-password" required value={password} onInput={(e) => setPassword(e.currentTarget.value)} />
          )}
        </Field>
        <ErrorNote error={error} />
        <button class="primary" type="submit" disabled={busy}>
          {busy ? "Signing in…" : "Sign in"}
        </button>
      </form>
    </main>
  );
}
