// Builds a real Hearth in-process (temp data dir, real SQLite + sqlite-vec) and talks to it with
// app.handle(new Request(...)), the way DESIGN.md asks tests to.
import { expect } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../../src/platform/config";
import { openStorage } from "../../src/platform/db/database";
import { migrate } from "../../src/platform/db/migrate";
import { manualClock } from "../../src/platform/clock";
import { silentLogger } from "../../src/platform/log";
import { createServices, type Services } from "../../src/services";
import { createApp, type App } from "../../src/app";
import { TEST_MODELS_DIR } from "./models";

export const ADMIN_EMAIL = "owner@example.test";
export const ADMIN_PASSWORD = "correct horse battery";
export const BASE = "http://hearth.test";

export interface Reply<T = any> {
  status: number;
  body: T;
  headers: Headers;
  text: string;
}

export interface CallOptions {
  token?: string;
  body?: unknown;
  raw?: string | Blob | FormData | Uint8Array | ReadableStream;
  headers?: Record<string, string>;
}

export interface Harness {
  app: App;
  services: Services;
  clock: ReturnType<typeof manualClock>;
  dataDir: string;
  call<T = any>(method: string, path: string, opts?: CallOptions): Promise<Reply<T>>;
  login(email?: string, password?: string): Promise<string>;
  /** Lets one event-loop turn pass (hooks that run after a response). */
  settle(): Promise<void>;
  close(): Promise<void>;
}

export async function createHarness(env: Record<string, string> = {}, dataDir?: string): Promise<Harness> {
  const dir = dataDir ?? mkdtempSync(join(tmpdir(), "hearth-test-"));
  const config = loadConfig({
    HEARTH_DATA_DIR: dir,
    HEARTH_ADMIN_EMAIL: ADMIN_EMAIL,
    HEARTH_ADMIN_PASSWORD: ADMIN_PASSWORD,
    HEARTH_RATE_LIMIT: "100000",
    HEARTH_RATE_LIMIT_STRICT: "100000",
    HEARTH_MODELS_DIR: TEST_MODELS_DIR,
    ...env,
  });
  const storage = await openStorage(config.dataDir);
  migrate(storage.db);
  const clock = manualClock(Date.now());
  const services = await createServices({ config, storage, clock, log: silentLogger });
  const app = createApp(services);

  const call = async (method: string, path: string, opts: CallOptions = {}): Promise<Reply> => {
    const headers: Record<string, string> = { ...opts.headers };
    if (opts.token) headers.authorization ??= `Bearer ${opts.token}`;
    let body = opts.raw;
    if (opts.body !== undefined) {
      body = JSON.stringify(opts.body);
      headers["content-type"] ??= "application/json";
    }
    const res = await app.handle(new Request(BASE + path, { method, headers, body }));
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {}
    return { status: res.status, body: parsed, headers: res.headers, text };
  };

  return {
    app,
    services,
    clock,
    dataDir: dir,
    call,
    async login(email = ADMIN_EMAIL, password = ADMIN_PASSWORD) {
      const r = await call("POST", "/api/auth/login", { body: { email, password } });
      if (r.status !== 200) throw new Error(`login failed: ${r.status} ${r.text}`);
      return r.body.data.token as string;
    },
    async settle() {
      await new Promise((r) => setImmediate(r));
    },
    async close() {
      await services.stop();
      await storage.close();
      if (!dataDir) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A harness with its services started and the first owner signed in (a test file's usual start). */
export async function startedHarness(env: Record<string, string> = {}): Promise<{ h: Harness; jwt: string }> {
  const h = await createHarness(env);
  const jwt = await h.login();
  h.services.start();
  return { h, jwt };
}

/** A second organization with an owner, made by the super admin; returns its ids and a session. */
export async function secondTenant(h: Harness, adminJwt: string, name = "Other Org") {
  const org = await h.call("POST", "/api/organizations", { token: adminJwt, body: { name } });
  const email = `owner-${crypto.randomUUID().slice(0, 8)}@other.test`;
  const user = await h.call("POST", `/api/organizations/${org.body.data.id}/users`, {
    token: adminJwt,
    body: { email, password: "other-password", role: "owner" },
  });
  const jwt = await h.login(email, "other-password");
  const ws = await h.call("POST", "/api/products", { token: jwt, body: { name: `${name} workspace` } });
  return { orgId: org.body.data.id as string, userId: user.body.data.id as string, email, jwt, workspaceId: ws.body.data.id as string };
}

/** Uploads `bytes` as file `name` to workspace `productId` (its Default knowledge base unless `extra` names one); the reply. */
export function uploadFile(h: Harness, token: string, productId: string, name: string, bytes: Uint8Array | string, extra: Record<string, string> = {}): Promise<Reply> {
  const fd = new FormData();
  fd.append("file", new File([bytes], name));
  for (const [k, v] of Object.entries({ product_id: productId, ...extra })) fd.append(k, v);
  return h.call("POST", "/api/knowledge-base/storage/upload", { token, raw: fd });
}

/** Uploads `text` as a knowledge file of workspace `productId` (its Default knowledge base); the new file's id. */
export async function uploadText(h: Harness, jwt: string, productId: string, name: string, text: string): Promise<string> {
  const r = await uploadFile(h, jwt, productId, name, text);
  expect(r.status).toBe(202);
  return r.body.data.id as string;
}

export async function defaultWorkspaceId(h: Harness, jwt: string): Promise<string> {
  const r = await h.call("GET", "/api/products", { token: jwt });
  return r.body.data.find((w: { name: string }) => w.name === "Default").id;
}
