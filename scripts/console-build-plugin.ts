// Bun.build plugin that embeds the web console in the binary: it builds src/console/ into
// dist/console/ and swaps src/platform/http/console-assets.ts for a module that imports each
// built file as an embedded file, so the binary serves the console with no build step at run time.
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { BunPlugin } from "bun";
import { buildConsole } from "../src/platform/http/console-assets";

export async function consoleBuildPlugin(outdir: string): Promise<BunPlugin> {
  rmSync(outdir, { recursive: true, force: true });
  mkdirSync(outdir, { recursive: true });
  const files: { name: string; path: string; type: string }[] = [];
  for (const out of await buildConsole()) {
    const name = out.path.replace(/^.*\//, "");
    // The page is embedded under another extension: an .html import would be bundled as a page again.
    const path = join(outdir, name === "index.html" ? "console-index.html.txt" : name);
    await Bun.write(path, out);
    files.push({ name, path, type: out.type });
  }
  const source = [
    ...files.map((f, i) => `import f${i} from ${JSON.stringify(f.path)} with { type: "file" };`),
    `const FILES = [${files.map((f, i) => `[${JSON.stringify(f.name)}, f${i}, ${JSON.stringify(f.type)}]`).join(", ")}];`,
    `let assets;`,
    `export function consoleAssets() {`,
    `  if (!assets) {`,
    `    const files = new Map(FILES.filter(([n]) => n !== "index.html").map(([n, p, t]) => [n, Bun.file(p, { type: t })]));`,
    `    const [, page, type] = FILES.find(([n]) => n === "index.html");`,
    `    assets = Promise.resolve({ index: Bun.file(page, { type }), files });`,
    `  }`,
    `  return assets;`,
    `}`,
  ].join("\n");
  return {
    name: "hearth-console",
    setup(build) {
      build.onLoad({ filter: /src\/platform\/http\/console-assets\.ts$/ }, () => ({ contents: source, loader: "js" }));
    },
  };
}
