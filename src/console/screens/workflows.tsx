// Workflows: the list, a new workflow from a JSON graph, versions with the graph as a readable
// node list (activate an older one to roll back), runs with input and the recent executions.
import { useState } from "preact/hooks";
import { get, post, put, qs } from "../api";
import { workspace } from "../state";
import { Badge, ErrorNote, Field, Note, Section, Spinner, json, useLoad, when } from "../ui/kit";
import { Execution } from "./workflow-run";
import { Triggers } from "./triggers";

interface GraphNode {
  id: string;
  type: string;
  name?: string;
  config?: Record<string, unknown>;
}
interface Graph {
  nodes: GraphNode[];
  edges?: { from: string; to: string; when?: string }[];
}
interface Workflow {
  id: string;
  name: string;
  description: string | null;
  active_version_id: string | null;
  latest_version: number;
  agent_id?: string | null;
}
interface Version {
  id: string;
  version: number;
  graph: Graph;
  created_at: string;
}

const EXAMPLE: Graph = {
  nodes: [
    { id: "start", type: "trigger.manual" },
    { id: "ask", type: "approval", config: { message: "Publish {{ input.title }}?" } },
    { id: "done", type: "output", config: { value: "{{ nodes.ask.output }}" } },
  ],
  edges: [
    { from: "start", to: "ask" },
    { from: "ask", to: "done" },
  ],
};

/** The graph as steps: each node with its type, its settings and where it leads. */
function GraphView(props: { graph: Graph }) {
  const next = (id: string) => (props.graph.edges ?? []).filter((e) => e.from === id);
  return (
    <ol class="graph" aria-label="Nodes">
      {props.graph.nodes.map((n) => (
        <li key={n.id}>
          <strong>{n.name ?? n.id}</strong> <code>{n.type}</code>
          {n.config && Object.keys(n.config).length > 0 && <pre>{json(n.config)}</pre>}
          {next(n.id).length > 0 && <div class="muted">→ {next(n.id).map((e) => `${e.to}${e.when ? ` (when ${e.when})` : ""}`).join(", ")}</div>}
        </li>
      ))}
    </ol>
  );
}

function NewWorkflow(props: { onCreated: (id: string) => void }) {
  const [name, setName] = useState("");
  const [graph, setGraph] = useState(JSON.stringify(EXAMPLE, null, 2));
  const [error, setError] = useState<unknown>(null);
  return (
    <form
      class="grid-form"
      onSubmit={async (e) => {
        e.preventDefault();
        setError(null);
        try {
          const parsed = JSON.parse(graph);
          props.onCreated((await post<Workflow>("/api/workflow-base", { product_id: workspace.value!.id, name, graph: parsed })).id);
          setName("");
        } catch (err) {
          setError(err instanceof SyntaxError ? new Error(`The graph is not valid JSON: ${err.message}`) : err);
        }
      }}
    >
      <Field label="Workflow name">{(id) => <input id={id} required maxLength={200} value={name} onInput={(e) => setName(e.currentTarget.value)} />}</Field>
      <Field label="Graph (JSON)" hint="Nodes and edges; see GET /api/nodes/types for the node types.">
        {(id, hint) => <textarea id={id} class="code" rows={10} aria-describedby={hint} value={graph} onInput={(e) => setGraph(e.currentTarget.value)} />}
      </Field>
      <button class="primary" type="submit">
        Create workflow
      </button>
      <ErrorNote error={error} />
    </form>
  );
}

