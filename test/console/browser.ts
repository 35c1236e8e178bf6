// Drives Debian's chromium (playwright-core, headless) against a real Hearth started on loopback,
// with every request that is not to Hearth itself aborted and recorded.
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { chromium, type BrowserContext, type Page } from "playwright-core";
import { TEST_MODELS_DIR } from "../support/models";

export const CHROMIUM = "/usr/bin/chromium";
const MAIN = join(import.meta.dir, "../../src/main.ts");

/** Why the browser tests cannot run here, or null. Under CI they must run, so CI fails instead. */
export function browserMissing(): string | null {
  if (existsSync(CHROMIUM)) return null;
  return `no browser at ${CHROMIUM}: install it with \`apt-get install chromium\` (bash .ci/run does)`;
}

export interface Hearth {
  url: string;
  proc: Subprocess;
  dataDir: string;
  stop(): Promise<void>;
}

/** Starts `bun src/main.ts serve` on 127.0.0.1 port 0 with a fresh data dir. */
export async function startHearth(env: Record<string, string>): Promise<Hearth> {
  const dataDir = mkdtempSync(join(tmpdir(), "hearth-console-"));
  const proc = Bun.spawn([process.execPath, MAIN, "serve", "--host", "127.0.0.1", "--port", "0"], {
    env: { ...process.env, HEARTH_MODELS_DIR: TEST_MODELS_DIR, HEARTH_DATA_DIR: dataDir, HEARTH_RATE_LIMIT: "100000", HEARTH_RATE_LIMIT_STRICT: "100000", ...env },
    stdout: "pipe",
    stderr: "pipe",
  });
  const reader = proc.stdout.getReader();
  let out = "";
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const { value, done } = await reader.read();
    if (done) break;
    out += new TextDecoder().decode(value);
    const m = out.match(/listening on (http:\/\/127\.0\.0\.1:\d+)/);
    if (m) {
      // Keep draining stdout so the child never blocks on a full pipe.
      void (async () => {
        while (!(await reader.read().catch(() => ({ done: true }))).done);
      })();
      return {
        url: m[1]!,
        proc,
        dataDir,
        async stop() {
          proc.kill("SIGTERM");
          await proc.exited;
          rmSync(dataDir, { recursive: true, force: true });
        },
      };
    }
  }
  proc.kill("SIGKILL");
  throw new Error(`Hearth did not start: ${out} ${await new Response(proc.stderr).text()}`);
}

export interface Browser {
  context: BrowserContext;
  page: Page;
  /** Every URL the page asked for. */
  requested: string[];
  /** URLs outside Hearth that were blocked (must stay empty). */
  blocked: string[];
  close(): Promise<void>;
}

/** A fresh profile in headless chromium; only `origin` (and data:/blob:) may be reached. */
export async function openBrowser(origin: string): Promise<Browser> {
  const profile = mkdtempSync(join(tmpdir(), "hearth-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1440, height: 900 },
    acceptDownloads: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
  const requested: string[] = [];
  const blocked: string[] = [];
  await context.route("**/*", (route) => {
    const url = route.request().url();
    requested.push(url);
    if (url.startsWith(`${origin}/`) || url.startsWith("data:") || url.startsWith("blob:")) return route.continue();
    blocked.push(url);
    return route.abort("blockedbyclient");
  });
  context.on("request", (r) => requested.push(r.url()));
  const page = context.pages()[0] ?? (await context.newPage());
  return {
    context,
    page,
    requested,
    blocked,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
