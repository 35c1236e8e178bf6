// The ONNX edits that cut Whisper's memory, on the real whisper-tiny files: the edited models load
// in ONNX Runtime and compute what the files as shipped compute (up to the rounding of the 8-bit
// activations both quantize with), with the memory-hungry parts gone.
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { InferenceSession, Tensor } from "onnxruntime-node";
import { withFusedAttention, withoutOutputs, withQuantizedMatMuls } from "../../../src/platform/ml/onnx-edit";
import { MODEL, nodesOf, subgraphs } from "../../../src/platform/ml/onnx-graph";
import { fields } from "../../../src/platform/ml/onnx-wire";
import { TEST_MODELS_DIR } from "../../support/models";

const DIR = join(TEST_MODELS_DIR, "Xenova/whisper-tiny/onnx");
const file = (name: string) => new Uint8Array(readFileSync(join(DIR, name)));
const ATTENTIONS = (name: string) => name.includes("attentions");

/** Deterministic values in [-0.5, 0.5). */
const noise = (n: number, seed: number) => Float32Array.from({ length: n }, (_, i) => (((i * 7919 + seed * 104729) % 10007) / 10007) - 0.5);

const maxDiff = (a: Float32Array, b: Float32Array) => a.reduce((m, x, i) => Math.max(m, Math.abs(x - b[i]!)), 0);

/** Op types of the main graph's nodes and, one level down, of its subgraphs' (an If's branches). */
function ops(model: Uint8Array): string[] {
  const graph = fields(fields(model).find((f) => f.no === MODEL.graph)!.body!);
  return nodesOf(graph).flatMap((n) => [n.op, ...subgraphs(n.body).flatMap((g) => nodesOf(fields(g)).map((b) => `branch:${b.op}`))]);
}

const argmax = (v: Float32Array, from: number, to: number) => {
  let best = from;
  for (let i = from; i < to; i++) if (v[i]! > v[best]!) best = i;
  return best - from;
};

describe("ONNX edits for Whisper", () => {
  test(
    "the encoder with fused attention and no attention outputs returns the same hidden state, up to 8-bit rounding",
    async () => {
      const shipped = file("encoder_model_quantized.onnx");
      const edited = withFusedAttention(withoutOutputs(shipped, ATTENTIONS), 6);
      expect(ops(edited).filter((o) => o === "MultiHeadAttention").length).toBe(4);
      expect(ops(edited)).not.toContain("Softmax");
      const [a, b] = await Promise.all([InferenceSession.create(shipped), InferenceSession.create(edited, { enableCpuMemArena: false })]);
      expect(a.outputNames.length).toBe(5);
      expect(b.outputNames).toEqual(["last_hidden_state"]);
      const input = { input_features: new Tensor("float32", noise(80 * 3000, 1), [1, 80, 3000]) };
      const x = (await a.run(input, ["last_hidden_state"])).last_hidden_state!.data as Float32Array;
      const y = (await b.run(input)).last_hidden_state!.data as Float32Array;
      // Attention itself agrees to ~1e-5; the layers after it quantize their inputs to 8 bits per
      // tensor, so a value on a rounding edge moves by one step: small, scattered differences.
      const meanDiff = x.reduce((s, v, i) => s + Math.abs(v - y[i]!), 0) / x.length;
      expect(meanDiff).toBeLessThan(0.1);
      for (let frame = 0; frame < 1500; frame += 100) {
        let dot = 0, nx = 0, ny = 0;
        for (let d = 0; d < 384; d++) {
          const [p, q] = [x[frame * 384 + d]!, y[frame * 384 + d]!];
          dot += p * q;
          nx += p * p;
          ny += q * q;
        }
        expect(dot / Math.sqrt(nx * ny)).toBeGreaterThan(0.99);
      }
      await Promise.all([a.release(), b.release()]);
    },
    60_000,
  );

  test(
    "the decoder with its output projection on the 8-bit matrix picks the same tokens",
    async () => {
      const shipped = file("decoder_model_merged_quantized.onnx");
      const edited = withoutOutputs(withQuantizedMatMuls(shipped, { blockSize: 16, accuracyLevel: 4 }), ATTENTIONS);
      // One MatMulNBits per branch of the merged decoder, and the whole-matrix dequantization gone.
      expect(ops(edited).filter((o) => o === "branch:MatMulNBits").length).toBe(2);
      expect(ops(shipped).filter((o) => o === "branch:DequantizeLinear").length).toBe(4);
      expect(ops(edited).filter((o) => o === "branch:DequantizeLinear").length).toBe(2); // the embedding lookup's, of a few rows
      expect(edited.length).toBeLessThan(shipped.length);
      const a = await InferenceSession.create(shipped);
      const b = await InferenceSession.create(edited);
      expect(b.outputNames.some(ATTENTIONS)).toBe(false);
      expect(b.outputNames).toContain("logits");

      const empty = () => new Tensor("float32", new Float32Array(0), [1, 6, 0, 64]);
      const past: Record<string, Tensor> = {};
      for (const name of a.inputNames) if (name.startsWith("past_key_values.")) past[name] = empty();
      const feeds = {
        input_ids: new Tensor("int64", BigInt64Array.from([50258n, 50259n, 50359n, 50364n]), [1, 4]),
        encoder_hidden_states: new Tensor("float32", noise(1500 * 384, 2), [1, 1500, 384]),
        use_cache_branch: new Tensor("bool", [false], [1]),
        ...past,
      };
      const x = (await a.run(feeds, ["logits"])).logits!.data as Float32Array;
      const y = (await b.run(feeds, ["logits"])).logits!.data as Float32Array;
      const V = 51865;
      expect(y.length).toBe(4 * V);
      for (let t = 0; t < 4; t++) expect(argmax(y, t * V, (t + 1) * V)).toBe(argmax(x, t * V, (t + 1) * V));
      // Logits span about ±35; the hidden state quantized per block of 16 moves them by under 1 %.
      expect(maxDiff(x, y)).toBeLessThan(0.5);
      await Promise.all([a.release(), b.release()]);
    },
    60_000,
  );

  test("a model without the patterns passes through the edits unchanged", () => {
    const shipped = file("encoder_model_quantized.onnx");
    expect(Buffer.compare(withQuantizedMatMuls(shipped, { blockSize: 16, accuracyLevel: 4 }), shipped)).toBe(0);
  });

  test("bytes that are not a protobuf message are refused, not passed on", () => {
    expect(() => withoutOutputs(Uint8Array.from([0x3a, 0xff, 0xff, 0xff, 0x0f]), ATTENTIONS)).toThrow(/runs past its end/);
    expect(() => withoutOutputs(Uint8Array.from([0x0f]), ATTENTIONS)).toThrow(/wire type/);
  });
});
