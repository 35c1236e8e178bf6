// Small building blocks every screen uses: fields with labels, buttons, notes, badges, loaders.
import type { ButtonHTMLAttributes, ComponentChildren } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { offline } from "../api";

let fieldSeq = 0;
/** A labelled input: the label is always there (accessible name), hints and an error are tied by
 * aria-describedby. `required` marks the label with an asterisk (the input's own `required`
 * attribute tells assistive technology); `error` is shown under the input. */
export function Field(props: { label: string; hint?: string; required?: boolean; error?: string; children: (id: string, describedBy?: string) => ComponentChildren }) {
  const [id] = useState(() => `f${++fieldSeq}`);
  const hintId = props.hint ? `${id}-hint` : undefined;
  const errorId = props.error ? `${id}-error` : undefined;
  const describedBy = [errorId, hintId].filter(Boolean).join(" ") || undefined;
  return (
    <div class="field">
      <label for={id}>
        {props.label}
        {props.required && (
          <span class="required-mark" aria-hidden="true" title="required">
            {" *"}
          </span>
        )}
      </label>
      {props.children(id, describedBy)}
      {props.error && (
        <small id={errorId} class="error-text">
          {props.error}
        </small>
      )}
      {props.hint && (
        <small id={hintId} class="hint">
          {props.hint}
        </small>
      )}
    </div>
  );
}

export function Note(props: { kind?: "error" | "warn" | "ok" | "info"; children: ComponentChildren }) {
  const kind = props.kind ?? "info";
  return (
    <div class={`note note-${kind}`} role={kind === "error" ? "alert" : "status"}>
      {props.children}
    </div>
  );
}

export function ErrorNote(props: { error: unknown }) {
  if (!props.error) return null;
  return <Note kind="error">{(props.error as Error).message ?? String(props.error)}</Note>;
}

export function Badge(props: { value: string }) {
  return <span class={`badge badge-${props.value}`}>{props.value}</span>;
}

export function Spinner(props: { label?: string }) {
  return (
    <span class="spinner" role="status">
      {props.label ?? "Loading…"}
    </span>
  );
}

export function Section(props: { title: string; actions?: ComponentChildren; children: ComponentChildren }) {
  return (
    <section class="card" aria-label={props.title}>
      <header class="card-head">
        <h2>{props.title}</h2>
        {props.actions}
      </header>
      {props.children}
    </section>
  );
}

/** Answers already loaded this session, by key, so a screen opened again (or another screen
 * showing the same list) does not ask again: the rate limit (10 a minute by default) is a budget
 * for what the user does, not for re-reading what the console already knows. */
const known = new Map<string, { data: unknown; at: number }>();
const FRESH_MS = 5 * 60_000;

/** Forgets what was loaded (sign out, another organization), or the keys starting with `prefix`. */
export function forget(prefix = "") {
  for (const k of [...known.keys()]) if (k.startsWith(prefix)) known.delete(k);
}

/** Runs `load` when `deps` change, and again when the connection comes back after a failure;
 * gives data, error, loading, a reload function and update(). With a `key`, an answer loaded in the last
 * five minutes is used instead of asking again (reload() always asks). */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[], key?: string) {
  const cached = () => {
    const hit = key ? known.get(key) : undefined;
    return hit && Date.now() - hit.at < FRESH_MS ? (hit.data as T) : undefined;
  };
  const [state, setState] = useState<{ data?: T; error?: unknown; loading: boolean }>(() => {
    const data = cached();
    return data === undefined ? { loading: true } : { data, loading: false };
  });
  const seq = useRef(0);
  const run = () => {
    const n = ++seq.current;
    setState((s) => ({ ...s, loading: true }));
    load().then(
      (data) => {
        if (key) known.set(key, { data, at: Date.now() });
        if (n === seq.current) setState({ data, loading: false });
      },
      (error) => n === seq.current && setState({ error, loading: false }),
    );
  };
  const first = useRef(true);
  useEffect(() => {
    const data = cached();
    if (data !== undefined) {
      if (!first.current) setState({ data, loading: false });
    } else run();
    first.current = false;
  }, deps);
  const failed = useRef(false);
  failed.current = Boolean(state.error);
  const latestRun = useRef(run);
  latestRun.current = run;
  useEffect(() => offline.subscribe((down) => !down && failed.current && latestRun.current()), []);
  /** Changes the loaded data (and what is remembered under `key`) to match a change the console
   * itself just made, from the server's answer, instead of reading the whole list again. */
  const update = (change: (data: T) => T) =>
    setState((s) => {
      if (s.data === undefined) return s;
      const data = change(s.data);
      if (key) known.set(key, { data, at: Date.now() });
      return { ...s, data };
    });
  return { ...state, reload: run, update };
}

/** A button that runs an async action, shows it is busy and reports a failure to `onError`. */
export function Action(
  props: Omit<ButtonHTMLAttributes<HTMLButtonElement>, "onClick" | "onError"> & { run: () => Promise<unknown>; onError?: (e: unknown) => void; confirm?: string },
) {
  const { run, onError, confirm: question, children, ...rest } = props;
  const [busy, setBusy] = useState(false);
  return (
    <button
      type="button"
      {...rest}
      disabled={busy || Boolean(rest.disabled)}
      aria-busy={busy}
      onClick={async () => {
        if (question && !window.confirm(question)) return;
        setBusy(true);
        try {
          await run();
        } catch (e) {
          onError?.(e);
        } finally {
          setBusy(false);
        }
      }}
    >
      {children}
    </button>
  );
}

/**
 * Copies `text`, and says truthfully what happened. Where the browser has no clipboard API (plain
 * http on a LAN name is not a secure context) or refuses the write, the text is shown selected in
 * a read-only field so the user copies it with the keyboard.
 */
export function Copy(props: { text: string; label?: string }) {
  const [state, setState] = useState<"idle" | "copied" | "manual">("idle");
  const field = useRef<HTMLInputElement>(null);
  useEffect(() => {
    if (state !== "manual") return;
    field.current?.focus();
    field.current?.select();
  }, [state]);
  return (
    <span class="copy">
      <button
        type="button"
        onClick={async () => {
          try {
            if (!navigator.clipboard?.writeText) throw new Error("no clipboard");
            await navigator.clipboard.writeText(props.text);
            setState("copied");
            setTimeout(() => setState((s) => (s === "copied" ? "idle" : s)), 2000);
          } catch {
            setState("manual");
          }
        }}
      >
        {state === "copied" ? "Copied" : (props.label ?? "Copy")}
      </button>
      {state === "copied" && (
        <span class="sr-only" role="status">
          Copied to the clipboard
        </span>
      )}
      {state === "manual" && (
        <span class="copy-manual">
          <input ref={field} readOnly value={props.text} aria-label="Text to copy" onFocus={(e) => e.currentTarget.select()} />
          <small role="status">This browser would not copy it here: the text is selected, press Ctrl+C (⌘C on a Mac).</small>
        </span>
      )}
    </span>
  );
}

export const when = (iso: string | null | undefined) => (iso ? new Date(iso).toLocaleString() : "—");
export const bytes = (n: number) => (n < 1024 ? `${n} B` : n < 1048576 ? `${(n / 1024).toFixed(1)} KB` : `${(n / 1048576).toFixed(1)} MB`);
export const json = (v: unknown) => (typeof v === "string" ? v : JSON.stringify(v, null, 2));
