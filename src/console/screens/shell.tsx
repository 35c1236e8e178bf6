// The signed-in frame: navigation, organization and workspace switcher, sign out, and the screen.
import type { ComponentType } from "preact";
import { useState } from "preact/hooks";
import { setActingOrg } from "../api";
import { follow, navigate, path } from "../router";
import { actingOrgId, chooseWorkspace, loadSession, signOut, user, workspace, workspaces } from "../state";
import { ErrorNote, forget } from "../ui/kit";
import { Knowledge } from "./knowledge";
import { Chat } from "./chat";
import { Transcription } from "./transcription";
import { Agents } from "./agents";
import { Workflows } from "./workflows";
import { Integrations } from "./integrations";
import { Settings } from "./settings";
import { Health } from "./health";
import { Users } from "./users";

/** `org`: the screen belongs to the organization, not to a workspace, so it works without one. */
const SCREENS: { path: string; label: string; screen: ComponentType; org?: true }[] = [
  { path: "/knowledge", label: "Knowledge", screen: Knowledge },
  { path: "/chat", label: "Assistant", screen: Chat },
  { path: "/transcription", label: "Transcription", screen: Transcription },
  { path: "/agents", label: "Agents", screen: Agents },
  { path: "/workflows", label: "Workflows", screen: Workflows },
  { path: "/integrations", label: "Integrations", screen: Integrations },
  { path: "/users", label: "Users", screen: Users, org: true },
  { path: "/settings", label: "Settings", screen: Settings },
  { path: "/health", label: "Health", screen: Health },
];

function OrgSwitcher() {
  const [error, setError] = useState<unknown>(null);
  const me = user.value!;
  if (!me.is_super_admin) return <span class="muted org">Organization {me.organization_id.slice(0, 8)}</span>;
  const act = async (id: string) => {
    setError(null);
    forget();
    setActingOrg(id === me.organization_id ? null : id);
    try {
      await loadSession();
    } catch (e) {
      setActingOrg(null);
      setError(e);
      await loadSession().catch(() => {});
    }
  };
  return (
    <form
      class="org"
      onSubmit={(e) => {
        e.preventDefault();
        void act(new FormData(e.currentTarget).get("org") as string);
      }}
    >
      <label for="org-id">Organization</label>
      <input id="org-id" name="org" size={12} value={actingOrgId.value ?? ""} key={actingOrgId.value} />
      <button type="submit">Switch</button>
      <ErrorNote error={error} />
    </form>
  );
}

export function Shell() {
  const current = SCREENS.find((s) => path.value.startsWith(s.path));
  if (!current) {
    navigate("/knowledge", true);
    return null;
  }
  const Screen = current.screen;
  return (
    <div class="shell">
      <header class="topbar">
        <a class="brand" href="/knowledge" onClick={follow}>
          Hearth
        </a>
        <div class="switch">
          <label for="ws">Workspace</label>
          <select id="ws" value={workspace.value?.id} onChange={(e) => chooseWorkspace(e.currentTarget.value)}>
            {workspaces.value.map((w) => (
              <option value={w.id}>{w.name}</option>
            ))}
          </select>
        </div>
        <OrgSwitcher />
        <a class="who" href="/settings/account" onClick={follow} title="My account">
          {user.value!.email}
        </a>
        <button type="button" onClick={() => (signOut(), navigate("/", true))}>
          Sign out
        </button>
      </header>
      <nav class="nav" aria-label="Sections">
        {SCREENS.map((s) => (
          <a href={s.path} onClick={follow} aria-current={s === current ? "page" : undefined}>
            {s.label}
          </a>
        ))}
      </nav>
      <main class="main" id="main">
        <h1 class="screen-title">{current.label}</h1>
        {current.org ? (
          <Screen key={actingOrgId.value} />
        ) : workspace.value ? (
          <Screen key={workspace.value.id} />
        ) : current.path === "/settings" ? (
          // Without a workspace, Settings › Workspaces is where one is created (and My account is there): never hidden.
          <Settings />
        ) : (
          <p>
            No workspace yet.{" "}
            <a href="/settings/workspaces" onClick={follow}>
              Create one under Settings › Workspaces
            </a>
            .
          </p>
        )}
      </main>
    </div>
  );
}
