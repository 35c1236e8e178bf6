// Reads Hearth's configuration once from env vars and CLI flags, validates it and freezes it.
import { isIP } from "node:net";
import { resolve } from "node:path";

export interface Config {
  readonly host: string;
  readonly port: number;
  readonly dataDir: string;
  readonly modelsDir: string;
  readonly offline: boolean;
  readonly embeddingModel: string;
  readonly whisperModel: string;
  readonly audioMaxMinutes: number;
  readonly ollamaUrl: string;
  readonly llmModel: string;
  readonly adminEmail: string;
  readonly adminPassword: string | undefined;
  readonly jwtSecret: string | undefined;
  readonly rateLimit: number;
  readonly rateLimitStrict: number;
  readonly vectorMemoryMb: number;
  readonly publicUrl: string | undefined;
  readonly secretKey: string | undefined;
  readonly llmProvider: "ollama" | "openai";
  readonly llmUrl: string | undefined;
  readonly llmApiKey: string | undefined;
  readonly llmTimeoutS: number;
  readonly workflowConcurrency: number;
  readonly httpAllow: string;
  readonly webhookRateLimit: number;
  readonly executionRetentionDays: number;
  readonly backupKeep: number;
  readonly maxChunksPerFile: number;
}

/** A configuration value that cannot be used; main prints `message` as one line and exits. */
export class ConfigError extends Error {}

interface Setting {
  env: string;
  flag: string;
  key: keyof Config;
  default: string | undefined;
  help: string;
  parse: (raw: string, env: string) => Config[keyof Config];
}

const text = (raw: string, env: string) => {
  if (raw.trim() === "") throw new ConfigError(`${env} must not be empty`);
  return raw.trim();
};
const integer = (min: number, max: number) => (raw: string, env: string) => {
  if (!/^\d+$/.test(raw.trim())) throw new ConfigError(`${env} must be a whole number, got "${raw}"`);
  const n = Number(raw.trim());
  if (n < min || n > max) throw new ConfigError(`${env} must be between ${min} and ${max}, got ${n}`);
  return n;
};
const url = (raw: string, env: string) => {
  try {
    const u = new URL(raw.trim());
    if (u.protocol !== "http:" && u.protocol !== "https:") throw new Error();
    return u.toString().replace(/\/$/, "");
  } catch {
    throw new ConfigError(`${env} must be an http(s) URL, got "${raw}"`);
  }
};
const flag = (raw: string, env: string) => {
  if (["1", "true", "yes"].includes(raw.trim().toLowerCase())) return true;
  if (["", "0", "false", "no"].includes(raw.trim().toLowerCase())) return false;
  throw new ConfigError(`${env} must be 1 or 0, got "${raw}"`);
};
const email = (raw: string, env: string) => {
  const v = raw.trim().toLowerCase();
  if (!/^[^\s@]+@[^\s@]+$/.test(v)) throw new ConfigError(`${env} must be an email address, got "${raw}"`);
  return v;
};
const password = (raw: string, env: string) => {
  if (raw.length < 8) throw new ConfigError(`${env} must be at least 8 characters long`);
  return raw;
};
const secret = (raw: string, env: string) => {
  if (raw.length < 32) throw new ConfigError(`${env} must be at least 32 characters long`);
  return raw;
};

