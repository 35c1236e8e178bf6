// The web console's files, built by Bun from src/console/ on first use (development and tests).
// build.ts replaces this module in the binary with one that serves the files embedded at build time.
import { join } from "node:path";

export interface ConsoleAssets {
  /** index.html, the one page every console path answers with. */
  index: Blob;
  /** Hashed file names (`main-a1b2c3.js`) → contents; served under /assets/ with a long cache. */
  files: Map<string, Blob>;
}

const ENTRY = join(import.meta.dir, "../../console/index.html");

/** Bundles the console (Preact, CSS) into memory; throws with Bun's messages when it cannot. */
export async function buildConsole(options: { minify?: boolean } = {}) {
  const result = await Bun.build({
    entrypoints: [ENTRY],
    target: "browser",
    minify: options.minify ?? true,
    sourcemap: "none",
    publicPath: "/assets/",
    naming: { entry: "[name].[ext]", chunk: "[name]-[hash].[ext]", asset: "[name]-[hash].[ext]" },
    throw: false,
  });
  if (!result.success) throw new Error(`console build failed:\n${result.logs.map(String).join("\n")}`);
  return result.outputs;
}

async function load(): Promise<ConsoleAssets> {
  const outputs = await buildConsole();
  const files = new Map<string, Blob>();
  let index: Blob | undefined;
  for (const out of outputs) {
    const name = out.path.replace(/^.*\//, "");
    if (name === "index.html") index = out;
    else files.set(name, out);
  }
  if (!index) throw new Error("console build produced no index.html");
  return { index, files };
}

let loaded: Promise<ConsoleAssets> | undefined;

/** Built once per process, at the first console request (so servers that never show it never build it). */
export function consoleAssets(): Promise<ConsoleAssets> {
  loaded ??= load();
  loaded.catch(() => (loaded = undefined));
  return loaded;
}
