// The parser launcher thread: reads a stored file (blob-store.ts), starts, feeds and watches parser
// children (launch.ts) for the event loop, several at once, and answers each with the child's output
// or why there is none.
import { readStoredFile } from "./blob-store";
import { launchParser } from "./launch";
import { ParseError } from "./parse";
import type { LaunchReply, LaunchRequest } from "./isolate";

const running = new Map<number, AbortController>();

const answer = (reply: LaunchReply) => postMessage(reply);

(globalThis as unknown as { onmessage: (ev: MessageEvent<LaunchRequest>) => void }).onmessage = async ({ data: req }) => {
  if (req.op === "abort") return void running.get(req.id)?.abort();
  const abort = new AbortController();
  running.set(req.id, abort);
  try {
    const bytes = "bytes" in req.source ? req.source.bytes : readStoredFile(req.source.dbPath, req.source.contentId, req.source.size);
    if (!bytes) throw new ParseError("the file's bytes are missing");
    const out = await launchParser(req.format, bytes, req.limits, abort.signal);
    answer({ id: req.id, ok: true, parts: out ? out.split("\n") : [] });
  } catch (e) {
    answer({ id: req.id, ok: false, parseError: e instanceof ParseError, message: (e as Error).message });
  } finally {
    running.delete(req.id);
  }
};
