// Minimal keep-alive HTTP/1.1 client over Bun.connect, so client overhead stays small and equal for every server.
import { summarize, type LatencySummary } from "./stats";

export interface HttpResponse {
  status: number;
  body: Buffer;
}

const HEAD_END = Buffer.from("\r\n\r\n");

/** One TCP connection that sends one request at a time and parses the response (Content-Length or chunked). */
export class HttpConnection {
  private buffer: Buffer = Buffer.alloc(0);
  private pending: { resolve: (r: HttpResponse) => void; reject: (e: Error) => void } | null = null;
  private unsent: Buffer | null = null;
  private closed = false;

  private constructor(private socket: Bun.Socket<undefined> | null) {}

  static async open(host: string, port: number): Promise<HttpConnection> {
    const conn = new HttpConnection(null);
    conn.socket = await Bun.connect({
      hostname: host,
      port,
      socket: {
        data: (_s, chunk) => conn.onData(chunk),
        drain: (s) => conn.flush(s),
        close: () => conn.fail(new Error("connection closed by server")),
        error: (_s, e) => conn.fail(e),
      },
    });
    conn.socket.setNoDelay(true);
    return conn;
  }

  /** Sends the raw request bytes (built once by `buildRequest`) and resolves with the whole response. */
  request(raw: Buffer): Promise<HttpResponse> {
    if (this.closed) return Promise.reject(new Error("connection is closed"));
    if (this.pending) return Promise.reject(new Error("one request at a time per connection"));
    return new Promise((resolve, reject) => {
      this.pending = { resolve, reject };
      this.unsent = raw;
      this.flush(this.socket!);
    });
  }

  close() {
    this.closed = true;
    this.socket?.end();
  }

  private flush(s: Bun.Socket<undefined>) {
    if (!this.unsent) return;
    const written = s.write(this.unsent);
    this.unsent = written >= this.unsent.length ? null : this.unsent.subarray(Math.max(0, written));
  }

  private fail(e: Error) {
    this.closed = true;
    const p = this.pending;
    this.pending = null;
    p?.reject(e);
  }

  private onData(chunk: Buffer) {
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
    const parsed = parseResponse(this.buffer);
    if (!parsed) return;
    this.buffer = this.buffer.subarray(parsed.consumed);
    const p = this.pending;
    this.pending = null;
    p?.resolve(parsed.response);
  }
}

/** Parses one complete response from the front of `buf`, or returns null when more bytes are needed. */
function parseResponse(buf: Buffer): { response: HttpResponse; consumed: number } | null {
  const headEnd = buf.indexOf(HEAD_END);
  if (headEnd < 0) return null;
  const head = buf.subarray(0, headEnd).toString("latin1");
  const status = Number(head.slice(9, 12));
  const lengthMatch = /\r\ncontent-length:\s*(\d+)/i.exec(head);
  const bodyStart = headEnd + 4;
  if (lengthMatch) {
    const end = bodyStart + Number(lengthMatch[1]);
    if (buf.length < end) return null;
    return { response: { status, body: buf.subarray(bodyStart, end) }, consumed: end };
  }
  if (/\r\ntransfer-encoding:\s*chunked/i.test(head)) {
    const parts: Buffer[] = [];
    let at = bodyStart;
    for (;;) {
      const lineEnd = buf.indexOf("\r\n", at);
      if (lineEnd < 0) return null;
      const size = parseInt(buf.subarray(at, lineEnd).toString("latin1"), 16);
      const next = lineEnd + 2 + size + 2;
      if (buf.length < next) return null;
      if (size === 0) return { response: { status, body: Buffer.concat(parts) }, consumed: next };
      parts.push(buf.subarray(lineEnd + 2, lineEnd + 2 + size));
      at = next;
    }
  }
  // No length and not chunked: only valid for bodiless statuses.
  return { response: { status, body: Buffer.alloc(0) }, consumed: bodyStart };
}

/** Serializes a GET request once, so the timed loop only writes bytes. */
export function buildRequest(host: string, port: number, path: string, headers: Record<string, string> = {}): Buffer {
  const lines = [`GET ${path} HTTP/1.1`, `Host: ${host}:${port}`, "Connection: keep-alive", "Accept: application/json", "User-Agent: hearth-bench"];
  for (const [k, v] of Object.entries(headers)) lines.push(`${k}: ${v}`);
  return Buffer.from(`${lines.join("\r\n")}\r\n\r\n`, "latin1");
}

export interface Target {
  host: string;
  port: number;
  request: Buffer;
  /** The server's main-thread CPU time in ns (readMainThreadCpuNs), read around each timed loop when given. */
  cpuNs?: () => number;
}

async function expectOk(conn: HttpConnection, req: Buffer): Promise<HttpResponse> {
  const res = await conn.request(req);
  if (res.status !== 200) throw new Error(`expected 200, got ${res.status}: ${res.body.toString("utf8").slice(0, 300)}`);
  return res;
}

export interface SequentialOptions {
  warmup: number;
  /** Warm-up also stops after this long (a slow server gets fewer warm-up requests). */
  warmupMaxMs?: number;
  count: number;
  /** Stops early (with fewer samples) once this much time has been spent measuring. */
  maxMs: number;
}

export interface SequentialResult extends LatencySummary {
  /** Response body size of the last response, to show both servers send similar payloads. */
  bodyBytes: number;
  /** The server's main-thread CPU per request over the timed requests (µs), when the target can tell. */
  cpuUsPerRequest?: number;
}

