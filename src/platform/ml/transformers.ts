// transformers.js set up for Hearth: local files only (unless online fetching is allowed), no
// cache inside the binary, and the feature-extraction pipeline with its tokenizer.
import "./ort-env";
import { AutoTokenizer, env, pipeline, type FeatureExtractionPipeline } from "@huggingface/transformers";
import { checkModel, modelSpec } from "./models";

export interface EmbedderOptions {
  modelsDir: string;
  model: string;
  offline: boolean;
}

export interface LoadedEmbedder {
  model: string;
  dim: number;
  /** Most word pieces the model was trained on (special tokens included). */
  maxTokens: number;
  countTokens(text: string): number;
  embed(texts: string[]): Promise<Float32Array[]>;
}

export function configure(opts: { modelsDir: string; offline: boolean }) {
  env.localModelPath = opts.modelsDir.endsWith("/") ? opts.modelsDir : `${opts.modelsDir}/`;
  env.allowLocalModels = true;
  env.allowRemoteModels = !opts.offline;
  env.useFSCache = false;
  if (env.cacheDir) env.cacheDir = opts.modelsDir;
}

export async function loadEmbedder(opts: EmbedderOptions): Promise<LoadedEmbedder> {
  const check = await checkModel(opts.modelsDir, opts.model);
  if (!check.ok && opts.offline) throw new Error(check.reason);
  configure(opts);
  const spec = modelSpec(opts.model);
  const dtype = (spec?.dtype ?? "q8") as "q4";
  const tokenizer = await AutoTokenizer.from_pretrained(opts.model);
  const extractor: FeatureExtractionPipeline = await pipeline("feature-extraction", opts.model, { dtype });
  const probe = await extractor(["dimension probe"], { pooling: "mean", normalize: true });
  const dim = probe.dims[1]!;
  return {
    model: opts.model,
    dim,
    maxTokens: spec?.maxTokens ?? 256,
    countTokens: (text) => tokenizer.encode(text, { add_special_tokens: false }).length,
    async embed(texts) {
      const out = await extractor(texts, { pooling: "mean", normalize: true });
      const data = out.data as Float32Array;
      return texts.map((_, i) => data.slice(i * dim, (i + 1) * dim));
    },
  };
}
