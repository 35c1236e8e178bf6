// An ONNX graph on the wire, as the model edits read and rewrite it: its nodes parsed just enough
// to follow tensors from node to node, new nodes and initializers encoded, and nodes nobody reads
// any more dropped. Field numbers and enums are onnx.proto's.
import { fields, integer, integers, join, message, strings, text, type Field, type Pieces } from "./onnx-wire";

export const MODEL = { graph: 7, opsetImport: 8 };
export const OPSET = { domain: 1, version: 2 };
export const GRAPH = { node: 1, initializer: 5, output: 12 };
export const NODE = { input: 1, output: 2, name: 3, opType: 4, attribute: 5, domain: 7 };
const ATTRIBUTE = { name: 1, f: 2, i: 3, g: 6, type: 20 };
export const TENSOR = { dims: 1, dataType: 2, name: 8, rawData: 9 };
export const VALUE_INFO_NAME = 1;
/** AttributeProto.AttributeType and TensorProto.DataType values. */
const ATTRIBUTE_FLOAT = 1;
const ATTRIBUTE_INT = 2;
export const FLOAT = 1;
export const UINT8 = 2;
const INT64 = 7;

export const CONTRIB = "com.microsoft";

export interface Node {
  field: Field;
  body: Uint8Array;
  op: string;
  name: string;
  inputs: string[];
  outputs: string[];
}

export const parseNode = (field: Field & { body: Uint8Array }): Node => ({
  field,
  body: field.body,
  op: strings(field.body, NODE.opType)[0] ?? "",
  name: strings(field.body, NODE.name)[0] ?? "",
  inputs: strings(field.body, NODE.input),
  outputs: strings(field.body, NODE.output),
});

export const nodesOf = (graph: Field[]) => graph.flatMap((f) => (f.no === GRAPH.node && f.body ? [parseNode(f as Field & { body: Uint8Array })] : []));

/** The integer attributes of a node, by name. */
export function intAttributes(node: Uint8Array): Map<string, number> {
  const out = new Map<string, number>();
  for (const a of fields(node)) if (a.no === NODE.attribute && a.body) for (const i of integers(a.body, ATTRIBUTE.i)) out.set(strings(a.body, ATTRIBUTE.name)[0] ?? "", i);
  return out;
}

export const hasAttributes = (node: Uint8Array) => fields(node).some((f) => f.no === NODE.attribute);

/** The graphs held in a node's attributes (an If's branches, a Loop's body). */
export const subgraphs = (node: Uint8Array) =>
  fields(node).flatMap((a) => (a.no === NODE.attribute && a.body ? fields(a.body).flatMap((g) => (g.no === ATTRIBUTE.g && g.body ? [g.body] : [])) : []));

/** A node with each subgraph passed through `edit`. */
export const withSubgraphs = (node: Uint8Array, edit: (graph: Field[]) => Pieces): Pieces =>
  fields(node).flatMap((a) =>
    a.no === NODE.attribute && a.body ? message(NODE.attribute, fields(a.body).flatMap((g) => (g.no === ATTRIBUTE.g && g.body ? message(ATTRIBUTE.g, edit(fields(g.body))) : [g.raw]))) : [a.raw],
  );

/** Every name a node reads, its subgraphs' nodes included. */
export const readsOf = (node: Uint8Array): string[] => [...strings(node, NODE.input), ...subgraphs(node).flatMap((g) => nodesOf(fields(g)).flatMap((n) => readsOf(n.body)))];

/** Data type and shape of each initializer, by name. */
export function initializersOf(graph: Field[]): Map<string, { type: number; dims: number[] }> {
  const out = new Map<string, { type: number; dims: number[] }>();
  for (const f of graph) if (f.no === GRAPH.initializer && f.body) out.set(strings(f.body, TENSOR.name)[0] ?? "", { type: integers(f.body, TENSOR.dataType)[0] ?? 0, dims: integers(f.body, TENSOR.dims) });
  return out;
}

