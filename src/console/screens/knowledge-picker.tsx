// Picks knowledge bases of the workspace by name (settings that ask for knowledge_base_ids): one
// request for the list, shared with the Knowledge screen's cache.
import { useState } from "preact/hooks";
import { get } from "../api";
import { workspace } from "../state";
import { ErrorNote, Spinner, useLoad } from "../ui/kit";
import type { KnowledgeBase } from "./knowledge";

let pickerSeq = 0;

export function KnowledgeBasePicker(props: { value: string[] | undefined; onChange: (ids: string[]) => void; hint?: string }) {
  const ws = workspace.value!;
  const bases = useLoad(() => get<KnowledgeBase[]>(`/api/knowledge-base/${ws.id}`), [ws.id], `kbs:${ws.id}`);
  const chosen = props.value ?? [];
  const [hintId] = useState(() => `kb-picker-${++pickerSeq}`);
  return (
    <fieldset class="kb-picker" aria-describedby={hintId}>
      <legend>Knowledge bases (optional)</legend>
      {bases.loading && !bases.data ? (
        <Spinner />
      ) : bases.error ? (
        <ErrorNote error={bases.error} />
      ) : bases.data!.length ? (
        bases.data!.map((b) => (
          <label class="check" key={b.id}>
            <input
              type="checkbox"
              checked={chosen.includes(b.id)}
              onChange={(e) => props.onChange(e.currentTarget.checked ? [...chosen, b.id] : chosen.filter((id) => id !== b.id))}
            />
            {b.name}
          </label>
        ))
      ) : (
        <p class="muted">This workspace has no knowledge base yet.</p>
      )}
      <small id={hintId} class="hint">
        {props.hint ?? "None ticked: all of the workspace's knowledge bases."}
      </small>
    </fieldset>
  );
}
