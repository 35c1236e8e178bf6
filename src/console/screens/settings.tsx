// Settings: the workspace's API Tokens tab (spec §5 rule 9), the organization's workspaces, and
// My account (one's own password).
import { useState } from "preact/hooks";
import { del, post, put } from "../api";
import { follow, navigate, path } from "../router";
import { chooseWorkspace, loadSession, workspace } from "../state";
import { Action, ErrorNote, Field, Section } from "../ui/kit";
import { Account } from "./account";
import { Tokens } from "./tokens";

export function Settings() {
  // Tokens belong to a workspace: without one, Workspaces (to create one) comes first.
  const tab = path.value.startsWith("/settings/account") ? "account" : !workspace.value || path.value.startsWith("/settings/workspaces") ? "workspaces" : "tokens";
  return (
    <>
      <div class="tabs" role="tablist" aria-label="Settings">
        {workspace.value && (
          <a role="tab" href="/settings/tokens" onClick={follow} aria-selected={tab === "tokens"}>
            API Tokens
          </a>
        )}
        <a role="tab" href="/settings/workspaces" onClick={follow} aria-selected={tab === "workspaces"}>
          Workspaces
        </a>
        <a role="tab" href="/settings/account" onClick={follow} aria-selected={tab === "account"}>
          My account
        </a>
      </div>
      {tab === "tokens" ? <Tokens /> : tab === "account" ? <Account /> : <Workspaces />}
    </>
  );
}

function Workspaces() {
  const [name, setName] = useState("");
  const [rename, setRename] = useState(workspace.value?.name ?? "");
  const [error, setError] = useState<unknown>(null);
  return (
    <>
      {workspace.value && (
      <Section title="This workspace">
        <form
          class="row"
          onSubmit={async (e) => {
            e.preventDefault();
            setError(null);
            try {
              await put(`/api/products/${workspace.value!.id}`, { name: rename });
              await loadSession();
            } catch (err) {
              setError(err);
            }
          }}
        >
          <Field label="Name">{(id) => <input id={id} required maxLength={200} value={rename} onInput={(e) => setRename(e.currentTarget.value)} />}</Field>
          <button type="submit">Rename</button>
        </form>
        <p class="muted">Id: <code>{workspace.value?.id}</code></p>
      </Section>
      )}
      <Section title="New workspace">
        <form
          class="row"
          onSubmit={async (e) => {
            e.preventDefault();
            setError(null);
            try {
              const ws = await post<{ id: string }>("/api/products", { name });
              setName("");
              await loadSession();
              chooseWorkspace(ws.id);
            } catch (err) {
              setError(err);
            }
          }}
        >
          <Field label="Workspace name">{(id) => <input id={id} required maxLength={200} value={name} onInput={(e) => setName(e.currentTarget.value)} />}</Field>
          <button type="submit">Create</button>
        </form>
      </Section>
      <ErrorNote error={error} />
      {workspace.value && (
        <Action
          class="danger"
          confirm="Delete this workspace with everything in it?"
          onError={setError}
          run={async () => {
            setError(null);
            await del(`/api/products/${workspace.value!.id}`);
            await loadSession();
            // Stay here: with no workspace left, this is where the next one is created.
            navigate("/settings/workspaces");
          }}
        >
          Delete this workspace
        </Action>
      )}
    </>
  );
}
