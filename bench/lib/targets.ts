// Picks what the platform suite runs: dist/hearth (rebuilt when missing or stale) or `bun src/main.ts`, and a matching bare baseline.
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import type { SuiteContext } from "./suite";
import { baseEnv, startServer } from "./servers";

export interface Targets {
  mode: "binary" | "source";
  /** Command that starts Hearth, before `serve --port 0`. */
  hearth: string[];
  bare: string[];
  bareMode: "binary" | "source";
  notes: string[];
}

const BUILD_WAIT_MS = 60_000;
const BUILD_POLL_MS = 5_000;

function newestMtime(paths: string[]): number {
  let newest = 0;
  for (const p of paths) {
    if (!existsSync(p)) continue;
    const st = statSync(p);
    if (st.isDirectory()) {
      for (const f of readdirSync(p, { recursive: true }) as string[]) {
        const s = statSync(join(p, f));
        if (s.isFile()) newest = Math.max(newest, s.mtimeMs);
      }
    } else newest = Math.max(newest, st.mtimeMs);
  }
  return newest;
}

function runs(cmd: string[], cwd: string, timeout: number): { ok: boolean; output: string } {
  const r = Bun.spawnSync(cmd, { cwd, stdout: "pipe", stderr: "pipe", timeout, env: { ...process.env, NO_COLOR: "1" } });
  const output = `${r.stdout.toString()}${r.stderr.toString()}`.trim();
  return { ok: r.exitCode === 0, output: output || `exit ${r.exitCode ?? r.signalCode}, no output` };
}

/** Runs build.ts (waiting for it to appear, another change may be writing it) and reports whether it worked. */
async function build(ctx: SuiteContext, notes: string[]): Promise<boolean> {
  const script = join(ctx.root, "build.ts");
  const waitUntil = performance.now() + BUILD_WAIT_MS;
  while (!existsSync(script) && performance.now() < waitUntil) {
    ctx.log(`build.ts not there yet; waiting (up to ${BUILD_WAIT_MS / 1000} s)`);
    await Bun.sleep(BUILD_POLL_MS);
  }
  if (!existsSync(script)) {
    notes.push("build.ts is missing, so dist/hearth could not be built");
    return false;
  }
  ctx.log("building dist/hearth (bun build.ts)");
  const r = runs([ctx.bun, script], ctx.root, 180_000);
  if (!r.ok) notes.push(`bun build.ts failed: ${r.output.split("\n").slice(-3).join(" | ")}`);
  return r.ok;
}

export async function prepareTargets(ctx: SuiteContext): Promise<Targets> {
  const notes: string[] = [];
  const binary = join(ctx.root, "dist/hearth");
  const source = [ctx.bun, join(ctx.root, "src/main.ts")];

  let mode: Targets["mode"] = "source";
  if (ctx.flags.has("--source")) notes.push("--source: Hearth runs as `bun src/main.ts`, the baseline as `bun bare-server.ts`");
  else {
    const inputs = newestMtime([join(ctx.root, "src"), join(ctx.root, "build.ts"), join(ctx.root, "package.json")]);
    const fresh = existsSync(binary) && statSync(binary).mtimeMs >= inputs;
    if (existsSync(binary) && (fresh || ctx.flags.has("--no-build"))) {
      if (!fresh) notes.push("dist/hearth is older than src/ (--no-build: measured as it is)");
    } else if (!(await build(ctx, notes)) && existsSync(binary)) {
      notes.push("dist/hearth may be stale: the rebuild failed, the existing binary was measured");
    }
    if (existsSync(binary)) {
      const check = runs([binary, "--version"], ctx.root, 10_000);
      if (check.ok) mode = "binary";
      else notes.push(`dist/hearth --version failed (${check.output.slice(0, 200)})`);
    }
    if (mode === "source") notes.push("no working dist/hearth: Hearth measured as `bun src/main.ts`; binary figures are MISSING");
  }

  const bare = fixtureCommand(ctx, mode, "bare-server", notes);
  const bareMode: Targets["bareMode"] = bare[0] === ctx.bun ? "source" : "binary";

  return { mode, hearth: mode === "binary" ? [binary] : source, bare, bareMode, notes };
}

/**
 * The command that runs `bench/fixtures/<name>.ts` the way Hearth runs (`mode`): compiled when Hearth
 * is, so a ratio against it is Hearth's own cost; from source when that fails (said in `notes`).
 */
export function fixtureCommand(ctx: SuiteContext, mode: Targets["mode"], name: string, notes: string[]): string[] {
  const src = join(ctx.root, `bench/fixtures/${name}.ts`);
  if (mode !== "binary") return [ctx.bun, src];
  const out = join(ctx.tmp, name);
  const r = runs([ctx.bun, "build", "--compile", "--minify", src, "--outfile", out], ctx.root, 60_000);
  if (r.ok && existsSync(out)) return [out];
  notes.push(`could not compile ${name}.ts, it runs from source (${r.output.slice(0, 200)})`);
  return [ctx.bun, src];
}

/** Starts Hearth as `targets` says, on loopback with a free port, with `env` on top of the bench's base environment. */
export function startHearth(ctx: SuiteContext, targets: Targets, env: Record<string, string>, timeoutMs = 30_000) {
  return startServer({ name: "hearth", cmd: [...targets.hearth, "serve", "--host", "127.0.0.1", "--port", "0"], env: baseEnv(env), cwd: ctx.root }, timeoutMs);
}
