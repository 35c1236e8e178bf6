// Benchmark entry point (`npm run bench`, or `bun bench/run.ts <suite>`): runs suites, prints tables, writes bench/results/latest.json.
import { mkdtempSync, rmSync } from "node:fs";
import { cpus, tmpdir, totalmem } from "node:os";
import { join, resolve } from "node:path";
import { platformSuite } from "./platform";
import { knowledgeSuite } from "./knowledge";
import { fusionSuite } from "./fusion";
import { retrievalSuite } from "./retrieval";
import { assistantSuite } from "./assistant";
import { transcriptionSuite } from "./transcription";
import { hostileRequestsSuite } from "./hostile-requests";
import { agentsSuite } from "./agents";
import { communicatorsSuite } from "./communicators";
import { hostileIngestSuite } from "./hostile-ingest";
import { fairnessSuite } from "./fairness";
import { webhooksSuite } from "./webhooks";
import { hostileAudioSuite } from "./hostile-audio";
import { workflowsSuite } from "./workflows";
import { formatSummary, formatTable, writeJson } from "./lib/report";
import { killStartedServers } from "./lib/servers";
import { modelsDirOf, type Measurement, type Suite, type SuiteContext } from "./lib/suite";

/** Every suite, in the order a full run executes them. A new suite is one file plus one line here. */
const SUITES: readonly Suite[] = [platformSuite, knowledgeSuite, fusionSuite, retrievalSuite, assistantSuite, transcriptionSuite, hostileRequestsSuite, agentsSuite, fairnessSuite, webhooksSuite, hostileAudioSuite, hostileIngestSuite, workflowsSuite, communicatorsSuite];

const FLAGS: Record<string, string> = {
  "--list": "list the suites and exit",
  "--source": "platform: run Hearth as `bun src/main.ts` even when dist/hearth exists",
  "--no-build": "platform: use dist/hearth as it is, even when older than src/",
  "--save-baseline": "retrieval: store this run's per-question scores as the baseline later runs are compared with",
};

const root = resolve(import.meta.dir, "..");
const resultsFile = join(root, "bench/results/latest.json");

function usage(): string {
  const suites = SUITES.map((s) => `  ${s.name.padEnd(12)}${s.description}`).join("\n");
  const flags = Object.entries(FLAGS).map(([f, h]) => `  ${f.padEnd(12)}${h}`).join("\n");
  return `Usage: bun bench/run.ts [suite...] [flags]\n\nSuites (all when none is named):\n${suites}\n\nFlags:\n${flags}\n`;
}

function gitRevision(): string | null {
  const r = Bun.spawnSync(["git", "rev-parse", "--short", "HEAD"], { cwd: root, stdout: "pipe", stderr: "ignore" });
  if (r.exitCode !== 0) return null;
  const dirty = Bun.spawnSync(["git", "status", "--porcelain"], { cwd: root, stdout: "pipe", stderr: "ignore" }).stdout.toString().trim() !== "";
  return `${r.stdout.toString().trim()}${dirty ? "+dirty" : ""}`;
}

async function main(argv: string[]): Promise<number> {
  const names = argv.filter((a) => !a.startsWith("--"));
  const flags = new Set(argv.filter((a) => a.startsWith("--")));
  if (flags.has("--help") || flags.has("-h")) return void process.stdout.write(usage()), 0;
  if (flags.has("--list")) return void process.stdout.write(SUITES.map((s) => `${s.name}\t${s.description}\n`).join("")), 0;
  const unknownFlags = [...flags].filter((f) => !(f in FLAGS));
  const unknownSuites = names.filter((n) => !SUITES.some((s) => s.name === n));
  if (unknownFlags.length || unknownSuites.length) {
    process.stderr.write(`unknown ${[...unknownSuites.map((n) => `suite "${n}"`), ...unknownFlags.map((f) => `flag ${f}`)].join(", ")}\n\n${usage()}`);
    return 2;
  }
  const selected = names.length ? SUITES.filter((s) => names.includes(s.name)) : SUITES;

  const tmp = mkdtempSync(join(tmpdir(), "hearth-bench-"));
  const cleanup = () => {
    killStartedServers();
    rmSync(tmp, { recursive: true, force: true });
  };
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.on(signal, () => {
      cleanup();
      process.exit(130);
    });
  }

  const started = performance.now();
  const machine = { platform: process.platform, arch: process.arch, cpus: cpus().length, cpuModel: cpus()[0]?.model ?? null, memoryGb: Math.round(totalmem() / 2 ** 30), bun: Bun.version };
  const output: Record<string, unknown> = { generatedAt: new Date().toISOString(), command: `bun bench/run.ts ${argv.join(" ")}`.trim(), revision: gitRevision(), machine, suites: {} };
  const suitesOut = output.suites as Record<string, unknown>;
  const all: Measurement[] = [];
  let failed = false;

  process.stdout.write(`Hearth benchmarks: ${selected.map((s) => s.name).join(", ")} (bun ${Bun.version}, ${machine.cpus} CPUs, ${machine.cpuModel ?? "unknown CPU"})\n`);
  try {
    for (const suite of selected) {
      const ctx: SuiteContext = {
        root,
        bun: process.execPath,
        tmp: mkdtempSync(join(tmp, `${suite.name}-`)),
        modelsDir: modelsDirOf(root),
        flags,
        log: (msg) => process.stderr.write(`[${suite.name} ${((performance.now() - started) / 1000).toFixed(1)}s] ${msg}\n`),
      };
      const t0 = performance.now();
      try {
        const result = await suite.run(ctx);
        const durationMs = Math.round(performance.now() - t0);
        all.push(...result.measurements);
        suitesOut[suite.name] = { durationMs, info: result.info, notes: result.notes, measurements: result.measurements };
        process.stdout.write(`\n== ${suite.name} (${(durationMs / 1000).toFixed(1)} s) ==\n${formatTable(result.measurements)}\n`);
        for (const m of result.measurements) if (m.note) process.stdout.write(`  ${m.name}: ${m.note}\n`);
        for (const n of result.notes) process.stdout.write(`  note: ${n}\n`);
      } catch (e) {
        failed = true;
        const message = (e as Error).stack ?? String(e);
        suitesOut[suite.name] = { durationMs: Math.round(performance.now() - t0), error: message };
        process.stdout.write(`\n== ${suite.name}: FAILED ==\n${message}\n`);
      }
    }
  } finally {
    cleanup();
  }

  output.durationMs = Math.round(performance.now() - started);
  writeJson(resultsFile, output);
  process.stdout.write(`\n${formatSummary(all)}; total ${(Number(output.durationMs) / 1000).toFixed(1)} s; JSON: ${resultsFile.slice(root.length + 1)}\n`);
  return failed ? 1 : 0;
}

process.exit(await main(process.argv.slice(2)));
