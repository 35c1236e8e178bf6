// Bun.build plugin that makes transformers.js run inside the compiled binary: sharp (image code,
// unused by Hearth) is stubbed, and onnxruntime-node's native binding and libonnxruntime are
// embedded and, at first use, extracted side by side into <data dir>/native/ and dlopen()ed.
// The extraction runs in a child of the binary (`hearth __extract-native <dir>`, main.ts): read in
// the server, the library's 46 MB would stay in its memory for good (the binary's pages it was read
// from) and again on the heap until collected, ~60-100 MB on the first transcription's peak.
import { createHash } from "node:crypto";
import { readFileSync, readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import type { BunPlugin } from "bun";

const ortPackage = require.resolve("onnxruntime-node/package.json");
const ortDir = dirname(ortPackage);
const ortVersion: string = JSON.parse(readFileSync(ortPackage, "utf8")).version;
const napi = readdirSync(join(ortDir, "bin")).find((d) => d.startsWith("napi-v"));
if (!napi) throw new Error("onnxruntime-node has no bin/napi-v* directory");
const binDir = join(ortDir, "bin", napi, "linux", "x64");
// The CPU build needs just these two; the binding finds the library beside it (RUNPATH $ORIGIN).
const nativeFiles = ["onnxruntime_binding.node", "libonnxruntime.so.1"].map((name) => {
  const path = join(binDir, name);
  const bytes = readFileSync(path);
  return { name, path, size: bytes.length, sha: createHash("sha256").update(bytes).digest("hex") };
});
const tag = `${ortVersion}-${createHash("sha256").update(nativeFiles.map((f) => f.sha).join()).digest("hex").slice(0, 12)}`;

// Runs inside the binary. HEARTH_NATIVE_DIR is set by main.ts to <data dir>/native.
const loaderSource = String.raw`
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
${nativeFiles.map((f, i) => `import f${i} from ${JSON.stringify(f.path)} with { type: "file" };`).join("\n")}
const FILES = [${nativeFiles.map((f, i) => `[f${i}, ${JSON.stringify(f.name)}, ${f.size}]`).join(", ")}];
const TAG = ${JSON.stringify(tag)};
const complete = (dir) => FILES.every(([, n, size]) => { try { return statSync(join(dir, n)).size === size; } catch { return false; } });
const alive = (pid) => { try { process.kill(pid, 0); return true; } catch (e) { return e.code === "EPERM"; } };
/**
 * Removes what an extraction killed midway left behind (its process is gone; a live one is still
 * writing) and, in the data dir's own native/ (HEARTH_NATIVE_DIR: no other Hearth runs on that data
 * dir), the libraries of earlier versions, 46 MB each.
 */
function sweepStale(base) {
  const owned = base === process.env.HEARTH_NATIVE_DIR;
  for (const name of readdirSync(base)) {
    if (!name.startsWith("onnxruntime-")) continue;
    const tmp = /[.]tmp-(\d+)-/.exec(name);
    if (tmp ? !alive(Number(tmp[1])) : owned && name !== "onnxruntime-" + TAG) rmSync(join(base, name), { recursive: true, force: true });
  }
}
function extract(base) {
  mkdirSync(base, { recursive: true, mode: 0o700 });
  const dir = join(base, "onnxruntime-" + TAG);
  if (complete(dir)) return dir;
  sweepStale(base);
  const tmp = dir + ".tmp-" + process.pid + "-" + Math.random().toString(36).slice(2);
  mkdirSync(tmp, { mode: 0o700 });
  try {
    for (const [src, name] of FILES) writeFileSync(join(tmp, name), readFileSync(src), { mode: 0o755 });
    if (existsSync(dir) && !complete(dir)) rmSync(dir, { recursive: true, force: true });
    try { renameSync(tmp, dir); } catch (e) { if (!complete(dir)) throw e; }
  } finally { rmSync(tmp, { recursive: true, force: true }); }
  return dir;
}
export { extract as extractNative };
/** Extracts in a child of this binary when needed; whatever it leaves undone is extracted here after it. */
function extractApart(base) {
  if (complete(join(base, "onnxruntime-" + TAG))) return;
  try {
    const env = { PATH: process.env.PATH ?? "" };
    if (base === process.env.HEARTH_NATIVE_DIR) env.HEARTH_NATIVE_DIR = base;
    Bun.spawnSync([process.execPath, "__extract-native", base], { stdin: "ignore", stdout: "ignore", stderr: "ignore", env, timeout: 120000 });
  } catch {}
}
export function loadOrtBinding() {
  const errors = [];
  const bases = [process.env.HEARTH_NATIVE_DIR, join(tmpdir(), "hearth-native-" + (process.getuid ? process.getuid() : "user"))].filter(Boolean);
  for (const base of bases) {
    try {
      extractApart(base);
      const dir = extract(base);
      const m = { exports: {} };
      process.dlopen(m, join(dir, "onnxruntime_binding.node"));
      return m.exports;
    } catch (e) { errors.push(base + ": " + e.message); }
  }
  throw new Error("cannot load the ONNX Runtime native library: " + errors.join("; "));
}
`;

const BINDING_REQUIRE = /require\(`\.\.\/bin\/napi-v\d+\/\$\{process\.platform\}\/\$\{process\.arch\}\/onnxruntime_binding\.node`\)/;

export const mlBuildPlugin: BunPlugin = {
  name: "hearth-ml",
  setup(build) {
    // transformers.js imports sharp at load and throws if the import is falsy: a truthy stub.
    build.onResolve({ filter: /^sharp$/ }, () => ({ path: "sharp", namespace: "hearth-ml" }));
    build.onLoad({ filter: /^sharp$/, namespace: "hearth-ml" }, () => ({
      loader: "js",
      contents: `export default function sharp() { throw new Error("image input is not supported by Hearth"); }`,
    }));
    // v4 loads onnxruntime-node through createRequire(import.meta.url), which a bundle cannot follow.
    build.onLoad({ filter: /[\\/]@huggingface[\\/]transformers[\\/]dist[\\/]transformers\.node\.mjs$/ }, async (args) => {
      const src = await Bun.file(args.path).text();
      if (!src.includes('requireFromHere("onnxruntime-node")')) throw new Error("transformers.js no longer loads onnxruntime-node as expected; update scripts/ml-build-plugin.ts");
      return { contents: src.replace('requireFromHere("onnxruntime-node")', 'require("onnxruntime-node")'), loader: "js" };
    });
    // The binding is required from a run-time path; swap that one expression for the extracting loader.
    build.onLoad({ filter: /[\\/]onnxruntime-node[\\/]dist[\\/]binding\.js$/ }, async (args) => {
      const src = await Bun.file(args.path).text();
      if (!BINDING_REQUIRE.test(src)) throw new Error("onnxruntime-node's dist/binding.js changed; update scripts/ml-build-plugin.ts");
      return { contents: `const { loadOrtBinding } = require("hearth-ml-native");\n${src.replace(BINDING_REQUIRE, "loadOrtBinding()")}`, loader: "js" };
    });
    build.onResolve({ filter: /^hearth-ml-native$/ }, () => ({ path: "hearth-ml-native", namespace: "hearth-ml" }));
    build.onLoad({ filter: /^hearth-ml-native$/, namespace: "hearth-ml" }, () => ({ contents: loaderSource, loader: "js" }));
  },
};

export const onnxRuntimeTag = tag;
