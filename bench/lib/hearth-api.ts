// Small client for a running Hearth in the knowledge suite: session, uploads, ingestion polling, timed JSON POSTs, /proc memory.
import { readFileSync } from "node:fs";
import { HttpConnection } from "./http-client";
import type { RunningServer } from "./servers";

export interface Session {
  base: string;
  jwt: string;
  productId: string;
  apiToken: string;
}

export interface FileState {
  id: string;
  status: "queued" | "processing" | "ready" | "failed";
  progress: number;
  error: string | null;
  chunk_count: number;
}

async function call<T>(base: string, path: string, init: RequestInit = {}): Promise<T> {
  const res = await fetch(base + path, init);
  const body = (await res.json().catch(() => null)) as { data?: T } | null;
  if (!res.ok || !body) throw new Error(`${init.method ?? "GET"} ${path} answered ${res.status}: ${JSON.stringify(body)?.slice(0, 300)}`);
  return body.data as T;
}

const json = (jwt: string | null, body?: unknown): RequestInit => ({
  method: body === undefined ? "GET" : "POST",
  headers: { "content-type": "application/json", ...(jwt ? { authorization: `Bearer ${jwt}` } : {}) },
  ...(body === undefined ? {} : { body: JSON.stringify(body) }),
});

/** Logs in as the first owner, finds the Default workspace and creates an API token. */
export async function openSession(server: RunningServer, email: string, password: string): Promise<Session> {
  const base = `http://${server.host}:${server.port}`;
  const { token: jwt } = await call<{ token: string }>(base, "/api/auth/login", json(null, { email, password }));
  const products = await call<{ id: string; name: string }[]>(base, "/api/products", json(jwt));
  const ws = products.find((p) => p.name === "Default") ?? products[0];
  if (!ws) throw new Error("GET /api/products returned no workspace");
  const created = await call<{ token: string }>(base, "/api/api-tokens", json(jwt, { product_id: ws.id, token_name: "bench" }));
  return { base, jwt, productId: ws.id, apiToken: created.token };
}

/** Waits until /health reports the embedder "ok" (the worker has loaded the model). */
export async function waitForEmbedder(base: string, timeoutMs: number): Promise<number> {
  const t0 = performance.now();
  for (;;) {
    const h = (await (await fetch(`${base}/health`)).json()) as { checks: { embedder: { status: string; reason?: string } } };
    if (h.checks.embedder.status === "ok") return performance.now() - t0;
    if (h.checks.embedder.status === "unavailable") throw new Error(`embedder unavailable: ${h.checks.embedder.reason}`);
    if (performance.now() - t0 > timeoutMs) throw new Error(`embedder still loading after ${timeoutMs} ms`);
    await Bun.sleep(50);
  }
}

/** Multipart upload into the workspace's Default knowledge base; returns the queued file. */
export async function upload(s: Session, name: string, bytes: Uint8Array): Promise<FileState> {
  const fd = new FormData();
  fd.append("file", new File([bytes], name));
  fd.append("product_id", s.productId);
  return call<FileState>(s.base, "/api/knowledge-base/storage/upload", { method: "POST", headers: { authorization: `Bearer ${s.jwt}` }, body: fd });
}

const NICE = Bun.which("nice");
/** Who sends uploadFromChild's uploads, for a suite's notes; null when curl is not installed (it returns null then). */
export const childUploader: string | null = Bun.which("curl") ? `curl (its own process${NICE ? ", at nice 19" : ""})` : null;

/**
 * The same upload from a separate process (curl), so that sending a big body never stalls the
 * bench's own event loop while it times other requests; null when curl is not installed. curl runs
 * at nice 19: it stands for a client on another machine, and at normal priority on these two cores
 * it took them from the server and from the bench's /health sampler (hostile-ingest, 3 runs each:
 * rows 2.5-4.3 ms against 1.2-3.4 ms with curl at nice 19, idle 1.5-2.2 both ways).
 */
