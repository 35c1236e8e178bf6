// Entry point of the web console: restores the session, then shows sign-in or the app shell.
import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import { offline, rateWait, token } from "./api";
import { followSession, loadSession, user } from "./state";
import { SignIn } from "./screens/sign-in";
import { Shell } from "./screens/shell";
import { Note, Spinner } from "./ui/kit";

function App() {
  const [restoring, setRestoring] = useState(Boolean(token.value && !user.value));
  useEffect(() => {
    if (!restoring) return;
    loadSession()
      .catch(() => {})
      .finally(() => setRestoring(false));
  }, []);
  return (
    <>
      {offline.value && (
        <div class="offline" role="alert">
          Connection to Hearth lost. Retrying…
        </div>
      )}
      {rateWait.value > 0 && !offline.value && (
        <div class="rate-wait" role="status">
          Waiting for the rate limit, retrying in {rateWait.value} s…
        </div>
      )}
      {restoring ? <Spinner label="Restoring your session…" /> : token.value && user.value ? <Shell /> : <SignIn />}
      <noscript>
        <Note kind="warn">The console needs JavaScript.</Note>
      </noscript>
    </>
  );
}

followSession();
render(<App />, document.getElementById("app")!);
