// Records which of the binary's bytecode an ordinary start uses, for Bun's profile-guided layout
// (build.ts passes the file as `compile.bytecodeOrder`): the bytecode that start and the first
// requests run is placed together at the front, so an idle Hearth keeps ~6 MB fewer of the
// binary's pages resident. The run: a first start that creates a data dir (not recorded), then a
// recorded start on it with the console's first requests (sign in, workspaces, an API token used
// once), then a clean stop, which is when Bun writes the profile.
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const START_TIMEOUT_MS = 20_000;
const PASSWORD = "bytecode-order recording";

interface Running {
  base: string;
  stop(): Promise<void>;
  output(): string;
}

async function start(binary: string, env: Record<string, string>): Promise<Running> {
  const proc = Bun.spawn([binary, "serve", "--host", "127.0.0.1", "--port", "0"], { env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  let out = "";
  const drain = async (stream: ReadableStream<Uint8Array>) => {
    const decoder = new TextDecoder();
    for await (const chunk of stream) out += decoder.decode(chunk, { stream: true });
  };
  void drain(proc.stdout);
  void drain(proc.stderr);
  const stop = async () => {
    proc.kill("SIGTERM");
    const killer = setTimeout(() => proc.kill("SIGKILL"), 10_000);
    await proc.exited;
    clearTimeout(killer);
  };
  for (const deadline = Date.now() + START_TIMEOUT_MS; ; ) {
    const url = out.match(/listening on (http:\/\/[\d.]+:\d+)/)?.[1];
    if (url) return { base: url, stop, output: () => out };
    if (proc.exitCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error(`the binary did not start (exit ${proc.exitCode}): ${out.trim().slice(-500)}`);
    }
    await Bun.sleep(10);
  }
}

async function call(base: string, path: string, init: RequestInit & { headers?: Record<string, string> } = {}) {
  const res = await fetch(base + path, { ...init, headers: { "content-type": "application/json", ...init.headers } });
  const body = (await res.json().catch(() => null)) as { data?: Record<string, unknown> & Record<string, unknown>[] } | null;
  if (!res.ok) throw new Error(`${init.method ?? "GET"} ${path} answered ${res.status}`);
  return body?.data;
}

/** The requests of a session's first minute: health, sign in, workspaces, an API token used once. */
async function ordinaryRequests(base: string) {
  await call(base, "/health");
  const login = await call(base, "/api/auth/login", { method: "POST", body: JSON.stringify({ email: "admin@localhost", password: PASSWORD }) });
  const session = { authorization: `Bearer ${String(login?.token)}` };
  await call(base, "/api/auth/me", { headers: session });
  const products = (await call(base, "/api/products", { headers: session })) as unknown as { id: string }[];
  const productId = products[0]!.id;
  const created = await call(base, "/api/api-tokens", { method: "POST", headers: session, body: JSON.stringify({ product_id: productId, token_name: "build" }) });
  const token = { "x-api-token": String(created?.token) };
  for (let i = 0; i < 3; i++) {
    await call(base, "/api/api-token/auth/validate", { headers: token });
    await call(base, `/api/products/${productId}`, { headers: token });
  }
}

/** Runs `binary` as above and returns the path of the profile it wrote (inside `workDir`). */
export async function recordBytecodeOrder(binary: string, workDir: string): Promise<string> {
  const dataDir = mkdtempSync(join(tmpdir(), "hearth-order-"));
  const profile = join(workDir, "hearth.order");
  rmSync(profile, { force: true });
  // None of the builder's own HEARTH_* settings; no model is loaded.
  const env = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: dataDir,
    HEARTH_DATA_DIR: join(dataDir, "data"),
    HEARTH_MODELS_DIR: join(dataDir, "models"),
    HEARTH_ADMIN_PASSWORD: PASSWORD,
    HEARTH_OFFLINE: "1",
    // The requests below come from one address: no budget of theirs may run out as they grow.
    HEARTH_RATE_LIMIT: "1000",
    HEARTH_RATE_LIMIT_STRICT: "1000",
  };
  try {
    await (await start(binary, env)).stop();
    const server = await start(binary, { ...env, BUN_BYTECODE_ORDER_OUT: profile });
    try {
      await ordinaryRequests(server.base);
    } finally {
      await server.stop();
    }
    if (!existsSync(profile)) throw new Error(`the recorded run wrote no ${profile}`);
    return profile;
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}
