// Starts benchmark servers as subprocesses, waits for their "listening on" line, times cold starts, reads RSS.
import { readFileSync } from "node:fs";
import { cpus } from "node:os";
import type { Subprocess } from "bun";
import { buildRequest, HttpConnection } from "./http-client";

export interface ServerSpec {
  /** Short label for messages, e.g. "hearth" or "bare". */
  name: string;
  cmd: string[];
  env: Record<string, string>;
  cwd: string;
}

export interface RunningServer {
  name: string;
  pid: number;
  host: string;
  port: number;
  /** Everything the process printed on stdout so far. */
  stdout(): string;
  /** The last few KB of stderr (drained continuously so the pipe never blocks the server). */
  stderrTail(): string;
  stop(): Promise<void>;
}

const LISTENING = /listening on http:\/\/([0-9.]+):(\d+)/;

/** Every server this process started and has not stopped yet, so an interrupted run can stop them. */
const live = new Set<Subprocess>();

/** Kills (by pid, SIGKILL) the servers this benchmark started that are still running. */
export function killStartedServers() {
  for (const p of live) p.kill("SIGKILL");
  live.clear();
}

/** The environment every server gets: nothing inherited except what a process needs to run. */
export function baseEnv(extra: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = { NO_COLOR: "1" };
  for (const k of ["PATH", "HOME", "TMPDIR", "LANG"]) if (process.env[k]) env[k] = process.env[k]!;
  return { ...env, ...extra };
}

async function drain(stream: ReadableStream<Uint8Array>, onText: (s: string) => void) {
  const decoder = new TextDecoder();
  try {
    for await (const chunk of stream) onText(decoder.decode(chunk, { stream: true }));
  } catch {
    // The process went away; nothing more to read.
  }
}

/**
 * Spawns the server and resolves once it printed its listening line (port chosen by the OS).
 * `spawnedAt` is the performance.now() taken just before the spawn, for cold-start timing.
 */
export async function startServer(spec: ServerSpec, timeoutMs = 15_000): Promise<RunningServer & { spawnedAt: number }> {
  const spawnedAt = performance.now();
  const proc: Subprocess<"ignore", "pipe", "pipe"> = Bun.spawn(spec.cmd, { cwd: spec.cwd, env: spec.env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  live.add(proc);
  void proc.exited.then(() => live.delete(proc));
  let out = "";
  let err = "";
  let onLine: (() => void) | null = null;
  void drain(proc.stdout, (s) => {
    out += s;
    onLine?.();
  });
  void drain(proc.stderr, (s) => {
    err = (err + s).slice(-4096);
  });

  const address = await new Promise<{ host: string; port: number }>((resolve, reject) => {
    const timer = setTimeout(() => done(new Error(`${spec.name} printed no "listening on" line within ${timeoutMs} ms`)), timeoutMs);
    const done = (e: Error | null, v?: { host: string; port: number }) => {
      clearTimeout(timer);
      onLine = null;
      if (e) reject(e);
      else resolve(v!);
    };
    onLine = () => {
      const m = LISTENING.exec(out);
      if (m) done(null, { host: m[1]!, port: Number(m[2]) });
    };
    void proc.exited.then((code) => done(new Error(`${spec.name} exited with ${code} before listening`)));
    onLine();
  }).catch(async (e: Error) => {
    proc.kill("SIGKILL");
    await proc.exited;
    throw new Error(`${e.message}\n  command: ${spec.cmd.join(" ")}\n  stdout: ${out.trim().slice(-1000)}\n  stderr: ${err.trim().slice(-1000)}`);
  });

  return {
    name: spec.name,
    pid: proc.pid,
    ...address,
    spawnedAt,
    stdout: () => out,
    stderrTail: () => err,
    stop: () => stopProcess(proc),
  };
}

/** SIGTERM, then SIGKILL if the process has not exited within `graceMs`. */
async function stopProcess(proc: Subprocess, graceMs = 5_000): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  proc.kill("SIGTERM");
  const timer = setTimeout(() => proc.kill("SIGKILL"), graceMs);
  await proc.exited;
  clearTimeout(timer);
}

export interface ColdStart {
  /** Spawn → first 200 from `path`, in ms. */
  ms: number;
  /** Spawn → "listening on" line, in ms. */
  listeningMs: number;
}

/** Starts a server, requests `path` until it answers 200, and stops it again. */
export async function measureColdStart(spec: ServerSpec, path = "/health", timeoutMs = 15_000): Promise<ColdStart> {
  const server = await startServer(spec, timeoutMs);
  const listeningMs = performance.now() - server.spawnedAt;
  try {
    const conn = await HttpConnection.open(server.host, server.port);
    try {
      const req = buildRequest(server.host, server.port, path);
      for (;;) {
        const res = await conn.request(req);
        if (res.status === 200) return { ms: performance.now() - server.spawnedAt, listeningMs };
        if (performance.now() - server.spawnedAt > timeoutMs) throw new Error(`${spec.name} ${path} answered ${res.status}, never 200`);
        await Bun.sleep(1);
      }
    } finally {
      conn.close();
    }
  } finally {
    await server.stop();
  }
}

/** Resident set size of a process in MB, from /proc/<pid>/status (VmRSS); NaN where /proc is missing. */
export function readRssMb(pid: number): number {
  try {
    const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) / 1024 : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

/**
 * CPU time (ns) the process's main thread has run, from /proc/<pid>/task/<pid>/schedstat (NaN where
 * there is none). The thread that serves requests in both Hearth and a bare Bun server.
 */
export function readMainThreadCpuNs(pid: number): number {
  try {
    return Number(readFileSync(`/proc/${pid}/task/${pid}/schedstat`, "utf8").split(" ")[0]);
  } catch {
    return Number.NaN;
  }
}

/**
 * Pins one thread to `cpus` (taskset's list, e.g. "1" or "0-1"): a process's main thread when `tid`
 * is its pid, its other threads left where they were. False where taskset (util-linux) is missing
 * or refuses; the caller then leaves out what needed the placement.
 */
export function pinThread(tid: number, cpus: string): boolean {
  try {
    return Bun.spawnSync(["taskset", "-p", "-c", cpus, String(tid)], { stdout: "ignore", stderr: "ignore" }).exitCode === 0;
  } catch {
    return false;
  }
}

/** Every CPU of the machine as a taskset list (the bench's own affinity may be narrower). */
export const everyCpu = () => `0-${cpus().length - 1}`;
