// Runs a parser in a child process that is killed when it runs too long or grows too big, so a
// hostile file (zip bomb, billion laughs, looping PDF) fails its ingestion while the server keeps
// its memory and stays responsive. The child is started and watched from a thread of its own, the
// parser launcher (launch.ts); the event loop only hands it the file and gets the document back in
// parts (chunk.ts documentParts), JSON it passes on to the inference worker unparsed.
import { workerUrl } from "../../../platform/native";
import { ownsBuffer, replyThread } from "../../../platform/reply-thread";
import type { FileFormat } from "./detect";
import { parseDocument, ParseError, PARSE_CAPS } from "./parse";
import { documentParts } from "./chunk";

export interface IsolationLimits {
  /**
   * Processor time the parse may use. Counted in CPU time, not on the clock: a parse that waits
   * for a core on a busy host is not failed for it. The clock's limit is WALL_FACTOR times this.
   */
  timeoutMs: number;
  maxRssBytes: number;
  /** Bytes of JSON the server reads from the child's stdout; past it the child is killed. */
  maxOutputBytes?: number;
}

/** The child's own text cap, plus room for JSON quoting and escapes. */
export const MAX_OUTPUT_BYTES = 2 * PARSE_CAPS.maxTextBytes;

export const DEFAULT_LIMITS: IsolationLimits = { timeoutMs: 120_000, maxRssBytes: 1536 * 1024 * 1024, maxOutputBytes: MAX_OUTPUT_BYTES };

/** A file to parse: its bytes, or where the launcher reads them (a stored upload). */
export type ParseSource = { bytes: Uint8Array } | StoredFile;
/** A stored upload: its pieces (knowledge/content.ts) in the database file at `dbPath`. */
export type StoredFile = { dbPath: string; contentId: string; size: number };
export type LaunchRequest = { op: "parse"; id: number; format: FileFormat; source: ParseSource; limits: IsolationLimits } | { op: "abort"; id: number };
export type LaunchReply = { id: number; ok: true; parts: string[] } | { id: number; ok: false; parseError: boolean; message: string };

/** A parse that waits (for a core, or stopped) longer than this many times its CPU budget is killed all the same. */
export const WALL_FACTOR = 3;

/** How long past a parse's time limit the launcher may take to answer (it kills the child at the limit). */
const LAUNCHER_GRACE_MS = 10_000;

/**
 * The launcher thread, started at the first parse. It holds the process open only while a parse is
 * in flight; after a crash the parses in flight fail (their jobs retry) and the next starts a new one.
 */
const launcher = replyThread<LaunchReply>(workerUrl("features/knowledge/ingest/launch-worker.ts"), "the parser launcher");

/**
 * The document in `bytes`, parsed in a child process under `limits`, in parts (documentParts); a
 * ParseError says why there are none (also when it holds no text). `bytes` is moved to the
 * launcher thread when it is a whole buffer of its own (it is empty afterwards): copying a 50 MB
 * upload held the event loop 30-200 ms. Pass a copy to keep it.
 */
export function parseIsolated(format: FileFormat, bytes: Uint8Array, limits = DEFAULT_LIMITS, signal?: AbortSignal): Promise<string[]> {
  return launch(format, { bytes }, ownsBuffer(bytes) ? [bytes.buffer as ArrayBuffer] : [], limits, signal);
}

/** The same for a stored upload: the launcher reads its bytes from the database, the event loop never holds them. */
export function parseStoredFile(format: FileFormat, stored: StoredFile, limits = DEFAULT_LIMITS, signal?: AbortSignal): Promise<string[]> {
  return launch(format, stored, [], limits, signal);
}

async function launch(format: FileFormat, source: ParseSource, transfer: ArrayBuffer[], limits: IsolationLimits, signal?: AbortSignal): Promise<string[]> {
  const { id, reply } = launcher.call((id) => ({ op: "parse", id, format, source, limits }) satisfies LaunchRequest, transfer);
  const onAbort = () => launcher.post({ op: "abort", id } satisfies LaunchRequest);
  signal?.addEventListener("abort", onAbort);
  if (signal?.aborted) onAbort();
  // The launcher kills the child at the time limit; should its answer never come, the job must not
  // wait forever (it fails like a crash, and is retried).
  const late = setTimeout(() => {
    onAbort();
    launcher.abandon(id, new Error("the parser launcher did not answer"));
  }, limits.timeoutMs * WALL_FACTOR + LAUNCHER_GRACE_MS);
  try {
    const r = await reply;
    if (!r.ok) throw r.parseError ? new ParseError(r.message) : new Error(r.message);
    return r.parts;
  } finally {
    clearTimeout(late);
    signal?.removeEventListener("abort", onAbort);
  }
}

/**
 * Characters of a failure's reason the child writes: parser libraries quote the input (fast-xml-parser
 * quoted all 500 KB of a tag of '<'s, so the server saw only "too many errors").
 */
const MAX_REASON_CHARS = 300;

/** Why a document yields nothing to index. */
const noTextReason = (format: FileFormat) => (format === "pdf" ? "no text could be extracted (a scanned PDF? Hearth does not do OCR)" : "the file holds no text to index");

/** The child's side: bytes on stdin, the document's parts on stdout, a line each; exit 3 with a reason on stderr. */
export async function runParseChild(format: string): Promise<void> {
  const bytes = new Uint8Array(await Bun.stdin.arrayBuffer());
  try {
    const sections = await parseDocument(format as FileFormat, bytes);
    if (!sections.some((s) => s.text.trim())) throw new ParseError(noTextReason(format as FileFormat));
    // A part's JSON holds no raw line break, so one per line.
    await Bun.write(Bun.stdout, documentParts(sections).join("\n"));
    process.exit(0);
  } catch (e) {
    const message = e instanceof ParseError ? e.message : e instanceof RangeError ? "the file is nested too deeply to parse" : `the file could not be parsed: ${(e as Error).message}`;
    process.stderr.write(message.length > MAX_REASON_CHARS ? `${message.slice(0, MAX_REASON_CHARS)}…` : message);
    process.exit(3);
  }
}
