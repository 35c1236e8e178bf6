// Knowledge bases of the workspace: pick or create one, its files (upload, progress, retry,
// download, delete) and search with the three modes.
import { useState } from "preact/hooks";
import { get, post } from "../api";
import { workspace } from "../state";
import { ErrorNote, Field, Section, Spinner, bytes, useLoad } from "../ui/kit";
import { Files } from "./knowledge-files";
import { Search } from "./knowledge-search";

export interface KnowledgeBase {
  id: string;
  name: string;
  is_default: boolean;
  file_count: number;
  bytes: number;
}

export function Knowledge() {
  const ws = workspace.value!;
  const bases = useLoad(() => get<KnowledgeBase[]>(`/api/knowledge-base/${ws.id}`), [ws.id], `kbs:${ws.id}`);
  const [chosen, setChosen] = useState<string | null>(null);
  const [name, setName] = useState("");
  const [error, setError] = useState<unknown>(null);
  if (bases.loading && !bases.data) return <Spinner />;
  if (bases.error) return <ErrorNote error={bases.error} />;
  const kb = bases.data!.find((b) => b.id === chosen) ?? bases.data!.find((b) => b.is_default) ?? bases.data![0];
  return (
    <>
      <div class="toolbar">
        <Field label="Knowledge base">
          {(id) => (
            <select id={id} value={kb?.id} onChange={(e) => setChosen(e.currentTarget.value)}>
              {bases.data!.map((b) => (
                <option value={b.id}>
                  {b.name} ({b.file_count} files, {bytes(b.bytes)})
                </option>
              ))}
            </select>
          )}
        </Field>
        <form
          class="row"
          onSubmit={async (e) => {
            e.preventDefault();
            setError(null);
            try {
              const created = await post<KnowledgeBase>("/api/knowledge-base", { product_id: ws.id, name });
              setName("");
              setChosen(created.id);
              bases.reload();
            } catch (err) {
              setError(err);
            }
          }}
        >
          <Field label="New knowledge base">{(id) => <input id={id} required maxLength={200} value={name} onInput={(e) => setName(e.currentTarget.value)} />}</Field>
          <button type="submit">Create</button>
        </form>
      </div>
      <ErrorNote error={error} />
      {kb && (
        <div class="split">
          <Files key={kb.id} kb={kb} onChange={bases.reload} />
          <Section title="Search">
            <Search kbId={kb.id} />
          </Section>
        </div>
      )}
    </>
  );
}