function Detail(props: { workflow: Workflow; onChange: () => void }) {
  const w = props.workflow;
  const versions = useLoad(() => get<Version[]>(`/api/workflow-base/${w.id}/versions`), [w.id, w.active_version_id]);
  const runs = useLoad(() => get<any[]>(`/api/workflow/executions${qs({ workflow_id: w.id, product_id: workspace.value!.id, pageSize: 10 })}`), [w.id]);
  const [shown, setShown] = useState<string | null>(null);
  const [input, setInput] = useState('{\n  "title": "Release notes"\n}');
  const [execution, setExecution] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const active = versions.data?.find((v) => v.id === w.active_version_id);
  const version = versions.data?.find((v) => v.id === shown) ?? active;
  return (
    <>
      <Section title={`Run ${w.name}`}>
        <form
          onSubmit={async (e) => {
            e.preventDefault();
            setError(null);
            try {
              const started = await post<{ id: string }>("/api/workflow/execute", { workflow_id: w.id, input: input.trim() ? JSON.parse(input) : {} });
              setExecution(started.id);
              runs.reload();
            } catch (err) {
              setError(err instanceof SyntaxError ? new Error(`The input is not valid JSON: ${err.message}`) : err);
            }
          }}
        >
          <Field label="Input (JSON object)">{(id) => <textarea id={id} class="code" rows={4} value={input} onInput={(e) => setInput(e.currentTarget.value)} />}</Field>
          <button class="primary" type="submit">
            Run
          </button>
        </form>
        <ErrorNote error={error} />
        {execution && <Execution key={execution} id={execution} order={active?.graph.nodes.map((n) => n.id)} onEnd={runs.reload} />}
      </Section>
      <Section title="Recent executions">
        <ErrorNote error={runs.error} />
        {runs.data?.length ? (
          <ul class="list">
            {runs.data.map((r) => (
              <li key={r.id}>
                <button type="button" class="link" onClick={() => setExecution(r.id)}>
                  {when(r.created_at)}
                </button>
                <Badge value={r.status} />
                <span class="muted">{r.trigger?.type}</span>
              </li>
            ))}
          </ul>
        ) : (
          !runs.loading && !runs.error && <p class="muted">None yet.</p>
        )}
      </Section>
      <Section title="Versions">
        {versions.loading && !versions.data ? <Spinner /> : <ErrorNote error={versions.error} />}
        <ul class="list">
          {versions.data?.map((v) => (
            <li key={v.id}>
              <button type="button" class="link" aria-pressed={v.id === version?.id} onClick={() => setShown(v.id)}>
                Version {v.version}
              </button>
              <span class="muted">{when(v.created_at)}</span>
              {v.id === w.active_version_id ? (
                <Badge value="active" />
              ) : (
                <button
                  type="button"
                  onClick={async () => {
                    try {
                      await put(`/api/workflow-base/${w.id}`, { active_version_id: v.id });
                      props.onChange();
                    } catch (err) {
                      setError(err);
                    }
                  }}
                >
                  Activate
                </button>
              )}
            </li>
          ))}
        </ul>
        {version && (
          <>
            <h3>Graph of version {version.version}</h3>
            <GraphView graph={version.graph} />
          </>
        )}
      </Section>
    </>
  );
}

export function Workflows() {
  const ws = workspace.value!;
  const list = useLoad(() => get<Workflow[]>(`/api/workflow-base${qs({ product_id: ws.id, pageSize: 100 })}`), [ws.id], `workflows:${ws.id}`);
  const [chosen, setChosen] = useState<string | null>(null);
  const [creating, setCreating] = useState(false);
  const [created, setCreated] = useState(0);
  const workflow = list.data?.find((w) => w.id === chosen);
  return (
    <div class="split wide-left">
      <div>
        <Section
          title="Workflows"
          actions={
            <button type="button" aria-expanded={creating} onClick={() => setCreating(!creating)}>
              {creating ? "Cancel" : "New workflow"}
            </button>
          }
        >
          {creating && (
            <NewWorkflow
              onCreated={(id) => {
                setCreating(false);
                setChosen(id);
                list.reload();
                setCreated((n) => n + 1);
              }}
            />
          )}
          <ErrorNote error={list.error} />
          {list.data?.length ? (
            <ul class="list">
              {list.data.map((w) => (
                <li key={w.id} class={w.id === chosen ? "current" : ""}>
                  <button type="button" class="link" aria-pressed={w.id === chosen} onClick={() => setChosen(w.id)}>
                    {w.name}
                  </button>
                  <span class="muted">v{w.latest_version}{w.agent_id ? " · agent" : ""}</span>
                </li>
              ))}
            </ul>
          ) : (
            !list.loading && !list.error && <Note>No workflows yet.</Note>
          )}
        </Section>
        <Triggers changed={created} names={Object.fromEntries((list.data ?? []).map((w) => [w.id, w.name]))} />
      </div>
      <div>{workflow ? <Detail key={workflow.id} workflow={workflow} onChange={list.reload} /> : <Note>Choose a workflow to see its versions and run it.</Note>}</div>
    </div>
  );
}
