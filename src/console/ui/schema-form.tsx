// A form for the flat JSON Schemas Hearth publishes (catalog settings, integration configs):
// strings, numbers, booleans, enums and string lists, each with its label and description;
// objects and lists of objects as JSON text, parsed as typed.
import { Fragment, type ComponentChildren } from "preact";
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
  /** false: the object holds only its properties (JSON Schema's default allows others). */
  additionalProperties?: boolean | Schema;
}

/** What a JSON field holds while its text does not parse: the form refuses to send it. */
export class InvalidJson {
  constructor(
    readonly field: string,
    readonly message: string,
  ) {}
}

/** The first field of `value` whose JSON text does not parse, as a sentence, or null. */
export function invalidJson(value: Record<string, unknown>): string | null {
  const bad = Object.values(value).find((v) => v instanceof InvalidJson) as InvalidJson | undefined;
  return bad ? `${bad.field} is not valid JSON: ${bad.message}` : null;
}

/** Objects, and lists of anything but plain strings or numbers, are edited as JSON. */
const asJson = (s: Schema) => s.type === "object" || (s.type === "array" && Boolean(s.items) && s.items!.type !== "string" && s.items!.type !== "number" && s.items!.type !== "integer");

const label = (name: string) => name.replace(/_/g, " ").replace(/\burl\b/g, "URL").replace(/^./, (c) => c.toUpperCase());

/** `secret`: credentials, write-only and optional as a whole (without them an integration is a
 * template), so none of their fields is required by the form; the server checks what is given.
 * `errors`: a message to show by a field (the server named it), by property name. `custom`: a
 * control of the caller's for a property (a picker instead of a text field for ids). */
export function SchemaForm(props: {
  schema: Schema | undefined;
  value: Record<string, unknown>;
  onChange: (v: Record<string, unknown>) => void;
  secret?: boolean;
  errors?: Record<string, string>;
  custom?: Record<string, (value: unknown, set: (v: unknown) => void, schema: Schema) => ComponentChildren>;
}) {
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
        const inSchema = props.schema?.required?.includes(k);
        const required = inSchema && !props.secret;
        const text = `${label(k)}${inSchema ? "" : " (optional)"}`;
        const v = props.value[k];
        const error = props.errors?.[k];
        const own = props.custom?.[k];
        if (own) return <Fragment key={k}>{own(v, (x) => set(k, x), s)}</Fragment>;
        return (
          <Field key={k} label={text} hint={s.description} required={required} error={error}>
            {(id, hint) =>
              s.enum ? (
                <select id={id} aria-describedby={hint} aria-invalid={error ? true : undefined} required={required} value={String(v ?? "")} onChange={(e) => set(k, e.currentTarget.value)}>
                  <option value="">—</option>
                  {s.enum.map((o) => (
                    <option value={String(o)}>{String(o)}</option>
                  ))}
                </select>
              ) : s.type === "boolean" ? (
                <input id={id} type="checkbox" aria-describedby={hint} checked={Boolean(v)} onChange={(e) => set(k, e.currentTarget.checked)} />
              ) : asJson(s) ? (
                <>
                  <textarea
                    id={id}
                    class="code"
                    rows={s.type === "array" ? 6 : 4}
                    aria-describedby={hint}
                    aria-invalid={v instanceof InvalidJson || Boolean(error)}
                    required={required}
                    autocomplete="off"
                    placeholder={s.type === "array" ? '[{ "…": "…" }]' : '{ "…": "…" }'}
                    onInput={(e) => {
                      const raw = e.currentTarget.value;
                      if (!raw.trim()) return set(k, undefined);
                      try {
                        const parsed = JSON.parse(raw);
                        const ok = s.type === "array" ? Array.isArray(parsed) : parsed !== null && typeof parsed === "object" && !Array.isArray(parsed);
                        set(k, ok ? parsed : new InvalidJson(label(k), s.type === "array" ? "a JSON list [ … ] is expected" : "a JSON object { … } is expected"));
                      } catch (err) {
                        set(k, new InvalidJson(label(k), (err as Error).message));
                      }
                    }}
                  />
                  {v instanceof InvalidJson && <small class="error-text">{v.message}</small>}
                </>
              ) : s.type === "array" ? (
                <input
                  id={id}
                  aria-describedby={hint}
                  aria-invalid={error ? true : undefined}
                  placeholder="comma-separated"
                  value={Array.isArray(v) ? v.join(", ") : ""}
                  onChange={(e) => set(k, e.currentTarget.value.split(",").map((x) => x.trim()).filter(Boolean))}
                />
              ) : (
                <input
                  id={id}
                  aria-describedby={hint}
                  aria-invalid={error ? true : undefined}
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
