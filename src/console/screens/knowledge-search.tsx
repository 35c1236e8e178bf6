// Search a knowledge base: vector, keyword or hybrid, results with their file, page and score.
import { useState } from "preact/hooks";
import { post } from "../api";
import { ErrorNote, Field, Note } from "../ui/kit";

interface Hit {
  chunk_id: number;
  file_name: string;
  text: string;
  page?: number;
  headings?: string[];
  score: number;
}

const MODES = [
  ["vector", "Meaning (vector)"],
  ["keyword", "Exact words (keyword)"],
  ["hybrid", "Both (hybrid)"],
] as const;

export function Search(props: { kbId: string }) {
  const [query, setQuery] = useState("");
  const [mode, setMode] = useState("hybrid");
  const [hits, setHits] = useState<Hit[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  return (
    <>
      <form
        onSubmit={async (e) => {
          e.preventDefault();
          setBusy(true);
          setError(null);
          try {
            setHits(await post<Hit[]>("/api/knowledge-base/embeddings", { query, knowledge_base_ids: [props.kbId], mode, top_k: 8 }));
          } catch (err) {
            setError(err);
          } finally {
            setBusy(false);
          }
        }}
      >
        <Field label="Search the documents">
          {(id) => <input id={id} type="search" required maxLength={2000} value={query} onInput={(e) => setQuery(e.currentTarget.value)} />}
        </Field>
        <fieldset class="modes">
          <legend>Mode</legend>
          {MODES.map(([value, label]) => (
            <label>
              <input type="radio" name="mode" value={value} checked={mode === value} onChange={() => setMode(value)} /> {label}
            </label>
          ))}
        </fieldset>
        <button class="primary" type="submit" disabled={busy}>
          {busy ? "Searching…" : "Search"}
        </button>
      </form>
      <ErrorNote error={error} />
      {hits && !hits.length && <Note>Nothing found.</Note>}
      {hits && hits.length > 0 && (
        <ol class="hits" aria-label="Results">
          {hits.map((h) => (
            <li key={h.chunk_id}>
              <div class="hit-head">
                <strong>{h.file_name}</strong>
                {h.page !== undefined && h.page !== null && <span class="cite">page {h.page}</span>}
                <span class="muted">score {h.score.toFixed(3)}</span>
              </div>
              {h.headings?.length ? <div class="muted">{h.headings.join(" › ")}</div> : null}
              <p>{h.text}</p>
            </li>
          ))}
        </ol>
      )}
    </>
  );
}
