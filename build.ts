// Compiles Hearth into one linux-x64 executable, dist/hearth (`npm run build`), with the sqlite-vec
// extension embedded as `vec0.so` for src/platform/native.ts to extract at first start.
import { existsSync, mkdirSync, rmSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { mlBuildPlugin } from "./scripts/ml-build-plugin";
import { consoleBuildPlugin } from "./scripts/console-build-plugin";
import { recordBytecodeOrder } from "./scripts/bytecode-order";

const root = import.meta.dir;
const entry = join(root, "src/main.ts");
const outfile = join(root, "dist/hearth");
// The loadable extension is a separate file that SQLite must dlopen from disk, so it cannot be
// bundled as code: it rides along as an embedded file under its own name.
const vec0 = join(root, "node_modules/sqlite-vec-linux-x64/vec0.so");
// Workers are separate entry points in a compiled binary (Bun does not find them by itself).
const workers = [
  join(root, "src/features/knowledge/ingest/worker.ts"),
  join(root, "src/features/knowledge/ingest/launch-worker.ts"),
  join(root, "src/features/transcription/worker.ts"),
  join(root, "src/platform/db/checkpoint-worker.ts"),
  join(root, "src/platform/db/fold-worker.ts"),
  join(root, "src/platform/http/multipart-worker.ts"),
  join(root, "src/features/system/backup-worker.ts"),
];

function fail(message: string): never {
  process.stderr.write(`build failed: ${message}\n`);
  process.exit(1);
}

if (!existsSync(vec0)) {
  fail(
    `${relative(root, vec0)} is missing. It is an optional dependency npm installs only on linux-x64; ` +
      "build on linux-x64 after `npm ci`.",
  );
}
mkdirSync(join(root, "dist"), { recursive: true });
// The binary is for linux-x64: only there can this script run it (sanity check, layout profile).
const canRun = process.platform === "linux" && process.arch === "x64";

const started = performance.now();
// The console is built first (hashed names), once for both compiles, and its files embedded; see the plugin.
const plugins = [mlBuildPlugin, await consoleBuildPlugin(join(root, "dist/console"))];

/** One Bun.build of the binary; `bytecodeOrder` is the profile from scripts/bytecode-order.ts. */
async function compile(bytecodeOrder: string | null) {
  const result = await Bun.build({
    // vec0.so as an extra entry point becomes an embedded file, listed in Bun.embeddedFiles.
    entrypoints: [entry, ...workers, vec0],
    plugins,
    root,
    target: "bun",
    format: "esm",
    compile: {
      target: "bun-linux-x64",
      outfile,
      // Hearth reads its settings from the environment and flags only; a bunfig.toml or
      // tsconfig.json in the working directory must not change how the binary behaves.
      autoloadBunfig: false,
      autoloadTsconfig: false,
      autoloadPackageJson: false,
      bytecodeOrder,
      // Tier-up thresholds ×32 until main.ts says start-up is over: the run-once start-up code is
      // not JIT-compiled. Measured: ~2 MB less idle RSS and ~25 ms quicker to the first /health.
      jitPolicy: 32,
    },
    loader: { ".so": "file" },
    // Bun would name embedded files `vec0-<hash>.so`; native.ts looks them up by their plain name.
    // The swagger-ui-dist assets keep their names too (they are served from fixed routes), and the
    // console's files keep the hashed names its own build gave them.
    naming: { asset: "[name].[ext]" },
    // Only syntax is minified: Elysia reads its handlers' source to see which context they use, and
    // its reader warns on (and falls back from) whitespace- or identifier-minified functions.
    minify: { whitespace: false, syntax: true, identifiers: false, keepNames: true },
    // Stack traces in the binary point at src/, not at the minified bundle (embedded, compressed).
    // Measured: it adds ~0.5 MB to idle RSS (it is not decoded at start).
    sourcemap: "inline",
    // Precompiled bytecode: measured here, start to first /health went from ~250 ms to ~130 ms
    // (the binary grows by ~9 MB). Without it idle RSS is ~2 MB higher: 6 MB fewer
    // pages of the binary, 8 MB more of parsed code on the heap.
    bytecode: true,
    throw: false,
  });
  if (!result.success) {
    for (const log of result.logs) process.stderr.write(`${String(log)}\n`);
    fail(`Bun.build reported ${result.logs.length} problem(s) compiling ${relative(root, entry)} (see above)`);
  }
  for (const log of result.logs) process.stderr.write(`${String(log)}\n`);
  if (!existsSync(outfile)) fail(`Bun.build succeeded but ${relative(root, outfile)} was not written`);
  // The source map is embedded in the binary (compressed); the copies Bun also writes beside it
  // (dist/hearth.map, dist/vec0.js.map) are not needed to run or to debug it.
  for (const out of result.outputs) if (out.kind === "sourcemap") rmSync(out.path, { force: true });
}

await compile(null);
// The layout profile needs a run of the binary, so only where it runs; without one the binary
// works the same, it only keeps more of itself in memory.
let layout = "no bytecode layout profile (not built on linux-x64)";
if (canRun) {
  try {
    await compile(await recordBytecodeOrder(outfile, join(root, "dist")));
    layout = "bytecode laid out by a recorded start";
  } catch (e) {
    layout = `no bytecode layout profile (recording failed: ${(e as Error).message})`;
    process.stderr.write(`warning: ${layout}\n`);
  }
}
const seconds = ((performance.now() - started) / 1000).toFixed(1);

// A quick sanity check when this machine can run the result: the binary starts and knows its version.
if (canRun) {
  const run = Bun.spawnSync([outfile, "--version"], { stdout: "pipe", stderr: "pipe", env: { PATH: process.env.PATH ?? "" } });
  if (run.exitCode !== 0) fail(`${relative(root, outfile)} --version exited ${run.exitCode}: ${run.stderr.toString().trim()}`);
}

const mb = (statSync(outfile).size / 1024 / 1024).toFixed(1);
console.log(`built ${relative(root, outfile)} (linux-x64, ${mb} MB, ${layout}) in ${seconds} s`);
