// Starts the parser child (Hearth's own executable, command `__parse`), feeds it the file, reads
// its output and kills it when it runs too long, grows too big or says too much. Runs on the parser
// launcher's thread (launch-worker.ts), not the event loop: spawning blocks its caller until the
// child has started (0.2 ms idle, 3-30 ms with both cores busy), and the feeding, reading and
// watching are work for every file too.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { isCompiled } from "../../../platform/native";
import type { FileFormat } from "./detect";
import { megabytes, ParseError } from "./parse";
import { MAX_OUTPUT_BYTES, WALL_FACTOR, type IsolationLimits } from "./isolate";

const MAX_ERROR_BYTES = 64 * 1024;

/**
 * What the child inherits: enough to run and to read text in the same locale, nothing else. The
 * server's environment can hold HEARTH_JWT_SECRET and other credentials a parser has no use for.
 */
const CHILD_ENV_NAMES = ["PATH", "LANG", "LC_ALL", "TZ", "TMPDIR"];

function childEnv(): Record<string, string> {
  const env: Record<string, string> = { HEARTH_PARSE_CHILD: "1" };
  for (const name of CHILD_ENV_NAMES) if (process.env[name] !== undefined) env[name] = process.env[name]!;
  return env;
}

/** Reads a stream as text, calling `over` (which kills the child) once more than `max` bytes came. */
async function readCapped(stream: ReadableStream<Uint8Array>, max: number, over: () => void): Promise<string> {
  const parts: Uint8Array[] = [];
  let size = 0;
  for await (const part of stream) {
    size += part.byteLength;
    if (size > max) {
      over();
      break;
    }
    parts.push(part);
  }
  return Buffer.concat(parts).toString("utf8");
}

/**
 * Writes `bytes` in pieces, each after the pipe took the one before: one write of a 50 MB upload
 * held its thread for 20-200 ms (Bun copies it into the sink's buffer); pieces of 1 MB hold it for
 * under a few ms each.
 */
const FEED_PIECE = 1024 * 1024;
async function feed(sink: Bun.FileSink, bytes: Uint8Array): Promise<void> {
  for (let at = 0; at < bytes.byteLength; at += FEED_PIECE) {
    sink.write(bytes.subarray(at, at + FEED_PIECE));
    await sink.flush();
  }
  await sink.end();
}

const PARSE_COMMAND = "__parse";

/**
 * The parser runs at a lower priority than the HTTP thread and a higher one than inference (idle class):
 * a parse that takes its full time budget must not take a core from requests, nor may another
 * workspace's small upload wait behind a busy embedding worker to be parsed. `nice` sets it before
 * the child's first instruction, so all of its threads inherit it.
 */
const NICE = Bun.which("nice");
const PARSER_NICE = "5";

function command(format: FileFormat): string[] {
  // The compiled binary is its own entry point; in development the entry is src/main.ts.
  const parser = isCompiled() ? [process.execPath, PARSE_COMMAND, format] : [process.execPath, join(import.meta.dir, "../../../main.ts"), PARSE_COMMAND, format];
  return NICE ? [NICE, "-n", PARSER_NICE, ...parser] : parser;
}

function rssOf(pid: number): number {
  try {
    const m = readFileSync(`/proc/${pid}/status`, "utf8").match(/VmRSS:\s+(\d+) kB/);
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** Processor time the process has used, all its threads, in ms (Linux clock ticks of 10 ms); 0 where /proc has none. */
function cpuMsOf(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return 0;
  }
}

/** The child's output (the document's parts, a JSON line each: documentParts), or a ParseError saying why there is none. */
export async function launchParser(format: FileFormat, bytes: Uint8Array, limits: IsolationLimits, signal?: AbortSignal): Promise<string> {
  const child = Bun.spawn(command(format), { stdin: "pipe", stdout: "pipe", stderr: "pipe", env: childEnv() });
  let killedFor: string | undefined;
  const kill = (why: string) => {
    killedFor ??= why;
    child.kill("SIGKILL");
  };
  const seconds = (ms: number) => `${Number((ms / 1000).toPrecision(2))} s`;
  const timer = setTimeout(() => kill(`parsing took longer than ${seconds(limits.timeoutMs * WALL_FACTOR)}`), limits.timeoutMs * WALL_FACTOR);
  const watch = setInterval(() => {
    if (rssOf(child.pid) > limits.maxRssBytes) kill(`parsing needed more than ${Math.round(limits.maxRssBytes / 1024 / 1024)} MB of memory`);
    if (cpuMsOf(child.pid) > limits.timeoutMs) kill(`parsing took longer than ${seconds(limits.timeoutMs)} of processor time`);
  }, 100);
  const onAbort = () => kill("ingestion was stopped");
  if (signal?.aborted) onAbort();
  signal?.addEventListener("abort", onAbort);
  try {
    // A child killed (or failing) before it read everything breaks the pipe: its exit says why.
    const fed = feed(child.stdin, bytes).catch(() => undefined);
    const maxOut = limits.maxOutputBytes ?? MAX_OUTPUT_BYTES;
    const [, out, err, code] = await Promise.all([
      fed,
      readCapped(child.stdout, maxOut, () => kill(`the parsed document is more than ${megabytes(maxOut)} (the limit per file)`)),
      readCapped(child.stderr, MAX_ERROR_BYTES, () => kill("the parser wrote too many errors")),
      child.exited,
    ]);
    if (killedFor) throw new ParseError(killedFor);
    if (code === 3) throw new ParseError(err.trim() || "the file could not be parsed");
    if (code !== 0) throw new ParseError(`the parser stopped unexpectedly (exit ${code}${child.signalCode ? `, ${child.signalCode}` : ""})`);
    return out;
  } finally {
    clearTimeout(timer);
    clearInterval(watch);
    signal?.removeEventListener("abort", onAbort);
  }
}
