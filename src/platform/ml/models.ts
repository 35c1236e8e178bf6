// The model manifest (models/manifest.json): which files each known model needs, by SHA-256,
// and the check that runs before a model is loaded.
import { createHash } from "node:crypto";
import { createReadStream, existsSync } from "node:fs";
import { join } from "node:path";
import manifest from "../../../models/manifest.json";

export interface ModelSpec {
  id: string;
  task: string;
  dtype: string;
  dim?: number;
  maxTokens?: number;
  files: Record<string, string>;
}

const KNOWN = manifest.models as unknown as ModelSpec[];

export const modelSpec = (id: string): ModelSpec | undefined => KNOWN.find((m) => m.id === id);

/** `mismatch`: a file is there but is not the pinned one (never loadable, online or not). */
export type ModelCheck = { ok: true; pinned: boolean } | { ok: false; reason: string; mismatch?: boolean };

async function sha256File(path: string): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest("hex");
}

/** How long a look at the models folder is reused: /health asks on every call, a monitor may call often. */
const PRESENCE_TTL_MS = 2_000;
const presenceSeen = new Map<string, { at: number; check: ModelCheck }>();

/** Whether the model's files are there, without reading them (cheap enough for /health: one look per 2 s). */
export function modelPresence(modelsDir: string, id: string): ModelCheck {
  const key = `${modelsDir}\0${id}`;
  const seen = presenceSeen.get(key);
  const now = performance.now();
  if (seen && now - seen.at < PRESENCE_TTL_MS) return seen.check;
  const check = lookForModel(modelsDir, id);
  presenceSeen.set(key, { at: now, check });
  return check;
}

function lookForModel(modelsDir: string, id: string): ModelCheck {
  const spec = modelSpec(id);
  const dir = join(modelsDir, id);
  if (!spec) return existsSync(dir) ? { ok: true, pinned: false } : { ok: false, reason: `model ${id} not found in ${modelsDir}` };
  const missing = Object.keys(spec.files).filter((f) => !existsSync(join(dir, f)));
  if (missing.length) return { ok: false, reason: `model ${id} is missing ${missing.join(", ")} in ${dir} (see models/README.md)` };
  return { ok: true, pinned: true };
}

/** Checks that a model's files are present in `modelsDir` and match their pinned hashes; the files that are there are checked even when others are missing. */
export async function checkModel(modelsDir: string, id: string): Promise<ModelCheck> {
  const present = lookForModel(modelsDir, id);
  const spec = modelSpec(id);
  if (!spec) return present;
  const dir = join(modelsDir, id);
  for (const [file, expected] of Object.entries(spec.files)) {
    if (!existsSync(join(dir, file))) continue;
    const actual = await sha256File(join(dir, file));
    if (actual !== expected) return { ok: false, mismatch: true, reason: `model file ${id}/${file} does not match its pinned SHA-256 (models/manifest.json)` };
  }
  return present;
}
