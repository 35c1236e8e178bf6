// Native libraries (sqlite-vec, later the ONNX runtime): from node_modules in development,
// extracted from the compiled binary into <data dir>/native/ when Hearth runs as one file.
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, renameSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";

/** Files embedded by build.ts, by their base name (Bun adds no hash: build.ts asks for [name].[ext]). */
function embedded(name: string): Blob | undefined {
  return Bun.embeddedFiles.find((f) => basename((f as Blob & { name: string }).name) === name);
}

/**
 * Returns a real file path for the native file `name`. Inside the compiled binary the embedded
 * copy is written once to `<dataDir>/native/<hash>/<name>` (content-addressed, so an upgrade never
 * loads a stale library); outside it `devPath()` points into node_modules.
 */
export async function nativePath(name: string, dataDir: string, devPath: () => string): Promise<string> {
  const blob = embedded(name);
  if (!blob) return devPath();
  const bytes = new Uint8Array(await blob.arrayBuffer());
  const digest = createHash("sha256").update(bytes).digest("hex").slice(0, 16);
  const dir = join(dataDir, "native", digest);
  const target = join(dir, name);
  if (!existsSync(target)) {
    mkdirSync(dir, { recursive: true });
    // Write then rename, so a crash mid-write never leaves a truncated library behind.
    const tmp = `${target}.${process.pid}.tmp`;
    writeFileSync(tmp, bytes, { mode: 0o755 });
    renameSync(tmp, target);
  }
  return target;
}

export const isCompiled = () => Bun.embeddedFiles.length > 0;

/**
 * Where a worker thread's module is, by its path under src/: inside the binary its own entry
 * point (build.ts lists every worker), otherwise the source file.
 */
export function workerUrl(fromSrc: string): string | URL {
  return isCompiled() ? `./src/${fromSrc}` : new URL(`../${fromSrc}`, import.meta.url);
}
