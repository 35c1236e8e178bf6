// Hearth as a real process (`bun src/main.ts serve` on a free port), for tests that need one:
// kill -9, restarts, signals, a second instance. Both pipes are drained the whole time (`drained`),
// so a chatty server never blocks on a full pipe.
import type { Subprocess } from "bun";
import { join } from "node:path";

export const MAIN = join(import.meta.dir, "../../src/main.ts");

export interface HearthProcess {
  proc: Subprocess<"ignore", "pipe", "pipe">;
  url: string;
  /** Everything it printed on stdout so far. */
  stdout(): string;
}

/** Starts Hearth with `env` and resolves once it prints its listening line. */
export async function startHearth(env: Record<string, string | undefined>, timeoutMs = 30_000): Promise<HearthProcess> {
  const proc = Bun.spawn([process.execPath, MAIN, "serve", "--port", "0"], { env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const { stdout, stderr } = drained(proc);
  for (const deadline = Date.now() + timeoutMs; ; ) {
    const url = stdout().match(/listening on (http:\/\/[\d.]+:\d+)/)?.[1];
    if (url) return { proc, url, stdout };
    if (proc.exitCode !== null || Date.now() > deadline) {
      proc.kill("SIGKILL");
      throw new Error(`Hearth did not start (exit ${proc.exitCode}): ${stdout()} ${stderr()}`);
    }
    await Bun.sleep(10);
  }
}

/** Collects a child's stdout and stderr as they come, for as long as it runs. */
export function drained(proc: Subprocess<"ignore", "pipe", "pipe">): { stdout(): string; stderr(): string } {
  let out = "";
  let err = "";
  const drain = async (stream: ReadableStream<Uint8Array>, add: (s: string) => void) => {
    const decoder = new TextDecoder();
    for await (const chunk of stream) add(decoder.decode(chunk, { stream: true }));
  };
  void drain(proc.stdout, (s) => (out += s));
  void drain(proc.stderr, (s) => (err += s));
  return { stdout: () => out, stderr: () => err };
}
