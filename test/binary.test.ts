// Builds dist/hearth and runs it alone in an empty directory, as an operator would: storage and
// sqlite-vec from inside the binary, the offline explorer, login, backup, the instance lock, clean stop.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pkg from "../package.json";
import journal from "../src/platform/db/migrations/meta/_journal.json";
import { onnxRuntimeTag } from "../scripts/ml-build-plugin";
import { startOllamaFake } from "./support/ollama-fake";
import { allEvents } from "./support/sse";
import { drained } from "./support/hearth-process";
import { TEST_MODELS_DIR } from "./support/models";

const ROOT = join(import.meta.dir, "..");
const PASSWORD = "binary-test password 1";
const START_DEADLINE_MS = 20_000;
// build.ts makes a linux-x64 binary with the linux-x64 sqlite-vec: elsewhere there is nothing to run.
const CAN_RUN = process.platform === "linux" && process.arch === "x64";

/** A running (or finished) `hearth` child with its output collected as it arrives. */
interface Child {
  proc: ReturnType<typeof spawnHearth>;
  stdout(): string;
  stderr(): string;
}


// Ollama cannot run here: the binary's real `ollama` client talks to the Ollama-protocol fake.
const ollama = startOllamaFake();

let dir: string;
let children: Child[] = [];
let server: Child;
let base: string;
let buildOutput = "";

function spawnHearth(args: string[]) {
  return Bun.spawn([join(dir, "hearth"), ...args], {
    cwd: dir,
    // Only what Hearth needs: a developer's own HEARTH_* settings must not leak into the test.
    env: {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: dir,
      HEARTH_ADMIN_PASSWORD: PASSWORD,
      HEARTH_OFFLINE: "1",
      HEARTH_MODELS_DIR: TEST_MODELS_DIR,
      HEARTH_OLLAMA_URL: ollama.url,
      HEARTH_RATE_LIMIT: "10000",
      HEARTH_RATE_LIMIT_STRICT: "10000",
    },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
}

/** Starts the binary and keeps draining both pipes, so a chatty child never blocks on a full pipe. */
function start(args: string[]): Child {
  const proc = spawnHearth(args);
  const child = { proc, ...drained(proc) };
  children.push(child);
  return child;
}

/** Runs a short command of the binary to its end. */
async function run(args: string[], timeoutMs = 15_000) {
  const child = start(args);
  const code = await exitWithin(child, timeoutMs);
  return { code, stdout: child.stdout(), stderr: child.stderr() };
}

async function exitWithin(child: Child, ms: number): Promise<number | "timeout"> {
  const timer = Bun.sleep(ms).then(() => "timeout" as const);
  const code = await Promise.race([child.proc.exited, timer]);
  // Give the drains a turn to collect the last output.
  await Bun.sleep(20);
  return code;
}

async function until<T>(what: string, ms: number, probe: () => Promise<T | undefined> | T | undefined): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await Bun.sleep(50);
  }
}

const get = (path: string, init?: RequestInit) => fetch(`${base}${path}`, init);
const json = (body: unknown, token?: string): RequestInit => ({
  method: "POST",
  headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
  body: JSON.stringify(body),
});