export function newNode(op: string, inputs: string[], outputs: string[], opts: { name: string; domain?: string; ints?: Record<string, number>; floats?: Record<string, number> }): Pieces {
  const float = (v: number) => new Uint8Array(Float32Array.of(v).buffer);
  return message(GRAPH.node, [
    ...inputs.flatMap((i) => text(NODE.input, i)),
    ...outputs.flatMap((o) => text(NODE.output, o)),
    ...text(NODE.name, opts.name),
    ...text(NODE.opType, op),
    ...Object.entries(opts.ints ?? {}).flatMap(([k, v]) => message(NODE.attribute, [...text(ATTRIBUTE.name, k), ...integer(ATTRIBUTE.i, v), ...integer(ATTRIBUTE.type, ATTRIBUTE_INT)])),
    ...Object.entries(opts.floats ?? {}).flatMap(([k, v]) =>
      message(NODE.attribute, [...text(ATTRIBUTE.name, k), Uint8Array.of(ATTRIBUTE.f * 8 + 5), float(v), ...integer(ATTRIBUTE.type, ATTRIBUTE_FLOAT)]),
    ),
    ...(opts.domain ? text(NODE.domain, opts.domain) : []),
  ]);
}

export const int64Initializer = (name: string, values: number[]): Pieces =>
  message(GRAPH.initializer, [
    ...integer(TENSOR.dims, values.length),
    ...integer(TENSOR.dataType, INT64),
    ...text(TENSOR.name, name),
    ...message(TENSOR.rawData, [new Uint8Array(BigInt64Array.from(values, BigInt).buffer)]),
  ]);

/** A graph's fields with some nodes replaced (by new ones, or by nothing), then every node whose outputs nobody reads dropped too. */
export function rewriteNodes(graph: Field[], instead: Map<Field, Pieces>, rest: (node: Node) => Pieces = (n) => [n.field.raw]): Pieces {
  const entries = graph.map((f) => {
    const replaced = instead.get(f);
    const node = f.no === GRAPH.node && f.body ? parseNode(f as Field & { body: Uint8Array }) : undefined;
    if (replaced) {
      // A replacement is read back to learn its names: small, and new nodes are few.
      const made = nodesOf(fields(join(replaced)));
      return { pieces: replaced, outputs: made.flatMap((n) => n.outputs), reads: made.flatMap((n) => readsOf(n.body)) };
    }
    if (!node) return { pieces: [f.raw], outputs: undefined, reads: [] };
    return { node, outputs: node.outputs, reads: readsOf(node.body) };
  });
  const outputs = graph.flatMap((f) => (f.no === GRAPH.output && f.body ? strings(f.body, VALUE_INFO_NAME) : []));
  const live = new Set(entries);
  for (let changed = true; changed; ) {
    changed = false;
    const read = new Set([...outputs, ...[...live].flatMap((e) => e.reads)]);
    for (const e of live) {
      if (e.outputs && e.outputs.length > 0 && !e.outputs.some((o) => o !== "" && read.has(o))) {
        live.delete(e);
        changed = true;
      }
    }
  }
  return entries.flatMap((e) => (!live.has(e) ? [] : e.node ? rest(e.node) : e.pieces!));
}

/** The model with its graph's fields passed through `edit`, and the contrib op set declared if `usesContrib()` says so once the edit is done. */
export function editGraph(model: Uint8Array, edit: (graph: Field[]) => Pieces, usesContrib: () => boolean = () => false): Uint8Array {
  const parts = fields(model).flatMap((f) => (f.no === MODEL.graph && f.body ? message(MODEL.graph, edit(fields(f.body))) : [f.raw]));
  const declared = fields(model).some((f) => f.no === MODEL.opsetImport && f.body && strings(f.body, OPSET.domain)[0] === CONTRIB);
  const opset = usesContrib() && !declared ? message(MODEL.opsetImport, [...text(OPSET.domain, CONTRIB), ...integer(OPSET.version, 1)]) : [];
  return join([...parts, ...opset]);
}
