// Checks a graph before it is saved or run: known node types, valid configs and expressions,
// edges between existing nodes, no cycle. Every refusal is a 422 that names the node at fault.
import { unprocessable } from "../../platform/errors";
import { checkExpressions, compile } from "./expressions";
import type { Graph } from "./model";
import type { NodeRegistry, Workspace } from "./nodes/node-type";

const refuse = (nodeId: string | null, message: string) =>
  unprocessable(nodeId ? `Node "${nodeId}": ${message}` : `Graph: ${message}`, nodeId ? { node_id: nodeId } : undefined);

/** `workspace`: whose agents, integrations and knowledge bases the nodes may name (checked when given). */
export function validateGraph(graph: Graph, registry: NodeRegistry, workspace?: Workspace): void {
  const types = new Map<string, string>();
  for (const node of graph.nodes) {
    if (types.has(node.id)) throw refuse(node.id, "the id is used twice");
    types.set(node.id, node.type);
    const type = registry.get(node.type);
    if (!type) throw refuse(node.id, `unknown node type "${node.type}"; known: ${registry.list().map((t) => t.type).join(", ")}`);
    const config = node.config ?? {};
    const schemaProblem = registry.configError(node.type, config, true);
    if (schemaProblem) throw refuse(node.id, schemaProblem);
    for (const key of type.expressionKeys ?? []) {
      const source = config[key];
      if (typeof source !== "string") continue;
      try {
        compile(source.replace(/^\s*\{\{([\s\S]*)\}\}\s*$/, "$1"));
      } catch (e) {
        throw refuse(node.id, `${key}: ${(e as Error).message}`);
      }
    }
    const exprProblem = checkExpressions(Object.fromEntries(Object.entries(config).filter(([k]) => !(type.expressionKeys ?? []).includes(k))));
    if (exprProblem) throw refuse(node.id, exprProblem);
    const checkProblem = type.check?.(config) ?? (workspace ? type.references?.(config, workspace) : undefined);
    if (checkProblem) throw refuse(node.id, checkProblem);
  }

  const incoming = new Map<string, number>();
  const outgoing = new Map<string, string[]>();
  for (const e of graph.edges ?? []) {
    if (!types.has(e.from)) throw refuse(e.to, `an edge comes from "${e.from}", which is not a node of the graph`);
    if (!types.has(e.to)) throw refuse(e.from, `an edge goes to "${e.to}", which is not a node of the graph`);
    if (e.from === e.to) throw refuse(e.from, "an edge goes from the node to itself");
    if (e.when !== undefined) {
      const branches = registry.get(types.get(e.from)!)?.branches;
      if (!branches) throw refuse(e.from, `its edge to "${e.to}" has when "${e.when}", but a ${types.get(e.from)} node chooses no branch; only condition edges carry when`);
      if (!branches.includes(e.when)) throw refuse(e.from, `its edge to "${e.to}" has when "${e.when}"; it must be one of: ${branches.join(", ")}`);
    }
    incoming.set(e.to, (incoming.get(e.to) ?? 0) + 1);
    (outgoing.get(e.from) ?? outgoing.set(e.from, []).get(e.from)!).push(e.to);
  }
  for (const node of graph.nodes) {
    if (registry.get(node.type)?.trigger && incoming.get(node.id)) throw refuse(node.id, "a trigger starts the workflow; no edge may lead into it");
  }

  // Kahn's algorithm: whatever is left unvisited lies on a cycle.
  const remaining = new Map(incoming);
  const ready = graph.nodes.filter((n) => !remaining.get(n.id)).map((n) => n.id);
  let visited = 0;
  while (ready.length) {
    const id = ready.pop()!;
    visited++;
    for (const to of outgoing.get(id) ?? []) {
      const left = remaining.get(to)! - 1;
      remaining.set(to, left);
      if (left === 0) ready.push(to);
    }
  }
  if (visited < graph.nodes.length) {
    const onCycle = graph.nodes.find((n) => (remaining.get(n.id) ?? 0) > 0)!;
    throw refuse(onCycle.id, "the node is on a cycle; a workflow graph must not loop");
  }
}

/** The trigger nodes of a graph with their kind. */
export function triggerNodes(graph: Graph, registry: NodeRegistry) {
  return graph.nodes.flatMap((n) => {
    const kind = registry.get(n.type)?.trigger;
    return kind ? [{ node: n, kind }] : [];
  });
}

/** What a secret of a node's config is shown as; a save that sends it back keeps the secret. */
export const SECRET_KEPT = "(kept)";

/** The graph as callers see it: each secret of a node's config (a webhook's) as SECRET_KEPT. */
export function hideSecrets(graph: Graph, registry: NodeRegistry): Graph {
  return mapSecrets(graph, registry, (node, key) => (node.config?.[key] === undefined ? undefined : SECRET_KEPT));
}

/**
 * The graph to save: each SECRET_KEPT replaced by the secret the node of that id has in `previous`
 * (the graph the caller read); 422 when there is none to keep.
 */
export function keepSecrets(graph: Graph, previous: Graph | undefined, registry: NodeRegistry): Graph {
  return mapSecrets(graph, registry, (node, key) => {
    const value = node.config?.[key];
    if (value !== SECRET_KEPT) return value;
    const kept = previous?.nodes.find((n) => n.id === node.id && n.type === node.type)?.config?.[key];
    if (typeof kept !== "string") throw refuse(node.id, `config.${key} is ${SECRET_KEPT}, but the node has no ${key} to keep; send the ${key} itself`);
    return kept;
  });
}

function mapSecrets(graph: Graph, registry: NodeRegistry, value: (node: Graph["nodes"][number], key: string) => unknown): Graph {
  if (!graph.nodes.some((n) => registry.get(n.type)?.secretKeys?.length)) return graph;
  return {
    ...graph,
    nodes: graph.nodes.map((node) => {
      const keys = registry.get(node.type)?.secretKeys ?? [];
      if (!keys.some((k) => node.config?.[k] !== undefined)) return node;
      const config = { ...node.config };
      for (const key of keys) {
        const v = value(node, key);
        if (v === undefined) delete config[key];
        else config[key] = v;
      }
      return { ...node, config };
    }),
  };
}
