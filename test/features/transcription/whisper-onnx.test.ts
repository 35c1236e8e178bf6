// The ONNX edits that cut Whisper's memory, on the real whisper-tiny files: the edited models load
// in ONNX Runtime and compute the same numbers as the files as shipped.
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { InferenceSession, Tensor } from "onnxruntime-node";
import { withBranchConstantsHoisted, withoutOutputs } from "../../../src/platform/ml/onnx-edit";

const DIR = join(process.env.HEARTH_MODELS_DIR ?? join(import.meta.dir, "../../../../shared/models"), "Xenova/whisper-tiny/onnx");
const file = (name: string) => new Uint8Array(readFileSync(join(DIR, name)));
const ATTENTIONS = (name: string) => name.includes("attentions");

/** Deterministic values in [-0.5, 0.5). */
const noise = (n: number, seed: number) => Float32Array.from({ length: n }, (_, i) => (((i * 7919 + seed * 104729) % 10007) / 10007) - 0.5);

const maxDiff = (a: Float32Array, b: Float32Array) => a.reduce((m, x, i) => Math.max(m, Math.abs(x - b[i]!)), 0);

describe("ONNX edits for Whisper", () => {
  test(
    "the encoder without its attention outputs returns only the hidden state, unchanged",
    async () => {
      const shipped = file("encoder_model_quantized.onnx");
      const edited = withoutOutputs(shipped, ATTENTIONS);
      const [a, b] = await Promise.all([InferenceSession.create(shipped), InferenceSession.create(edited, { enableCpuMemArena: false })]);
      expect(a.outputNames.length).toBe(5);
      expect(b.outputNames).toEqual(["last_hidden_state"]);
      const input = { input_features: new Tensor("float32", noise(80 * 3000, 1), [1, 80, 3000]) };
      const [x, y] = [await a.run(input, ["last_hidden_state"]), await b.run(input)];
      expect(maxDiff(x.last_hidden_state!.data as Float32Array, y.last_hidden_state!.data as Float32Array)).toBe(0);
      await Promise.all([a.release(), b.release()]);
    },
    60_000,
  );

  test(
    "the decoder with the output projection hoisted out of its branches and folded gives the same logits",
    async () => {
      const shipped = file("decoder_model_merged_quantized.onnx");
      const edited = withoutOutputs(withBranchConstantsHoisted(shipped, new Set(["Transpose", "DequantizeLinear"])), ATTENTIONS);
      expect(edited.length).toBeLessThan(shipped.length);
      const a = await InferenceSession.create(shipped);
      const b = await InferenceSession.create(edited, { extra: { session: { disable_quant_qdq: "1" } } });
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
      expect(y.length).toBe(4 * 51865);
      expect(maxDiff(x, y)).toBeLessThan(1e-3);
      await Promise.all([a.release(), b.release()]);
    },
    60_000,
  );

  test("bytes that are not a protobuf message are refused, not passed on", () => {
    expect(() => withoutOutputs(Uint8Array.from([0x3a, 0xff, 0xff, 0xff, 0x0f]), ATTENTIONS)).toThrow(/runs past its end/);
    expect(() => withoutOutputs(Uint8Array.from([0x0f]), ATTENTIONS)).toThrow(/wire type/);
  });
});
