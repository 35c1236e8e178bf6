// Two edits of a serialized ONNX model, made on its protobuf wire format before ONNX Runtime
// sees it (every byte not edited is copied as it is): graph outputs nobody reads left out, and
// constant weight transforms that both branches of an If repeat moved in front of it, where
// ONNX Runtime can fold them once at load instead of running them at every call.

/** Field numbers from onnx.proto. */
const MODEL_GRAPH = 7;
const GRAPH_NODE = 1;
const GRAPH_INITIALIZER = 5;
const GRAPH_OUTPUT = 12;
const NODE_INPUT = 1;
const NODE_OUTPUT = 2;
const NODE_OP_TYPE = 4;
const NODE_ATTRIBUTE = 5;
const ATTRIBUTE_GRAPH = 6;
const TENSOR_NAME = 8;
const VALUE_INFO_NAME = 1;
const LENGTH_DELIMITED = 2;

interface Field {
  no: number;
  /** The whole field, key included. */
  raw: Uint8Array;
  /** The payload of a length-delimited field. */
  body?: Uint8Array;
}

function readVarint(b: Uint8Array, at: number): { value: number; at: number } {
  let value = 0;
  for (let scale = 1; ; scale *= 128) {
    if (at >= b.length) throw new Error("ONNX model ends inside a varint");
    const byte = b[at++]!;
    value += (byte & 0x7f) * scale;
    if (byte < 0x80) return { value, at };
  }
}

function varint(value: number): number[] {
  const out: number[] = [];
  for (; value >= 0x80; value = Math.floor(value / 128)) out.push((value % 128) | 0x80);
  out.push(value);
  return out;
}

function fields(b: Uint8Array): Field[] {
  const out: Field[] = [];
  for (let at = 0; at < b.length; ) {
    const start = at;
    const key = readVarint(b, at);
    at = key.at;
    let body: Uint8Array | undefined;
    const wire = key.value & 7;
    if (wire === 0) at = readVarint(b, at).at;
    else if (wire === 1) at += 8;
    else if (wire === 5) at += 4;
    else if (wire === LENGTH_DELIMITED) {
      const length = readVarint(b, at);
      at = length.at + length.value;
      body = b.subarray(length.at, at);
    } else throw new Error(`ONNX model has an unknown protobuf wire type ${wire}`);
    if (at > b.length) throw new Error("ONNX model field runs past its end");
    out.push({ no: Math.floor(key.value / 8), raw: b.subarray(start, at), body });
  }
  return out;
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** A length-delimited field with a new payload. */
const field = (no: number, body: Uint8Array) => concat([Uint8Array.from([...varint(no * 8 + LENGTH_DELIMITED), ...varint(body.length)]), body]);

const decoder = new TextDecoder();
const strings = (msg: Uint8Array, no: number) => fields(msg).flatMap((f) => (f.no === no && f.body ? [decoder.decode(f.body)] : []));

/** The model with its graph's fields passed through `edit`. */
function editGraph(model: Uint8Array, edit: (graph: Field[]) => Uint8Array[]): Uint8Array {
  return concat(fields(model).map((f) => (f.no === MODEL_GRAPH && f.body ? field(MODEL_GRAPH, concat(edit(fields(f.body)))) : f.raw)));
}

/** The model without the graph outputs `drop` picks: the nodes that compute them stay, and their tensors become intermediates ONNX Runtime frees once read. */
export function withoutOutputs(model: Uint8Array, drop: (name: string) => boolean): Uint8Array {
  return editGraph(model, (graph) => graph.filter((f) => !(f.no === GRAPH_OUTPUT && f.body && drop(strings(f.body, VALUE_INFO_NAME)[0] ?? ""))).map((f) => f.raw));
}

/**
 * The model with the nodes of `ops` that an If branch runs on the outer graph's initializers alone
 * (and on each other) moved in front of the If, once, however many branches repeat them: inside
 * a branch ONNX Runtime folds them into a constant of each branch, or runs them at every call.
 */
export function withBranchConstantsHoisted(model: Uint8Array, ops: ReadonlySet<string>): Uint8Array {
  return editGraph(model, (graph) => {
    const constant = new Set(graph.flatMap((f) => (f.no === GRAPH_INITIALIZER && f.body ? strings(f.body, TENSOR_NAME) : [])));
    const hoisted = new Map<string, { raw: Uint8Array; reads: string }>();
    const hoistable = (node: Uint8Array) =>
      ops.has(strings(node, NODE_OP_TYPE)[0] ?? "") && strings(node, NODE_INPUT).every((i) => i === "" || constant.has(i) || hoisted.has(i));

    const editBranch = (branch: Uint8Array): Uint8Array => {
      let nodes = fields(branch);
      for (;;) {
        const moving = nodes.filter((f) => f.no === GRAPH_NODE && f.body && hoistable(f.body));
        if (moving.length === 0) return concat(nodes.map((f) => f.raw));
        for (const f of moving) {
          const attributes = fields(f.body!).filter((a) => a.no === NODE_ATTRIBUTE).map((a) => Buffer.from(a.raw).toString("base64"));
          const node = { raw: f.raw, reads: `${strings(f.body!, NODE_OP_TYPE)[0]}(${strings(f.body!, NODE_INPUT).join()}) ${attributes.join()}` };
          for (const out of strings(f.body!, NODE_OUTPUT)) {
            const before = hoisted.get(out);
            if (before && before.reads !== node.reads) throw new Error(`ONNX model: two branches make ${out} differently`);
            if (!before) hoisted.set(out, node);
          }
        }
        nodes = nodes.filter((f) => !moving.includes(f));
      }
    };
    const editIf = (node: Uint8Array): Uint8Array =>
      concat(
        fields(node).map((a) =>
          a.no === NODE_ATTRIBUTE && a.body ? field(NODE_ATTRIBUTE, concat(fields(a.body).map((g) => (g.no === ATTRIBUTE_GRAPH && g.body ? field(ATTRIBUTE_GRAPH, editBranch(g.body)) : g.raw)))) : a.raw,
        ),
      );

    const rest = graph.map((f) => (f.no === GRAPH_NODE && f.body && strings(f.body, NODE_OP_TYPE)[0] === "If" ? field(GRAPH_NODE, editIf(f.body)) : f.raw));
    // Nodes listed in order of need: each hoisted node comes after the ones it reads, all before the If.
    return [...new Set([...hoisted.values()].map((n) => n.raw)), ...rest];
  });
}
