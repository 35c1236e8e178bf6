// transformers.js set up for Hearth: local files only (unless online fetching is allowed), no
// cache inside the binary, and the feature-extraction pipeline with its tokenizer.
import "./ort-env";
import { AutoTokenizer, env, pipeline, type AutomaticSpeechRecognitionPipeline, type FeatureExtractionPipeline } from "@huggingface/transformers";
import { checkModel, modelSpec } from "./models";
import { fetchOnlyWhatGenerationReads, loadWhisperSessions } from "./whisper-sessions";

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

/**
 * The SHA-256 check before a model loads, online or offline: a file that is there and does not
 * match its pin is never loaded. Missing files stop an offline start; online, transformers.js
 * fetches them (in memory: nothing on disk to check).
 */
async function verifyModel(opts: { modelsDir: string; model: string; offline: boolean }) {
  const check = await checkModel(opts.modelsDir, opts.model);
  if (!check.ok && (opts.offline || check.mismatch)) throw new Error(check.reason);
}

export function configure(opts: { modelsDir: string; offline: boolean }) {
  env.localModelPath = opts.modelsDir.endsWith("/") ? opts.modelsDir : `${opts.modelsDir}/`;
  env.allowLocalModels = true;
  env.allowRemoteModels = !opts.offline;
  env.useFSCache = false;
  if (env.cacheDir) env.cacheDir = opts.modelsDir;
}

export async function loadEmbedder(opts: EmbedderOptions): Promise<LoadedEmbedder> {
  await verifyModel(opts);
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

export interface TranscriberOptions {
  modelsDir: string;
  model: string;
  offline: boolean;
}

export interface TranscribedWindow {
  text: string;
  /** Seconds from the start of the window. */
  segments: { start: number; end: number; text: string }[];
}

export interface LoadedTranscriber {
  model: string;
  /** Transcribes at most 30 s of 16 kHz mono audio; `language` is a code such as "en", or null to let the model pick. */
  transcribe(samples: Float32Array, language: string | null): Promise<TranscribedWindow>;
  /** The language code the model hears in (up to 30 s of) the audio. */
  detectLanguage(samples: Float32Array): Promise<string>;
  /** Language codes the model knows ("en", "de", ...). */
  languages: string[];
}

export async function loadTranscriber(opts: TranscriberOptions): Promise<LoadedTranscriber> {
  await verifyModel(opts);
  configure(opts);
  const spec = modelSpec(opts.model);
  const dtype = (spec?.dtype ?? "q8") as "q8";
  const asr = (await loadWhisperSessions(opts, () => pipeline("automatic-speech-recognition", opts.model, { dtype }))) as AutomaticSpeechRecognitionPipeline;
  fetchOnlyWhatGenerationReads((asr.model as unknown as { sessions: Parameters<typeof fetchOnlyWhatGenerationReads>[0] }).sessions);
  const config = (asr.model as unknown as { generation_config: { lang_to_id?: Record<string, number>; decoder_start_token_id: number } }).generation_config;
  const codeOf = new Map(Object.entries(config.lang_to_id ?? {}).map(([token, id]) => [id, token.replace(/^<\|(.+)\|>$/, "$1")]));
  return {
    model: opts.model,
    languages: [...codeOf.values()],
    async transcribe(samples, language) {
      const out = (await asr(samples, { return_timestamps: true, task: "transcribe", ...(language ? { language } : {}) })) as {
        text: string;
        chunks?: { timestamp: [number, number | null]; text: string }[];
      };
      const duration = samples.length / 16_000;
      const segments = (out.chunks ?? [])
        .map((c) => ({ start: c.timestamp[0], end: c.timestamp[1] ?? duration, text: c.text.trim() }))
        .filter((s) => s.text.length > 0);
      return { text: out.text.trim(), segments };
    },
    async detectLanguage(samples) {
      const { input_features } = await (asr.processor as unknown as (a: Float32Array) => Promise<{ input_features: unknown }>)(samples);
      const generate = (asr.model as unknown as { generate(o: unknown): Promise<{ tolist(): bigint[][] }> }).generate.bind(asr.model);
      const tokens = (await generate({ inputs: input_features, decoder_input_ids: [config.decoder_start_token_id], max_new_tokens: 1 })).tolist()[0]!;
      return codeOf.get(Number(tokens.at(-1))) ?? "en";
    },
  };
}