/** Sequential requests on one keep-alive connection; latencies in microseconds. */
export async function measureSequential(t: Target, o: SequentialOptions): Promise<SequentialResult> {
  const { samples, bodyBytes, cpuNs } = await sequentialSamples(t, o, o.count, o.maxMs);
  return { ...summarize(samples), bodyBytes, ...cpuPerRequest(cpuNs, samples.length) };
}

const cpuPerRequest = (cpuNs: number, requests: number) => (Number.isFinite(cpuNs) && requests > 0 ? { cpuUsPerRequest: cpuNs / 1000 / requests } : {});

async function sequentialSamples(t: Target, o: SequentialOptions, count: number, maxMs: number): Promise<{ samples: number[]; bodyBytes: number; cpuNs: number }> {
  const conn = await HttpConnection.open(t.host, t.port);
  try {
    let last = await expectOk(conn, t.request);
    const warmEnd = performance.now() + (o.warmupMaxMs ?? Number.POSITIVE_INFINITY);
    for (let i = 1; i < o.warmup && performance.now() < warmEnd; i++) await expectOk(conn, t.request);
    const samples: number[] = [];
    const cpu0 = t.cpuNs?.() ?? Number.NaN;
    const deadline = performance.now() + maxMs;
    for (let i = 0; i < count && performance.now() < deadline; i++) {
      const t0 = Bun.nanoseconds();
      last = await expectOk(conn, t.request);
      samples.push((Bun.nanoseconds() - t0) / 1000);
    }
    const cpuNs = (t.cpuNs?.() ?? Number.NaN) - cpu0;
    return { samples, bodyBytes: last.body.length, cpuNs };
  } finally {
    conn.close();
  }
}

export interface ConcurrentResult {
  concurrency: number;
  requests: number;
  seconds: number;
  rps: number;
  /** Latency under load, in microseconds. */
  latency: LatencySummary;
  /** Requests/s of each slice, when measured in turns (the figure is their median). */
  rounds?: number[];
}

/** `concurrency` connections, each with one request in flight, for `warmupMs` then `durationMs`. */
export async function measureConcurrent(t: Target, concurrency: number, warmupMs: number, durationMs: number): Promise<ConcurrentResult> {
  const conns = await Promise.all(Array.from({ length: concurrency }, () => HttpConnection.open(t.host, t.port)));
  try {
    const loop = async (conn: HttpConnection, until: number, samples: number[] | null) => {
      while (performance.now() < until) {
        const t0 = Bun.nanoseconds();
        await expectOk(conn, t.request);
        samples?.push((Bun.nanoseconds() - t0) / 1000);
      }
    };
    const warmEnd = performance.now() + warmupMs;
    await Promise.all(conns.map((c) => loop(c, warmEnd, null)));
    const samples: number[] = [];
    const start = performance.now();
    await Promise.all(conns.map((c) => loop(c, start + durationMs, samples)));
    const seconds = (performance.now() - start) / 1000;
    return { concurrency, requests: samples.length, seconds, rps: samples.length / seconds, latency: summarize(samples) };
  } finally {
    for (const c of conns) c.close();
  }
}

/**
 * Several targets measured in turns: `rounds` rounds, each giving every target one slice (the
 * order rotating from round to round), so that a machine that speeds up or slows down during the
 * run moves all of them alike; a ratio between targets then compares like with like. (Measured one
 * after another, the same bare server ran at 74,000 and at 100,000 requests/s in two runs a minute
 * apart on a 2-core VM.)
 */
async function inTurns<T>(rounds: number, count: number, slice: (target: number, round: number) => Promise<T>): Promise<T[][]> {
  const out: T[][] = Array.from({ length: count }, () => []);
  for (let r = 0; r < rounds; r++) {
    for (let k = 0; k < count; k++) {
      const target = (k + r) % count;
      out[target]!.push(await slice(target, r));
    }
  }
  return out;
}

/** Sequential latency of each target, measured in turns (see inTurns); a target's slices are pooled. */
export async function measureSequentialInTurns(targets: Target[], o: SequentialOptions & { rounds: number }): Promise<SequentialResult[]> {
  const slices = await inTurns(o.rounds, targets.length, (k, round) =>
    sequentialSamples(targets[k]!, round === 0 ? o : { ...o, warmup: Math.min(o.warmup, 200) }, Math.ceil(o.count / o.rounds), o.maxMs / o.rounds),
  );
  return slices.map((s) => {
    const samples = s.flatMap((x) => x.samples);
    return { ...summarize(samples), bodyBytes: s.at(-1)!.bodyBytes, ...cpuPerRequest(s.reduce((sum, x) => sum + x.cpuNs, 0), samples.length) };
  });
}

/** Requests/s of each target with `concurrency` in flight, in turns (see inTurns): the median of its slices. */
export async function measureConcurrentInTurns(targets: Target[], concurrency: number, warmupMs: number, sliceMs: number, rounds: number): Promise<ConcurrentResult[]> {
  const slices = await inTurns(rounds, targets.length, (k, round) => measureConcurrent(targets[k]!, concurrency, round === 0 ? warmupMs : Math.min(warmupMs, 200), sliceMs));
  return slices.map((s) => {
    const byRps = [...s].sort((a, b) => a.rps - b.rps);
    const mid = byRps[Math.floor((byRps.length - 1) / 2)]!;
    return { ...mid, rounds: s.map((x) => Math.round(x.rps)) };
  });
}
