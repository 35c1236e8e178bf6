// Edits of a serialized ONNX model, made on its protobuf wire format before ONNX Runtime sees it
// (every field not edited is passed on as it is): graph outputs nobody reads left out, attention
// written out as MatMul-Softmax-MatMul made one fused attention node, and MatMuls by a whole 8-bit
// matrix dequantized at every call made MatMuls on the 8-bit matrix itself.
import {
  CONTRIB,
  editGraph,
  FLOAT,
  GRAPH,
  hasAttributes,
  initializersOf,
  int64Initializer,
  intAttributes,
  newNode,
  nodesOf,
  rewriteNodes,
  subgraphs,
  UINT8,
  VALUE_INFO_NAME,
  withSubgraphs,
  type Node,
} from "./onnx-graph";
import { message, strings, type Field, type Pieces } from "./onnx-wire";

/** The model without the graph outputs `drop` picks: the nodes that compute them stay, and their tensors become intermediates ONNX Runtime frees once read. */
export function withoutOutputs(model: Uint8Array, drop: (name: string) => boolean): Uint8Array {
  return editGraph(model, (graph) => graph.filter((f) => !(f.no === GRAPH.output && f.body && drop(strings(f.body, VALUE_INFO_NAME)[0] ?? ""))).map((f) => f.raw));
}

/** Follows tensors through the graph: back from a tensor through its producers, or forward through its only reader. */
function tracer(nodes: Node[]) {
  const producer = new Map(nodes.flatMap((n) => n.outputs.map((o) => [o, n] as const)));
  const readers = new Map<string, Node[]>();
  for (const n of nodes) for (const i of n.inputs) readers.set(i, [...(readers.get(i) ?? []), n]);
  return {
    producer: (name: string | undefined) => producer.get(name ?? ""),
    /** The tensor `ops` (nearest first) were applied to, to make `name`. */
    back(name: string | undefined, ops: string[]): string | undefined {
      for (const op of ops) {
        const n = producer.get(name ?? "");
        if (n?.op !== op) return undefined;
        name = n.inputs[0];
      }
      return name;
    },
    /** The node `ops` end with, each the only reader of the one before, starting from `name`. */
    forward(name: string, ops: string[]): Node | undefined {
      let last: Node | undefined;
      for (const op of ops) {
        const next = readers.get(name);
        if (next?.length !== 1 || next[0]!.op !== op || next[0]!.inputs[0] !== name) return undefined;
        last = next[0]!;
        name = last.outputs[0]!;
      }
      return last;
    },
  };
}

/**
 * The model with each self-attention exported as Reshape/Transpose into heads, MatMul, Softmax,
 * MatMul and back (queries already scaled) made ONNX Runtime's MultiHeadAttention on the [batch,
 * sequence, hidden] queries, keys and values. Its CPU kernel streams over the keys (flash
 * attention), where the exported graph holds two heads × sequence² matrices of scores at once:
 * 108 MB per Whisper encoder layer for a 30 s window.
 */
export function withFusedAttention(model: Uint8Array, heads: number): Uint8Array {
  let fused = 0;
  const edit = (graph: Field[]): Pieces => {
    const nodes = nodesOf(graph);
    const t = tracer(nodes);
    const instead = new Map<Field, Pieces>();
    for (const softmax of nodes) {
      const axis = intAttributes(softmax.body).get("axis");
      if (softmax.op !== "Softmax" || !(axis === 2 || (axis ?? 0) >= 2 ** 63)) continue; // the last axis of [batch × heads, queries, keys]
      const scores = t.producer(softmax.inputs[0]);
      if (scores?.op !== "MatMul") continue;
      const weighted = t.forward(softmax.outputs[0]!, ["Reshape", "Reshape", "MatMul"]) ?? t.forward(softmax.outputs[0]!, ["MatMul"]);
      const merged = weighted && t.forward(weighted.outputs[0]!, ["Reshape", "Transpose", "Reshape"]);
      const query = t.back(scores.inputs[0], ["Reshape", "Transpose", "Reshape"]);
      const key = t.back(scores.inputs[1], ["Transpose", "Reshape", "Transpose", "Reshape"]);
      const value = weighted && t.back(weighted.inputs[1], ["Reshape", "Transpose", "Reshape"]);
      if (!merged || !query || !key || !value) continue;
      instead.set(merged.field, newNode("MultiHeadAttention", [query, key, value], merged.outputs, { name: `${softmax.name}_fused`, domain: CONTRIB, ints: { num_heads: heads }, floats: { scale: 1 } }));
      fused++;
    }
    // The per-head reshapes, the scores and their shapes' arithmetic are read by nothing now.
    return rewriteNodes(graph, instead);
  };
  return editGraph(model, edit, () => fused > 0);
}

