// Whisper's ONNX sessions rebuilt for transcription's memory. As exported:
// - the encoder also returns its four attention maps (52 MB each for a 30 s window), which ONNX
//   Runtime keeps to the end of the run and then copies out: about 450 MB at the peak; and even
//   unreturned, each layer's attention holds its scores and their softmax at once (108 MB), where
//   ONNX Runtime's fused attention streams over the keys (and runs the encoder ~2× faster);
// - each decoder step copies out the encoder's keys and values again (18 MB a token), though the
//   cache already holds them, and every attention map;
// - each decoder step dequantizes the whole output projection (51,865 × 384, 76 MB of floats) to
//   multiply it by one token's hidden state, because both branches of the merged decoder repeat
//   that step where it cannot be folded; it now multiplies by the 8-bit matrix itself (20 MB).
// Only word-level timestamps read the attentions, and Hearth asks for segments.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { InferenceSession } from "onnxruntime-node";
import { modelSpec } from "./models";
import { withFusedAttention, withoutOutputs, withQuantizedMatMuls } from "./onnx-edit";

/** The part of an InferenceSession used once loaded. */
interface Session {
  outputNames: readonly string[];
  run(feeds: Record<string, unknown>, fetches?: unknown, options?: unknown): Promise<Record<string, unknown>>;
}

/**
 * The encoder runs without ONNX Runtime's memory arena: its tensors are few and large (a window's
 * activations), so an arena would keep its peak for good, while allocating them afresh costs
 * nothing measurable next to the matrix products.
 */
const ENCODER_OPTIONS = { enableCpuMemArena: false };

/**
 * The output projection as ONNX Runtime's 8-bit MatMul: blocks of 16 weights along the hidden
 * size, each with the matrix's one scale and zero point, and the hidden state quantized per block
 * too (accuracy level 4, as the model's other MatMuls quantize theirs per tensor). Tokens chosen
 * are the same on the test speech; logits move by under 1 % of their range.
 */
const PROJECTION = { blockSize: 16, accuracyLevel: 4 };

const ATTENTIONS = (name: string) => name.includes("attentions");

/** What the edits read from the model's config.json. */
interface Config {
  encoder_attention_heads: number;
}

interface Edit {
  pattern: RegExp;
  edit(bytes: Uint8Array, config: Config): Uint8Array;
  options: InferenceSession.SessionOptions;
}

const EDITS: Edit[] = [
  { pattern: /^onnx\/encoder_model.*\.onnx$/, edit: (bytes, config) => withFusedAttention(withoutOutputs(bytes, ATTENTIONS), config.encoder_attention_heads), options: ENCODER_OPTIONS },
  {
    pattern: /^onnx\/decoder_model_merged.*\.onnx$/,
    edit: (bytes) => withoutOutputs(withQuantizedMatMuls(bytes, PROJECTION), ATTENTIONS),
    options: {},
  },
];

/**
 * Runs `load` (transformers.js loading the Whisper pipeline) with the model's ONNX files opened
 * edited: transformers.js opens each by path through InferenceSession.create, which is wrapped for
 * that time. A file it fetches online (into memory, not a path) loads as it is.
 */
export async function loadWhisperSessions<T>(opts: { modelsDir: string; model: string }, load: () => Promise<T>): Promise<T> {
  const spec = modelSpec(opts.model);
  const byPath = new Map<string, { file: string; sha: string; edit: Edit }>();
  for (const [file, sha] of Object.entries(spec?.files ?? {})) {
    const edit = EDITS.find((e) => e.pattern.test(file));
    if (edit) byPath.set(resolve(join(opts.modelsDir, opts.model, file)), { file, sha, edit });
  }
  // config.json is pinned too, and was checked with the rest.
  const config = () => JSON.parse(readFileSync(join(opts.modelsDir, opts.model, "config.json"), "utf8")) as Config;
  const create = InferenceSession.create;
  // One session at a time (transformers.js asks for both at once): each load has its own peak.
  let previous: Promise<unknown> = Promise.resolve();
  const edited = async (path: string, found: { file: string; sha: string; edit: Edit }, options?: InferenceSession.SessionOptions) => {
    await previous.catch(() => {});
    let bytes: Uint8Array = readFileSync(path);
    // The file was checked before the pipeline started loading; this read is checked again.
    if (createHash("sha256").update(bytes).digest("hex") !== found.sha) throw new Error(`${found.file} of ${opts.model} changed on disk while it was loading`);
    bytes = found.edit.edit(bytes, config());
    Bun.gc(true); // the bytes as read, before ONNX Runtime makes its own copies
    return create(bytes, { ...options, ...found.edit.options });
  };
  InferenceSession.create = ((model: unknown, options?: InferenceSession.SessionOptions) => {
    const found = typeof model === "string" ? byPath.get(resolve(model)) : undefined;
    if (!found) return create(model as string, options);
    const session = edited(model as string, found, options);
    previous = session;
    return session;
  }) as typeof create;
  try {
    return await load();
  } finally {
    InferenceSession.create = create;
    Bun.gc(true); // the files' bytes, read and edited here (~80 MB), are garbage now
  }
}

/** Makes transformers.js's runs (which pass feeds only, so fetch every output) fetch only what generation reads. */
export function fetchOnlyWhatGenerationReads(sessions: Record<string, Session>) {
  fetchOnly(sessions.model!, () => ["last_hidden_state"]);
  const decoder = sessions.decoder_model_merged!;
  const first = decoder.outputNames.filter((n) => n === "logits" || n.startsWith("present."));
  // With the cache in use the encoder's keys and values come back unchanged, and getPastKeyValues keeps the cached ones.
  const cached = first.filter((n) => !n.includes(".encoder."));
  fetchOnly(decoder, (feeds) => ((feeds.use_cache_branch as { data?: ArrayLike<unknown> } | undefined)?.data?.[0] ? cached : first));
}

function fetchOnly(session: Session, names: (feeds: Record<string, unknown>) => string[]) {
  const run = session.run.bind(session);
  session.run = (feeds, fetches, options) => (fetches === undefined ? run(feeds, names(feeds)) : run(feeds, fetches, options));
}
