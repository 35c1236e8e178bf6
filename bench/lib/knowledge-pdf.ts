// Knowledge suite, PDF part: cheap authenticated GETs (JWT and API token, alternating) while a big PDF ingests, vs idle, with server memory.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { bigPdf } from "./corpus";
import { childUploader, cpuMeter, memoryOf, openSession, upload, uploadFromChild, waitForEmbedder, waitReady, watchMemory, type Session } from "./hearth-api";
import { buildRequest, HttpConnection } from "./http-client";
import { startServer, type ServerSpec } from "./servers";
import { summarize, type LatencySummary } from "./stats";
import type { SuiteContext } from "./suite";

export interface PdfOptions {
  pages: number;
  maxBuildMs: number;
  targetBytes: number;
  windowMs: number;
  idleMs: number;
  email: string;
  password: string;
}

interface Sample {
  us: number;
  at: number;
}

/** The GETs timed, sent in turn on one keep-alive connection so both see the same moments. */
const endpoints = (s: Session, host: string, port: number) => [
  { name: "GET /api/auth/me (JWT)", request: buildRequest(host, port, "/api/auth/me", { Authorization: `Bearer ${s.jwt}` }) },
  { name: "GET /api/api-token/auth/validate (API token)", request: buildRequest(host, port, "/api/api-token/auth/validate", { "X-API-Token": s.apiToken }) },
];

/** Sends the requests in turn until `stop()`; one sample list per request, latencies in µs, `at` in ms since `t0`. */
async function alternate(conn: HttpConnection, requests: Buffer[], stop: () => boolean, t0: number): Promise<Sample[][]> {
  const out: Sample[][] = requests.map(() => []);
  for (let i = 0; !stop() && i < 4_000_000; i++) {
    const k = i % requests.length;
    const a = Bun.nanoseconds();
    const res = await conn.request(requests[k]!);
    if (res.status !== 200) throw new Error(`GET answered ${res.status}: ${res.body.toString("utf8").slice(0, 200)}`);
    out[k]!.push({ us: (Bun.nanoseconds() - a) / 1000, at: performance.now() - t0 });
  }
  return out;
}

export interface EndpointResult {
  name: string;
  idle: LatencySummary;
  during: LatencySummary;
}

/** Builds the PDF, starts a fresh Hearth, times the GETs idle, then during `windowMs` of the PDF's ingestion. */
export async function pdfIngest(ctx: SuiteContext, spec: (dir: string) => ServerSpec, o: PdfOptions) {
  ctx.log(`building a PDF (up to ${o.pages} text pages, ${o.maxBuildMs / 1000} s) padded to ${(o.targetBytes / 1e6).toFixed(1)} MB`);
  const tb = performance.now();
  const pdf = await bigPdf(o.pages, o.maxBuildMs, o.targetBytes);
  const buildMs = performance.now() - tb;
  const dir = join(ctx.tmp, "pdf");
  mkdirSync(dir);
  const pdfPath = join(ctx.tmp, "big.pdf");
  writeFileSync(pdfPath, pdf.bytes);
  const server = await startServer(spec(dir), 30_000);
  try {
    const s = await openSession(server, o.email, o.password);
    await waitForEmbedder(s.base, 60_000);
    const eps = endpoints(s, server.host, server.port);
    const conn = await HttpConnection.open(server.host, server.port);
    try {
      ctx.log("idle GET latency");
      const warm = performance.now() + 1_000;
      await alternate(conn, eps.map((e) => e.request), () => performance.now() > warm, warm);
      Bun.gc(true);
      const idleRss = memoryOf(server.pid);
      const idleEnd = performance.now() + o.idleMs;
      const idle = await alternate(conn, eps.map((e) => e.request), () => performance.now() > idleEnd, performance.now());

      ctx.log(`uploading ${(pdf.bytes.length / 1e6).toFixed(1)} MB PDF; timing the GETs for up to ${o.windowMs / 1000} s of ingestion`);
      const watch = watchMemory(server.pid, 100);
      const cpu = cpuMeter([process.pid, server.pid]);
      let stop = false;
      const t0 = performance.now();
      const loop = alternate(conn, eps.map((e) => e.request), () => stop, t0);
      let uploadedMs = Number.NaN;
      let result;
      const uploader = childUploader ?? "fetch in the bench process";
      try {
        const queued = (await uploadFromChild(s, "big.pdf", pdfPath)) ?? (await upload(s, "big.pdf", pdf.bytes));
        uploadedMs = performance.now() - t0;
        result = await waitReady(s, queued.id, { pollMs: 250, timeoutMs: o.windowMs, t0 });
      } finally {
        stop = true;
      }
      const during = await loop;
      const load = cpu();
      const mem = watch.stop();
      const all = during.flat();
      const stalls = [...all].sort((a, b) => b.us - a.us).slice(0, 3);
      const results: EndpointResult[] = eps.map((e, i) => ({ name: e.name, idle: summarize(idle[i]!.map((x) => x.us)), during: summarize(during[i]!.map((x) => x.us)) }));
      const phases = { uploaded: uploadedMs, parsed: result.parsedMs, chunksStored: result.storedMs };
      // p99 of all the GETs by ingestion phase, to see which phase holds requests up.
      const edges = [0, uploadedMs, result.parsedMs, result.storedMs, Number.POSITIVE_INFINITY].map((x) => x ?? Number.NaN);
      const byPhase = ["upload", "parse", "chunk + store", "embed"].map((name, i) => {
        const xs = all.filter((x) => x.at > edges[i]! && x.at <= edges[i + 1]!).map((x) => x.us);
        return { name, count: xs.length, p99: summarize(xs).p99 };
      });
      return { pdf, buildMs, results, idleRss, mem, phases, last: result.file, stalls, byPhase, maxDuring: Math.max(...all.map((x) => x.us)), count: all.length, windowMs: performance.now() - t0, load, uploader };
    } finally {
      conn.close();
    }
  } catch (e) {
    process.stderr.write(`hearth stderr (tail):\n${server.stderrTail()}\n`);
    throw e;
  } finally {
    await server.stop();
  }
}