describe.skipIf(!CAN_RUN)("dist/hearth, alone in an empty directory", () => {
  beforeAll(async () => {
    // Always rebuild (~20 s: it compiles, runs the binary to record its bytecode layout, compiles
    // again): the binary must match the sources under test.
    const build = Bun.spawn([process.execPath, "build.ts"], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
    const [code, out, err] = await Promise.all([build.exited, new Response(build.stdout).text(), new Response(build.stderr).text()]);
    if (code !== 0) throw new Error(`bun build.ts exited ${code}:\n${out}${err}`);
    buildOutput = out + err;

    dir = mkdtempSync(join(tmpdir(), "hearth-binary-"));
    copyFileSync(join(ROOT, "dist/hearth"), join(dir, "hearth"));
    server = start(["serve", "--port", "0"]);
    const port = await until("the listening line on stdout", START_DEADLINE_MS, () => {
      if (server.proc.exitCode !== null) throw new Error(`hearth exited ${server.proc.exitCode} at start:\n${server.stderr()}`);
      return server.stdout().match(/listening on http:\/\/127\.0\.0\.1:(\d+)/)?.[1];
    });
    base = `http://127.0.0.1:${port}`;
    await until("GET /health to answer 200", START_DEADLINE_MS, async () => {
      const r = await get("/health").catch(() => undefined);
      return r?.status === 200 ? true : undefined;
    });
  }, 120_000);

  afterAll(async () => {
    for (const child of children) if (child.proc.exitCode === null && child.proc.signalCode === null) child.proc.kill("SIGKILL");
    await Promise.all(children.map((c) => c.proc.exited));
    children = [];
    if (dir) rmSync(dir, { recursive: true, force: true });
    await ollama.stop();
  });

  test("the build laid the bytecode out by a recorded start (a failed recording only warns)", () => {
    expect(buildOutput).toContain("bytecode laid out by a recorded start");
  });

  describe("a fresh start in an empty directory", () => {
    test("creates ./data/hearth.db and extracts sqlite-vec from the binary", () => {
      expect(readdirSync(dir).sort()).toEqual(["data", "hearth"]);
      expect(existsSync(join(dir, "data/hearth.db"))).toBe(true);
      // sqlite-vec in a content-addressed folder; the ONNX runtime (onnxruntime-<version>-<hash>) beside it.
      const native = readdirSync(join(dir, "data/native"));
      expect(native.filter((d) => existsSync(join(dir, "data/native", d, "vec0.so")))).toHaveLength(1);
    });

    test("is healthy with vectors ok", async () => {
      // The parts' details are for an owner's session; anonymous callers get only their status.
      const jwt = ((await (await get("/api/auth/login", json({ email: "admin@localhost", password: PASSWORD }))).json()) as { data: { token: string } }).data.token;
      const r = await get("/health", { headers: { authorization: `Bearer ${jwt}` } });
      expect(r.status).toBe(200);
      const body = (await r.json()) as { status: string; version: string; checks: Record<string, { status: string; detail?: string }> };
      expect(body.status).toBe("ok");
      expect(body.version).toBe(pkg.version);
      expect(body.checks.database?.status).toBe("ok");
      expect(body.checks.vectors?.status).toBe("ok");
      expect(body.checks.vectors?.detail).toContain("sqlite-vec");
    });

    test("prints the first owner note, not a generated password", () => {
      expect(server.stdout()).toContain("with the password from HEARTH_ADMIN_PASSWORD");
      expect(server.stdout()).not.toContain(PASSWORD);
    });
  });

  describe("API explorer with no network", () => {
    test("/docs points at Hearth's own assets", async () => {
      const r = await get("/docs");
      expect(r.status).toBe(200);
      const html = await r.text();
      expect(html).toContain("/docs/assets/swagger-ui-bundle.js");
      expect(html).toContain("/docs/assets/swagger-ui.css");
    });

    test("serves the embedded Swagger UI assets", async () => {
      const js = await get("/docs/assets/swagger-ui-bundle.js");
      expect(js.status).toBe(200);
      expect(js.headers.get("content-type")).toContain("javascript");
      expect((await js.arrayBuffer()).byteLength).toBeGreaterThan(100_000);
      const css = await get("/docs/assets/swagger-ui.css");
      expect(css.status).toBe(200);
      expect(css.headers.get("content-type")).toContain("text/css");
      expect((await css.arrayBuffer()).byteLength).toBeGreaterThan(10_000);
    });

    test("/openapi.json lists the routes", async () => {
      const r = await get("/openapi.json");
      expect(r.status).toBe(200);
      const doc = (await r.json()) as { openapi: string; paths: Record<string, unknown> };
      expect(doc.openapi).toMatch(/^3\./);
      expect(Object.keys(doc.paths)).toContain("/api/auth/login");
    });
  });

  describe("the web console is embedded (no src/ beside the binary to build it from)", () => {
    test("/ and deep links answer the page with its CSP; its hashed assets load with a long cache", async () => {
      for (const path of ["/", "/knowledge", "/settings/tokens"]) {
        const r = await get(path);
        expect(r.status).toBe(200);
        expect(r.headers.get("content-security-policy")).toContain("script-src 'self'");
        const html = await r.text();
        expect(html).toContain('<div id="app">');
        const assets = [...html.matchAll(/(?:src|href)="(\/assets\/[\w-]+-[a-z0-9]{8}\.(?:js|css))"/g)].map((m) => m[1]!);
        expect(assets.length).toBe(2);
        for (const asset of assets) {
          const a = await get(asset);
          expect(a.status).toBe(200);
          expect(a.headers.get("cache-control")).toContain("immutable");
          expect((await a.arrayBuffer()).byteLength).toBeGreaterThan(asset.endsWith(".js") ? 20_000 : 1_000);
        }
      }
      const api = await get("/api/nope");
      expect(api.status).toBe(404);
      expect(((await api.json()) as { error: string }).error).toBe("NotFound");
    });
  });

  describe("the minified build handles requests like the sources", () => {
    let jwt: string;

    test("POST /api/auth/login with the configured password → 200", async () => {
      const r = await get("/api/auth/login", json({ email: "admin@localhost", password: PASSWORD }));
      expect(r.status).toBe(200);
      const body = (await r.json()) as { success: boolean; data: { token: string } };
      expect(body.success).toBe(true);
      expect(body.data.token).toMatch(/^ey/);
      jwt = body.data.token;
    });

    test("a wrong password → 401", async () => {
      const r = await get("/api/auth/login", json({ email: "admin@localhost", password: "not it" }));
      expect(r.status).toBe(401);
    });

    test("session, query, body and API token header all reach the handlers", async () => {
      const list = await get("/api/products?page=1&pageSize=10", { headers: { authorization: `Bearer ${jwt}` } });
      expect(list.status).toBe(200);
      const workspaces = ((await list.json()) as { data: { id: string; name: string }[] }).data;
      const productId = workspaces.find((w) => w.name === "Default")?.id;
      expect(productId).toBeString();

      const created = await get("/api/api-tokens", json({ product_id: productId, token_name: "binary test" }, jwt));
      expect(created.status).toBe(201);
      const secret = ((await created.json()) as { data: { token: string } }).data.token;

      const viaToken = await get("/api/products", { headers: { "x-api-token": secret } });
      expect(viaToken.status).toBe(200);
    });

    test("ingests a real upload with the embedded ONNX runtime and finds it by meaning and by keyword", async () => {
      // An earlier version's library in the data dir's native/ is removed when this one is extracted.
      const native = join(dir, "data/native");
      mkdirSync(join(native, "onnxruntime-0.0.1-000000000000"), { recursive: true });
      const list = await get("/api/products", { headers: { authorization: `Bearer ${jwt}` } });
      const productId = ((await list.json()) as { data: { id: string }[] }).data[0]!.id;
      const form = new FormData();
      form.append("file", new File(["# Backups\n\nRun the backup command every night. Error QX-7781 means the disk is full.\n"], "ops.md"));
      form.append("product_id", productId);
      const up = await get("/api/knowledge-base/storage/upload", { method: "POST", headers: { authorization: `Bearer ${jwt}` }, body: form });
      expect(up.status).toBe(202);
      const fileId = ((await up.json()) as { data: { id: string } }).data.id;
      let status = "queued";
      for (const deadline = Date.now() + 30_000; Date.now() < deadline && (status === "queued" || status === "processing"); await Bun.sleep(100)) {
        status = ((await (await get(`/api/knowledge-base/storage/file/${fileId}`, { headers: { authorization: `Bearer ${jwt}` } })).json()) as { data: { status: string } }).data.status;
      }
      expect(status).toBe("ready");
      for (const [query, mode] of [["how often should I back up", "vector"], ["QX-7781", "hybrid"]]) {
        const r = await get("/api/knowledge-base/embeddings", json({ query, mode, product_id: productId }, jwt));
        expect(r.status).toBe(200);
        const hits = ((await r.json()) as { data: { file_name: string; text: string }[] }).data;
        expect(hits[0]?.file_name).toBe("ops.md");
      }
      const health = (await (await get("/health")).json()) as { checks: { embedder: { status: string } } };
      expect(health.checks.embedder.status).toBe("ok");
      expect(readdirSync(native).filter((d) => d.startsWith("onnxruntime-"))).toEqual([`onnxruntime-${onnxRuntimeTag}`]);
    });

    test("transcribes speech with the embedded ONNX runtime and its own worker", async () => {
      const form = new FormData();
      form.append("file", new File([await Bun.file(join(import.meta.dir, "fixtures/audio/callback.wav")).arrayBuffer()], "callback.wav"));
      form.append("response_format", "verbose_json");
      const r = await get("/api/audio/transcriptions", { method: "POST", headers: { authorization: `Bearer ${jwt}` }, body: form });
      expect(r.status).toBe(200);
      const body = (await r.json()) as { text: string; language: string; segments: unknown[] };
      expect(body.text.toLowerCase()).toContain("call me back");
      expect(body.language).toBe("english");
      const health = (await (await get("/health")).json()) as { checks: { transcriber: { status: string } } };
      expect(health.checks.transcriber.status).toBe("ok");
    }, 60_000);

    test("runs a workflow with JSONata and an agent, and serves MCP with the SDK's client", async () => {
      const list = await get("/api/products", { headers: { authorization: `Bearer ${jwt}` } });
      const productId = ((await list.json()) as { data: { id: string }[] }).data[0]!.id;
      const graph = { nodes: [{ id: "start", type: "trigger.manual" }, { id: "calc", type: "transform", config: { expression: "$sum(input.n) * 2" } }], edges: [{ from: "start", to: "calc" }] };
      const ex = await get("/api/workflow/execute", json({ graph, product_id: productId, input: { n: [1, 2, 3] } }, jwt));
      expect(ex.status).toBe(202);
      const id = ((await ex.json()) as { data: { id: string } }).data.id;
      const done = await until("the execution to end", 20_000, async () => {
        const s = ((await (await get(`/api/workflow/${id}/status`, { headers: { authorization: `Bearer ${jwt}` } })).json()) as { data: { status: string; output: unknown } }).data;
        return s.status === "succeeded" || s.status === "failed" ? s : undefined;
      });
      expect(done).toMatchObject({ status: "succeeded", output: 12 });

      const token = ((await (await get("/api/api-tokens", json({ product_id: productId, token_name: "mcp" }, jwt))).json()) as { data: { token: string } }).data.token;
      const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
      const { StreamableHTTPClientTransport } = await import("@modelcontextprotocol/sdk/client/streamableHttp.js");
      const client = new Client({ name: "binary-test", version: "1" });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
      const tools = (await client.listTools()).tools.map((t) => t.name);
      expect(tools).toContain("search_knowledge");
      const r = await client.callTool({ name: "search_knowledge", arguments: { query: "QX-7781", top_k: 3 } });
      expect((r.content as { text: string }[])[0]!.text).toContain("ops.md");
      await client.close();
    }, 60_000);

    test("answers a chat over SSE from that upload, streaming the model's tokens", async () => {
      const list = await get("/api/products", { headers: { authorization: `Bearer ${jwt}` } });
      const productId = ((await list.json()) as { data: { id: string }[] }).data[0]!.id;
      const res = await get("/api/assistant/chat", json({ message: "What does QX-7781 mean?", product_id: productId }, jwt));
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toStartWith("text/event-stream");
      const events = await allEvents(res);
      expect(events.map((e) => e.event).filter((n, i, all) => n !== "token" || all[i - 1] !== "token")).toEqual(["session", "thinking", "thinking", "token", "ai_response", "done"]);
      const answer = events.find((e) => e.event === "ai_response")!.data;
      expect(answer.metadata.mode).toBe("llm");
      expect(answer.sources[0].file_name).toBe("ops.md");
      expect(answer.sources[0].excerpt).toContain("QX-7781");
      const health = (await (await get("/health")).json()) as { checks: { llm: { status: string } } };
      expect(health.checks.llm.status).toBe("ok");
    });
  });

  describe("CLI", () => {
    test("--version prints the package version", async () => {
      const r = await run(["--version"]);
      expect(r.code).toBe(0);
      expect(r.stdout.trim()).toBe(pkg.version);
    });

    test("--help shows the commands", async () => {
      const r = await run(["--help"]);
      expect(r.code).toBe(0);
      expect(r.stdout).toContain("hearth serve");
      expect(r.stdout).toContain("hearth backup <file>");
    });

    test("backup while the server runs writes a migrated copy that passes its integrity check", async () => {
      const file = join(dir, "backups/hearth-copy.db");
      const r = await run(["backup", file]);
      expect(r.stderr).toBe("");
      expect(r.code).toBe(0);
      expect(r.stdout).toContain("integrity ok");
      expect(existsSync(file)).toBe(true);

      const copy = new Database(file, { readonly: true });
      try {
        expect(copy.query<{ integrity_check: string }, []>("PRAGMA integrity_check").all()).toEqual([{ integrity_check: "ok" }]);
        const applied = copy.query<{ n: number }, []>("SELECT count(*) AS n FROM __drizzle_migrations").get()!;
        expect(applied.n).toBe(journal.entries.length);
      } finally {
        copy.close();
      }
    });

    test("__extract-native (the child that writes ONNX Runtime out of the binary) writes both files whole", async () => {
      const target = join(dir, "extract-test");
      const extracted = `onnxruntime-${onnxRuntimeTag}`;
      // What an extraction killed midway leaves (its process is gone) is removed by the next one.
      const gone = Bun.spawn(["true"]);
      await gone.exited;
      mkdirSync(join(target, `${extracted}.tmp-${gone.pid}-x`), { recursive: true });
      const r = await run(["__extract-native", target]);
      expect(r.code).toBe(0);
      expect(readdirSync(target)).toEqual([extracted]);
      const ortBin = join(ROOT, "node_modules/onnxruntime-node/bin", readdirSync(join(ROOT, "node_modules/onnxruntime-node/bin")).find((d) => d.startsWith("napi-v"))!, "linux/x64");
      for (const name of ["libonnxruntime.so.1", "onnxruntime_binding.node"]) expect(statSync(join(target, extracted, name)).size).toBe(statSync(join(ortBin, name)).size);
      const missing = await run(["__extract-native"]);
      expect(missing.code).toBe(2);
      expect(missing.stderr).toContain("needs the directory");
    });

    test("a second instance on the same data dir exits non-zero with one clear line", async () => {
      const r = await run(["serve", "--port", "0"]);
      expect(r.code).not.toBe("timeout");
      expect(r.code).not.toBe(0);
      const lines = r.stderr.trim().split("\n");
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain("already using the data dir");
      // The first instance is untouched.
      expect((await get("/health")).status).toBe(200);
    });
  });

  describe("stop", () => {
    test("SIGTERM stops the server with exit code 0 and leaves a sound database", async () => {
      server.proc.kill("SIGTERM");
      expect(await exitWithin(server, 15_000)).toBe(0);
      expect(existsSync(join(dir, "data/hearth.db"))).toBe(true);
      const db = new Database(join(dir, "data/hearth.db"), { readonly: true });
      try {
        expect(db.query<{ integrity_check: string }, []>("PRAGMA integrity_check").all()).toEqual([{ integrity_check: "ok" }]);
      } finally {
        db.close();
      }
    });
  });
});
