// A form for the flat JSON Schemas Hearth publishes (catalog settings, integration configs):
// strings, numbers, booleans, enums and string lists, each with its label and description.
import { Field } from "./kit";

export interface Schema {
  type?: string;
  properties?: Record<string, Schema>;
  required?: string[];
  description?: string;
  enum?: unknown[];
  items?: Schema;
  format?: string;
  default?: unknown;
}

const label = (name: string) => name.replace(/_/g, " ").replace(/\burl\b/g, "URL").replace(/^./, (c) => c.toUpperCase());

export function SchemaForm(props: { schema: Schema | undefined; value: Record<string, unknown>; onChange: (v: Record<string, unknown>) => void; secret?: boolean }) {
  const props_ = props.schema?.properties ?? {};
  const set = (k: string, v: unknown) => {
    const next = { ...props.value };
    if (v === "" || v === undefined || (Array.isArray(v) && !v.length)) delete next[k];
    else next[k] = v;
    props.onChange(next);
  };
  const names = Object.keys(props_);
  if (!names.length) return <p class="muted">Nothing to set.</p>;
  return (
    <>
      {names.map((k) => {
        const s = props_[k]!;
        const required = props.schema?.required?.includes(k);
        const text = `${label(k)}${required ? "" : " (optional)"}`;
        const v = props.value[k];
        return (
          <Field key={k} label={text} hint={s.description}>
            {(id, hint) =>
              s.enum ? (
                <select id={id} aria-describedby={hint} required={required} value={String(v ?? "")} onChange={(e) => set(k, e.currentTarget.value)}>
                  <option value="">—</option>
                  {s.enum.map((o) => (
                    <option value={String(o)}>{String(o)}</option>
                  ))}
                </select>
              ) : s.type === "boolean" ? (
                <input id={id} type="checkbox" aria-describedby={hint} checked={Boolean(v)} onChange={(e) => set(k, e.currentTarget.checked)} />
              ) : s.type === "array" ? (
                <input
                  id={id}
                  aria-describedby={hint}
                  placeholder="comma-separated"
                  value={Array.isArray(v) ? v.join(", ") : ""}
                  onChange={(e) => set(k, e.currentTarget.value.split(",").map((x) => x.trim()).filter(Boolean))}
                />
              ) : (
                <input
                  id={id}
                  aria-describedby={hint}
                  required={required}
                  type={(s.type === "integer" || s.type === "number" ? "number" : props.secret ? "password" : "text") as "text"}
                  autocomplete={props.secret ? "new-password" : "off"}
                  value={v === undefined ? "" : String(v)}
                  onInput={(e) => set(k, s.type === "integer" || s.type === "number" ? (e.currentTarget.value === "" ? "" : Number(e.currentTarget.value)) : e.currentTarget.value)}
                />
              )
            }
          </Field>
        );
      })}
    </>
  );
}