/**
 * The model with every `MatMul(x, DequantizeLinear(Transpose(W), scale, zero point))`, W an 8-bit
 * [N, K] initializer with one scale and zero point, made `MatMulNBits(x, W)` (ONNX Runtime's
 * contrib op) on W cut into blocks of `blockSize` along K, each with W's scale and zero point:
 * the same weights, held once as bytes, where the MatMul dequantized all of W to floats at every
 * call (or held the floats, 4× the bytes, once folded). `accuracyLevel` 4 quantizes x to 8 bits
 * per block as well, which MLAS computes fastest; 0 would keep x in floats on a slow path.
 */
export function withQuantizedMatMuls(model: Uint8Array, opts: { blockSize: number; accuracyLevel: number }): Uint8Array {
  let replaced = 0;
  const edit = (graph: Field[]): Pieces => {
    const initializers = initializersOf(graph);
    const scalar = (name: string | undefined, type: number) => initializers.get(name ?? "")?.type === type && initializers.get(name ?? "")?.dims.length === 0;
    /** Per weight, scale and zero point: the names of its blocks and the main-graph fields that make them. */
    const blocked = new Map<string, { names: [string, string, string]; fields: Pieces }>();

    const blocksOf = (weight: string, scale: string, zeroPoint: string, [n, k]: [number, number]) => {
      const key = JSON.stringify([weight, scale, zeroPoint]);
      let found = blocked.get(key);
      if (!found) {
        const p = `${weight}_nbits${blocked.size}`;
        const count = (n * k) / opts.blockSize;
        found = {
          names: [`${p}_blocks`, `${p}_scales`, `${p}_zero_points`],
          // Made by nodes ONNX Runtime folds at load, so the file carries W's bytes once.
          fields: [
            ...int64Initializer(`${p}_shape`, [n, k / opts.blockSize, opts.blockSize]),
            ...int64Initializer(`${p}_count`, [count]),
            ...newNode("Reshape", [weight, `${p}_shape`], [`${p}_blocks`], { name: `${p}_Reshape` }),
            ...newNode("Expand", [scale, `${p}_count`], [`${p}_scales`], { name: `${p}_ExpandScale` }),
            ...newNode("Expand", [zeroPoint, `${p}_count`], [`${p}_zero_points`], { name: `${p}_ExpandZeroPoint` }),
          ],
        };
        blocked.set(key, found);
      }
      return found.names;
    };

    const rewrite = (g: Field[]): Pieces => {
      const nodes = nodesOf(g);
      const t = tracer(nodes);
      const instead = new Map<Field, Pieces>();
      for (const matmul of nodes) {
        if (matmul.op !== "MatMul") continue;
        const dequantize = t.producer(matmul.inputs[1]);
        if (dequantize?.op !== "DequantizeLinear" || !scalar(dequantize.inputs[1], FLOAT) || !scalar(dequantize.inputs[2], UINT8)) continue;
        const transpose = t.producer(dequantize.inputs[0]);
        if (transpose?.op !== "Transpose" || hasAttributes(transpose.body)) continue; // no perm: the two axes swapped
        const weight = initializers.get(transpose.inputs[0] ?? "");
        if (weight?.type !== UINT8 || weight.dims.length !== 2 || weight.dims[1]! % opts.blockSize !== 0) continue;

        const [n, k] = weight.dims as [number, number];
        const [blocks, scales, zeroPoints] = blocksOf(transpose.inputs[0]!, dequantize.inputs[1]!, dequantize.inputs[2]!, [n, k]);
        const ints = { K: k, N: n, bits: 8, block_size: opts.blockSize, accuracy_level: opts.accuracyLevel };
        instead.set(matmul.field, newNode("MatMulNBits", [matmul.inputs[0]!, blocks, scales, zeroPoints], matmul.outputs, { name: `${matmul.name}_nbits`, domain: CONTRIB, ints }));
        replaced++;
      }
      // The dequantized matrix and its transpose go with the MatMul, unless something else reads them.
      return rewriteNodes(g, instead, (node) => (subgraphs(node.body).length ? message(GRAPH.node, withSubgraphs(node.body, rewrite)) : [node.field.raw]));
    };

    return [...rewrite(graph), ...[...blocked.values()].flatMap((b) => b.fields)];
  };
  return editGraph(model, edit, () => replaced > 0);
}