const oneOf = (...values: string[]) => (raw: string, env: string) => {
  const v = raw.trim().toLowerCase();
  if (!values.includes(v)) throw new ConfigError(`${env} must be one of ${values.join(", ")}, got "${raw}"`);
  return v as never;
};
/** A host name (RFC 1123 labels) or an IP address; dotted numbers must be an IPv4 address. */
const hostName = (v: string) => isIP(v) !== 0 || (/^(?=.{1,253}$)([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/.test(v) && !/^[\d.]+$/.test(v));
const host = (raw: string, env: string) => {
  const v = raw.trim();
  if (!hostName(v)) throw new ConfigError(`${env} must be an IP address or a host name of this machine, got "${raw}"`);
  return v;
};
const allowList = (raw: string, env: string) => {
  for (const item of raw.split(",").map((x) => x.trim()).filter(Boolean)) {
    const [address, prefix, extra] = item.split("/");
    const family = isIP(address!);
    const bits = family === 6 ? 128 : 32;
    const ok = extra === undefined && (prefix === undefined ? hostName(address!) : family !== 0 && /^\d{1,3}$/.test(prefix) && Number(prefix) <= bits);
    if (!ok) throw new ConfigError(`${env}: "${item}" is not a host name, an address or a CIDR (address/prefix, at most /32 for IPv4, /128 for IPv6)`);
  }
  return raw.trim();
};

export const SETTINGS: readonly Setting[] = [
  { env: "HEARTH_HOST", flag: "--host", key: "host", default: "127.0.0.1", help: "listen address (0.0.0.0 serves a network)", parse: host },
  { env: "HEARTH_PORT", flag: "--port", key: "port", default: "3000", help: "listen port (0 picks a free one)", parse: integer(0, 65535) },
  { env: "HEARTH_DATA_DIR", flag: "--data-dir", key: "dataDir", default: "./data", help: "database and extracted native files", parse: (r, e) => resolve(text(r, e)) },
  { env: "HEARTH_MODELS_DIR", flag: "--models-dir", key: "modelsDir", default: "./models", help: "local models in transformers.js layout", parse: (r, e) => resolve(text(r, e)) },
  { env: "HEARTH_OFFLINE", flag: "--offline", key: "offline", default: "0", help: "1: never fetch model files from the network", parse: flag },
  { env: "HEARTH_EMBEDDING_MODEL", flag: "--embedding-model", key: "embeddingModel", default: "onnx-community/all-MiniLM-L6-v2-ONNX", help: "embedding model id", parse: text },
  { env: "HEARTH_WHISPER_MODEL", flag: "--whisper-model", key: "whisperModel", default: "Xenova/whisper-tiny", help: "transcription model id", parse: text },
  { env: "HEARTH_AUDIO_MAX_MINUTES", flag: "--audio-max-minutes", key: "audioMaxMinutes", default: "120", help: "longest audio transcribed, in minutes of decoded sound (checked before decoding; longer is 413)", parse: integer(1, 24 * 60) },
  { env: "HEARTH_OLLAMA_URL", flag: "--ollama-url", key: "ollamaUrl", default: "http://127.0.0.1:11434", help: "Ollama server", parse: url },
  { env: "HEARTH_LLM_MODEL", flag: "--llm-model", key: "llmModel", default: "llama3.2", help: "chat model name in Ollama", parse: text },
  { env: "HEARTH_LLM_PROVIDER", flag: "--llm-provider", key: "llmProvider", default: "ollama", help: "ollama, or openai for any OpenAI-compatible server (vLLM, llama.cpp, LM Studio, LocalAI)", parse: oneOf("ollama", "openai") },
  { env: "HEARTH_LLM_URL", flag: "--llm-url", key: "llmUrl", default: undefined, help: "base URL of the OpenAI-compatible server, e.g. http://gpu-box:8000/v1", parse: url },
  { env: "HEARTH_LLM_API_KEY", flag: "--llm-api-key", key: "llmApiKey", default: undefined, help: "bearer key for the openai provider", parse: text },
  { env: "HEARTH_LLM_TIMEOUT_S", flag: "--llm-timeout-s", key: "llmTimeoutS", default: "300", help: "seconds the model server may stay silent: before an answer starts (loading, reading the prompt) or within one", parse: integer(1, 24 * 3600) },
  { env: "HEARTH_ADMIN_EMAIL", flag: "--admin-email", key: "adminEmail", default: "admin@localhost", help: "first owner, created on first start", parse: email },
  { env: "HEARTH_ADMIN_PASSWORD", flag: "--admin-password", key: "adminPassword", default: undefined, help: "first owner's password (random, printed once, if unset)", parse: password },
  { env: "HEARTH_JWT_SECRET", flag: "--jwt-secret", key: "jwtSecret", default: undefined, help: "HS256 secret for sessions (generated and stored if unset)", parse: secret },
  { env: "HEARTH_RATE_LIMIT", flag: "--rate-limit", key: "rateLimit", default: "10", help: "requests per minute, default budget", parse: integer(1, 1_000_000) },
  { env: "HEARTH_RATE_LIMIT_STRICT", flag: "--rate-limit-strict", key: "rateLimitStrict", default: "5", help: "requests per minute, high-load endpoints", parse: integer(1, 1_000_000) },
  { env: "HEARTH_SECRET_KEY", flag: "--secret-key", key: "secretKey", default: undefined, help: "32-byte base64 key encrypting integration credentials (default: <data dir>/secret.key, generated)", parse: text },
  { env: "HEARTH_PUBLIC_URL", flag: "--public-url", key: "publicUrl", default: undefined, help: "the address others reach Hearth at (webhook URLs); default http://<host>:<port>", parse: url },
  { env: "HEARTH_WORKFLOW_CONCURRENCY", flag: "--workflow-concurrency", key: "workflowConcurrency", default: "4", help: "workflow executions running at once per workspace; more wait queued", parse: integer(1, 1000) },
  { env: "HEARTH_HTTP_ALLOW", flag: "--http-allow", key: "httpAllow", default: "", help: "hosts/CIDRs http nodes may call although loopback or link-local (comma-separated)", parse: allowList },
  { env: "HEARTH_WEBHOOK_RATE_LIMIT", flag: "--webhook-rate-limit", key: "webhookRateLimit", default: "60", help: "inbound webhook deliveries per minute per path", parse: integer(1, 1_000_000) },
  { env: "HEARTH_BACKUP_KEEP", flag: "--backup-keep", key: "backupKeep", default: "7", help: "backups POST /api/admin/backup keeps in <data dir>/backups/ (the oldest go after each new one); 0 keeps them all", parse: integer(0, 100_000) },
  { env: "HEARTH_EXECUTION_RETENTION_DAYS", flag: "--execution-retention-days", key: "executionRetentionDays", default: "0", help: "days ended workflow and agent executions (and webhook deliveries) are kept; 0 keeps them all", parse: integer(0, 36_500) },
  { env: "HEARTH_VECTOR_MEMORY_MB", flag: "--vector-memory-mb", key: "vectorMemoryMb", default: "512", help: "memory for in-memory vector indexes (~1.6 KB per 384-dim chunk); 0: sqlite-vec scan only", parse: integer(0, 1_000_000) },
  { env: "HEARTH_MAX_CHUNKS_PER_FILE", flag: "--max-chunks-per-file", key: "maxChunksPerFile", default: "20000", help: "chunks one uploaded file may become; a file with more ends failed before embedding", parse: integer(1, 10_000_000) },
];

/**
 * Builds the configuration from the environment and `--flag value` / `--flag=value` pairs;
 * flags win over env vars. Throws ConfigError naming the variable or flag at fault.
 */
export function loadConfig(env: Record<string, string | undefined>, args: readonly string[] = []): Config {
  const flags = parseFlags(args);
  const out: Record<string, unknown> = {};
  for (const s of SETTINGS) {
    const fromFlag = flags.get(s.flag);
    const raw = fromFlag ?? env[s.env] ?? s.default;
    if (fromFlag === undefined && env[s.env] === undefined && s.default === undefined) {
      out[s.key] = undefined;
      continue;
    }
    out[s.key] = s.parse(raw as string, fromFlag !== undefined ? s.flag : s.env);
  }
  // An OpenAI-compatible server has no well-known address to fall back to.
  if (out.llmProvider === "openai" && out.llmUrl === undefined) {
    throw new ConfigError("HEARTH_LLM_PROVIDER=openai needs HEARTH_LLM_URL (--llm-url): the server's base URL, e.g. http://gpu-box:8000/v1");
  }
  return Object.freeze(out) as unknown as Config;
}

function parseFlags(args: readonly string[]): Map<string, string> {
  const known = new Map(SETTINGS.map((s) => [s.flag, s]));
  const flags = new Map<string, string>();
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const eq = arg.indexOf("=");
    const name = eq > 0 ? arg.slice(0, eq) : arg;
    const setting = known.get(name);
    if (!setting) throw new ConfigError(`unknown option ${name} (see hearth --help)`);
    if (eq > 0) flags.set(name, arg.slice(eq + 1));
    else if (setting.key === "offline" && (args[i + 1] === undefined || args[i + 1]!.startsWith("--"))) flags.set(name, "1");
    else if (args[i + 1] === undefined) throw new ConfigError(`option ${name} needs a value`);
    else flags.set(name, args[++i]!);
  }
  return flags;
}