export async function uploadFromChild(s: Session, name: string, path: string): Promise<FileState | null> {
  if (!childUploader) return null;
  const proc = Bun.spawn([...(NICE ? [NICE, "-n", "19"] : []), "curl", "-sS", "-X", "POST", "-H", `authorization: Bearer ${s.jwt}`, "-F", `file=@${path};filename=${name}`, "-F", `product_id=${s.productId}`, `${s.base}/api/knowledge-base/storage/upload`], { stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  const body = JSON.parse(out || "null") as { success?: boolean; data?: FileState; message?: string } | null;
  if (code === 0 && body?.success === false && body.message) throw new Error(body.message);
  if (code !== 0 || !body?.success || !body.data) throw new Error(`curl upload of ${name} failed (exit ${code}): ${err.trim() || out.slice(0, 300)}`);
  return body.data;
}

export const deleteFile = (s: Session, id: string) => call<{ id: string }>(s.base, `/api/knowledge-base/storage/file/${id}`, { method: "DELETE", headers: { authorization: `Bearer ${s.jwt}` } });

export const fileState = (s: Session, id: string) => call<FileState>(s.base, `/api/knowledge-base/storage/file/${id}`, json(s.jwt));

export interface Ingested {
  file: FileState;
  /** ms from `t0` until the file was seen parsed (progress ≥ 0.1) and with its chunks stored (≥ 0.2). */
  parsedMs?: number;
  storedMs?: number;
}

/** Polls the file until it is ready (failed throws) or `timeoutMs` after `t0` passed (then returns the last state). */
export async function waitReady(s: Session, id: string, o: { pollMs: number; timeoutMs: number; t0: number }): Promise<Ingested> {
  const out: Partial<Ingested> = {};
  for (;;) {
    const f = await fileState(s, id);
    const at = performance.now() - o.t0;
    if (f.progress >= 0.1 || f.status === "ready") out.parsedMs ??= at;
    if (f.progress >= 0.2 || f.status === "ready") out.storedMs ??= at;
    if (f.status === "failed") throw new Error(`ingestion of ${id} failed: ${f.error}`);
    if (f.status === "ready" || at > o.timeoutMs) return { ...out, file: f };
    await Bun.sleep(o.pollMs);
  }
}

/** Serializes a JSON POST once, so the timed loop only writes bytes. */
export function buildPost(host: string, port: number, path: string, headers: Record<string, string>, body: unknown): Buffer {
  const payload = Buffer.from(JSON.stringify(body));
  const lines = [`POST ${path} HTTP/1.1`, `Host: ${host}:${port}`, "Connection: keep-alive", "Accept: application/json", "Content-Type: application/json", `Content-Length: ${payload.length}`];
  for (const [k, v] of Object.entries(headers)) lines.push(`${k}: ${v}`);
  return Buffer.concat([Buffer.from(`${lines.join("\r\n")}\r\n\r\n`, "latin1"), payload]);
}

/**
 * Sends the requests round-robin on one keep-alive connection: `warmup` untimed, then up to `count`
 * timed (stopping after `maxMs`); latencies in ms. `check` sees every response body once.
 */
export async function timeRequests(host: string, port: number, reqs: Buffer[], o: { warmup: number; count: number; maxMs: number }, check?: (body: Buffer) => void): Promise<number[]> {
  const conn = await HttpConnection.open(host, port);
  try {
    const send = async (i: number) => {
      const res = await conn.request(reqs[i % reqs.length]!);
      if (res.status !== 200) throw new Error(`expected 200, got ${res.status}: ${res.body.toString("utf8").slice(0, 300)}`);
      return res.body;
    };
    for (let i = 0; i < o.warmup; i++) check?.(await send(i));
    const samples: number[] = [];
    const deadline = performance.now() + o.maxMs;
    for (let i = 0; i < o.count && performance.now() < deadline; i++) {
      const t0 = Bun.nanoseconds();
      await send(i);
      samples.push((Bun.nanoseconds() - t0) / 1e6);
    }
    return samples;
  } finally {
    conn.close();
  }
}

/** VmRSS and VmHWM of a process in MB (NaN when /proc has no such process). */
export function memoryOf(pid: number): { rss: number; hwm: number } {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+)\\s+kB`, "m").exec(status)?.[1] ?? Number.NaN);
    return { rss: kb("VmRSS") / 1024, hwm: kb("VmHWM") / 1024 };
  } catch {
    return { rss: Number.NaN, hwm: Number.NaN };
  }
}

/** Direct children of a process (the parser child of the ingestion), from /proc/<pid>/task/<pid>/children. */
export function childrenOf(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** utime+stime (+ reaped children's) of a process in clock ticks, from /proc/<pid>/stat. */
function cpuTicks(pid: number): number {
  try {
    const rest = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    return [11, 12, 13, 14].reduce((sum, i) => sum + Number(rest[i]), 0);
  } catch {
    return 0;
  }
}

/** Busy clock ticks of the whole machine (every CPU, everything but idle and iowait), from /proc/stat. */
function busyTicks(): number {
  const f = readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/).slice(1).map(Number);
  return f.reduce((a, b) => a + b, 0) - f[3]! - f[4]!;
}

/**
 * CPU used while a phase runs, in cores: by `pids` (the bench and the server, with their reaped
 * children) and by everything else on the machine, so a measurement disturbed by other work shows it.
 */
export function cpuMeter(pids: number[]) {
  const start = { at: performance.now(), busy: busyTicks(), ours: pids.reduce((s, p) => s + cpuTicks(p), 0) };
  return () => {
    const seconds = (performance.now() - start.at) / 1000;
    const busy = (busyTicks() - start.busy) / 100;
    const ours = (pids.reduce((s, p) => s + cpuTicks(p), 0) - start.ours) / 100;
    return { seconds, oursCores: ours / seconds, otherCores: Math.max(0, busy - ours) / seconds };
  };
}

/** Samples a process's RSS (and its children's) every `everyMs` until stopped; keeps the peaks and when they happened. */
export function watchMemory(pid: number, everyMs = 100) {
  const t0 = performance.now();
  const peak = { rss: 0, rssAtMs: 0, childRss: 0, childRssAtMs: 0, samples: 0 };
  const timeline: { at: number; rss: number }[] = [];
  const tick = () => {
    const at = performance.now() - t0;
    const m = memoryOf(pid);
    timeline.push({ at, rss: m.rss });
    if (m.rss > peak.rss) Object.assign(peak, { rss: m.rss, rssAtMs: at });
    for (const c of childrenOf(pid)) {
      const cm = memoryOf(c);
      if (cm.rss > peak.childRss) Object.assign(peak, { childRss: cm.rss, childRssAtMs: at });
    }
    peak.samples++;
  };
  tick();
  const timer = setInterval(tick, everyMs);
  return {
    stop() {
      clearInterval(timer);
      tick();
      /** RSS at the last sample taken at or before `ms` after the start. */
      const rssAt = (ms: number) => timeline.filter((x) => x.at <= ms).at(-1)?.rss ?? Number.NaN;
      return { ...peak, hwm: memoryOf(pid).hwm, rssAt };
    },
  };
}
