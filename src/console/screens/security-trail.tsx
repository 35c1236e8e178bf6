// The organization's security trail (GET /api/organizations/{id}/activity), newest first: who did
// what, when and from where, filtered by action. Read when the tab opens and on Refresh only.
import { useState } from "preact/hooks";
import { get, qs } from "../api";
import { actingOrgId, user, type User } from "../state";
import { ErrorNote, Field, Note, Section, Spinner, useLoad, when } from "../ui/kit";
import { PAGE, useUsers } from "../users";

interface Entry {
  action: string;
  actor_user_id: string | null;
  target_organization_id: string | null;
  method: string | null;
  endpoint: string | null;
  status_code: number | null;
  ip_address: string | null;
  user_agent: string | null;
  detail: string | null;
  created_at: string;
}

/** Every action the trail records (activity/table.ts), in words. */
const ACTIONS: Record<string, string> = {
  user_added: "User added",
  user_updated: "User changed",
  user_removed: "User removed",
  password_changed: "Changed own password",
  password_reset: "Password reset (command line)",
  login_succeeded: "Signed in",
  login_failed: "Sign-in failed",
  login_throttled: "Sign-ins held back",
  organization_override: "Super admin acted here",
};

/** The browser or client a user agent names, enough to tell one device from another. */
function client(ua: string | null): string | null {
  if (!ua) return null;
  const name = /(Edg|OPR|Firefox|Chrome|Chromium|Safari|curl|Wget|python-requests|node|Bun)[/ ]([\d.]+)?/.exec(ua);
  const os = /(Windows|Mac OS X|Android|iPhone|iPad|Linux)/.exec(ua)?.[1];
  if (!name) return ua.slice(0, 40);
  const label = { Edg: "Edge", OPR: "Opera" }[name[1]!] ?? name[1];
  return `${label}${os ? ` on ${os.replace("Mac OS X", "macOS")}` : ""}`;
}

const LIMITS = [100, 500, 1000];

export function SecurityTrail() {
  const org = actingOrgId.value!;
  const me = user.value!;
  const [action, setAction] = useState("");
  const [limit, setLimit] = useState(LIMITS[0]!);
  const trail = useLoad(() => get<Entry[]>(`/api/organizations/${org}/activity${qs({ action, limit })}`), [org, action, limit], `trail:${org}:${action}:${limit}`);
  // Who acted, by name: the users list (already loaded by the Users tab, else read once).
  const users = useUsers(org);
  const byId = new Map<string, User>((users.data?.data ?? []).map((u) => [u.id, u]));
  const complete = (users.data?.pagination?.total ?? Infinity) <= PAGE;
  const who = (e: Entry) => {
    if (!e.actor_user_id) return e.method === "CLI" ? "the hearth command on the server" : "—";
    if (e.actor_user_id === me.id) return `you (${me.email})`;
    const u = byId.get(e.actor_user_id);
    if (u) return `${u.name} (${u.email})`;
    // Not among the users: a super admin of another organization acting here, or a removed user
    // (the trail keeps their id only; the "User removed" entry names their email).
    const id = e.actor_user_id.slice(0, 8);
    if (e.action === "organization_override") return `a super admin of another organization (${id}…)`;
    return complete && users.data ? `a removed user (${id}…)` : `user ${id}…`;
  };
  const rows = trail.data ?? [];
  return (
    <Section
      title="Security trail"
      actions={
        <button type="button" onClick={trail.reload} disabled={trail.loading}>
          Refresh
        </button>
      }
    >
      <div class="toolbar narrow">
        <Field label="Action">
          {(id) => (
            <select id={id} value={action} onChange={(e) => setAction(e.currentTarget.value)}>
              <option value="">All actions</option>
              {Object.entries(ACTIONS).map(([value, label]) => (
                <option value={value}>{label}</option>
              ))}
            </select>
          )}
        </Field>
      </div>
      <ErrorNote error={trail.error} />
      {trail.loading && !trail.data ? (
        <Spinner />
      ) : !rows.length ? (
        !trail.error && <Note>{action ? `No “${ACTIONS[action]}” entries.` : "Nothing recorded yet."}</Note>
      ) : (
        <>
          <div class="scroll">
            <table class="table small stack">
              <caption class="sr-only">Security trail, newest first</caption>
              <thead>
                <tr>
                  <th>When</th>
                  <th>What</th>
                  <th>Who</th>
                  <th>Detail</th>
                  <th>From</th>
                  <th>Result</th>
                </tr>
              </thead>
              <tbody>
                {rows.map((e) => (
                  <tr>
                    <td data-label="When">{when(e.created_at)}</td>
                    <td data-label="What">{ACTIONS[e.action] ?? e.action}</td>
                    <td data-label="Who">{who(e)}</td>
                    <td data-label="Detail">
                      {/* An override is about the request the super admin made here. */}
                      {e.action === "organization_override" && e.endpoint ? `${e.method ?? ""} ${e.endpoint}, ${e.detail ?? ""}` : (e.detail ?? "—")}
                    </td>
                    <td data-label="From" title={e.user_agent ?? undefined}>
                      {e.ip_address ?? (e.method === "CLI" ? "command line" : "—")}
                      {client(e.user_agent) && <small class="muted"> · {client(e.user_agent)}</small>}
                    </td>
                    <td data-label="Result">{e.status_code ?? "—"}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          {rows.length >= limit && limit < LIMITS.at(-1)! && (
            <button type="button" onClick={() => setLimit(LIMITS[LIMITS.indexOf(limit) + 1]!)}>
              Show older entries
            </button>
          )}
          {rows.length >= limit && limit === LIMITS.at(-1) && <p class="muted">The newest {limit} entries are shown; filter by action to see older ones.</p>}
        </>
      )}
    </Section>
  );
}
