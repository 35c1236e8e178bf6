// A full disk never ends Hearth: the job queue and the workflow engine back off, log the run of
// failed writes once and go on by themselves when space returns; requests answer 503 saying what to
// do; signing in still works; /health says the database cannot be written. The full disk is
// SQLite's own SQLITE_FULL ("database or disk is full"): a connection's max_page_count, with a
// trigger that makes each write to the chosen tables need new pages.
import { afterEach, describe, expect, test } from "bun:test";
import type { Database } from "bun:sqlite";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../../src/platform/config";
import { databasePart, DISK_FULL_BYTES, openStorage, type Storage } from "../../src/platform/db/database";
import { migrate } from "../../src/platform/db/migrate";
import { checkpointReports } from "../../src/platform/db/checkpointer";
import { writeFailures } from "../../src/platform/db/write-failures";
import { manualClock } from "../../src/platform/clock";
import type { Logger } from "../../src/platform/log";
import { createJobQueue, jobKind } from "../../src/platform/jobs/queue";
import { toAppError } from "../../src/platform/http/errors";
import { createServices } from "../../src/services";
import { createApp } from "../../src/app";
import { createSignIn } from "../../src/features/accounts/sign-in";
import { ACCOUNT_FAILURE_BUDGET } from "../../src/features/accounts/login-throttle";
import { TEST_MODELS_DIR } from "../support/models";
import { linear } from "../features/workflows/support";

const EMAIL = "owner@example.test";
const PASSWORD = "correct horse battery";
const NO_LIMIT = 1_073_741_823;

/** Every later write to `tables` through `sqlite` fails with SQLITE_FULL, as on a full disk. */
function fillDisk(sqlite: Database, tables: string[]) {
  sqlite.exec("CREATE TABLE IF NOT EXISTS disk_filler (b BLOB)");
  const page = sqlite.query<{ page_size: number }, []>("PRAGMA page_size").get()!.page_size;
  const free = sqlite.query<{ freelist_count: number }, []>("PRAGMA freelist_count").get()!.freelist_count;
  for (const t of tables) {
    for (const op of ["INSERT", "UPDATE", "DELETE"]) {
      sqlite.exec(`CREATE TEMP TRIGGER IF NOT EXISTS "full_${t}_${op}" BEFORE ${op} ON main."${t}" BEGIN INSERT INTO main.disk_filler VALUES (zeroblob(${(free + 64) * page})); END`);
    }
  }
  sqlite.exec(`PRAGMA max_page_count = ${sqlite.query<{ page_count: number }, []>("PRAGMA page_count").get()!.page_count}`);
}

/** Space is back: the same writes work again. */
const freeDisk = (sqlite: Database) => sqlite.exec(`PRAGMA max_page_count = ${NO_LIMIT}`);

function recordingLog() {
  const lines: { level: string; msg: string; fields?: Record<string, unknown> }[] = [];
  const at = (level: string) => (msg: string, fields?: Record<string, unknown>) => void lines.push({ level, msg, fields });
  const log: Logger = { info: at("info"), warn: at("warn"), error: at("error") };
  return { lines, log, errors: () => lines.filter((l) => l.level === "error") };
}

async function waitFor(done: () => boolean, ms = 5000) {
  const deadline = Date.now() + ms;
  while (!done() && Date.now() < deadline) await Bun.sleep(10);
  return done();
}

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
  // The record is the process's: another test file must not see this file's full disk.
  writeFailures.cleared();
});

async function storageIn(): Promise<Storage> {
  const dir = mkdtempSync(join(tmpdir(), "hearth-full-"));
  const storage = await openStorage(dir);
  migrate(storage.db);
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }), () => storage.close());
  return storage;
}

describe("the job queue on a full disk", () => {
  const WORK = jobKind<{ n: number }>("work");

  test("survives refused claims, logs them once, and runs every job by itself once space returns", async () => {
    const storage = await storageIn();
    const { lines, log, errors } = recordingLog();
    const queue = createJobQueue({ db: storage.db, clock: manualClock(), log, pollMs: 20 });
    cleanups.push(() => queue.stop());
    const ran: number[] = [];
    queue.register(WORK, async (p) => void ran.push(p.n));
    const ids = [1, 2, 3].map((n) => queue.enqueue(WORK, { n }));
    // Job 1 was running when Hearth was killed: start() puts it back in the queue, a write too.
    storage.sqlite.run("UPDATE jobs SET status = 'running' WHERE id = ?", [ids[0]!]);
    fillDisk(storage.sqlite, ["jobs"]);

    queue.start();
    for (let i = 0; i < 5; i++) queue.wake();
    await Bun.sleep(200); // a few of the backed-off attempts (20, 40, 80, 100 ms apart)
    expect(ran).toEqual([]);
    expect(errors()).toHaveLength(1);
    expect(errors()[0]!.msg).toContain("job queue failed");
    expect(String(errors()[0]!.fields?.error)).toContain("database or disk is full");
    expect(await databasePart(storage.sqlite).checks!.database!()).toMatchObject({ status: "unavailable", reason: expect.stringContaining("database or disk is full") });

    freeDisk(storage.sqlite);
    // Nobody wakes it: its own retry finds the space.
    expect(await waitFor(() => ids.every((id) => queue.get(id)?.status === "done"))).toBe(true);
    expect(ran.sort()).toEqual([1, 2, 3]);
    expect(lines.filter((l) => l.msg === "job queue works again")).toHaveLength(1);
    expect(errors()).toHaveLength(1);
    expect(await databasePart(storage.sqlite).checks!.database!()).toMatchObject({ status: "ok" });
  });

  test("a job whose end is refused is recorded once space returns, not left running nor run again", async () => {
    const storage = await storageIn();
    const { log } = recordingLog();
    const queue = createJobQueue({ db: storage.db, clock: manualClock(), log, pollMs: 20 });
    cleanups.push(() => queue.stop());
    let calls = 0;
    let release: (() => void) | undefined;
    queue.register(WORK, () => (calls++, new Promise<void>((r) => (release = r))));
    const id = queue.enqueue(WORK, { n: 1 });
    queue.start();
    expect(await waitFor(() => release !== undefined)).toBe(true);
    fillDisk(storage.sqlite, ["jobs"]);
    release!();
    await Bun.sleep(100);
    expect(queue.get(id)!.status).toBe("running");

    freeDisk(storage.sqlite);
    expect(await waitFor(() => queue.get(id)?.status === "done")).toBe(true);
    expect(calls).toBe(1);
  });
});

/** A Hearth in-process whose every SQLite connection (the main one and those it opens) the test can fill. */
async function hearth() {
  const dir = mkdtempSync(join(tmpdir(), "hearth-full-"));
  const config = loadConfig({ HEARTH_DATA_DIR: dir, HEARTH_ADMIN_EMAIL: EMAIL, HEARTH_ADMIN_PASSWORD: PASSWORD, HEARTH_RATE_LIMIT: "100000", HEARTH_RATE_LIMIT_STRICT: "100000", HEARTH_MODELS_DIR: TEST_MODELS_DIR });
  const storage = await openStorage(dir);
  migrate(storage.db);
  const connections = [storage.sqlite];
  const open = storage.openConnection;
  storage.openConnection = (durability) => {
    const c = open(durability);
    connections.push(c.sqlite);
    return c;
  };
  const clock = manualClock(Date.now());
  const rec = recordingLog();
  const services = await createServices({ config, storage, clock, log: rec.log });
  const app = createApp(services);
  cleanups.push(
    () => rmSync(dir, { recursive: true, force: true }),
    () => storage.close(),
    () => services.stop(),
  );
  const call = async (method: string, path: string, o: { token?: string; body?: unknown } = {}) => {
    const headers: Record<string, string> = o.token ? { authorization: `Bearer ${o.token}` } : {};
    if (o.body !== undefined) headers["content-type"] = "application/json";
    const res = await app.handle(new Request(`http://hearth.test${path}`, { method, headers, body: o.body === undefined ? undefined : JSON.stringify(o.body) }));
    return { status: res.status, headers: res.headers, body: (await res.json()) as any };
  };
  const login = async (password = PASSWORD) => call("POST", "/api/auth/login", { body: { email: EMAIL, password } });
  const jwt = (await login()).body.data.token as string;
  const ws = (await call("GET", "/api/products", { token: jwt })).body.data[0].id as string;
  return {
    services,
    clock,
    ...rec,
    call,
    login,
    jwt,
    ws,
    fill: (tables: string[]) => connections.forEach((c) => fillDisk(c, tables)),
    free: () => connections.forEach(freeDisk),
    engineErrors: () => rec.errors().filter((l) => l.msg.startsWith("workflow engine")),
  };
}

describe("the workflow engine on a full disk", () => {
  test("a node's start refused lets go of the execution; the engine takes it up again once space returns", async () => {
    const h = await hearth();
    h.services.start();
    // Queued while the engine is stopped, so that its pump meets the full disk.
    h.services.workflow.engine.shutdown();
    const r = await h.call("POST", "/api/workflow/execute", { token: h.jwt, body: { product_id: h.ws, graph: linear({ id: "start", type: "trigger.manual" }, { id: "x", type: "transform", config: { expression: "6 * 7" } }, { id: "out", type: "output", config: { value: "{{ nodes.x.output }}" } }) } });
    expect(r.status).toBe(202);
    const id = r.body.data.id as string;
    h.fill(["workflow_node_runs"]);
    // The pump marks it running, then its first node's start (a write to node_runs) is refused.
    h.services.workflow.engine.start();
    await Bun.sleep(20);
    for (let i = 0; i < 5; i++) {
      h.clock.advance(10_000);
      h.services.workflow.engine.tick();
      await Bun.sleep(5);
    }
    expect(h.engineErrors()).toHaveLength(1);
    expect(String(h.engineErrors()[0]!.fields?.error)).toContain("database or disk is full");
    expect((await h.call("GET", `/api/workflow/${id}/status`, { token: h.jwt })).body.data.status).toBe("running");

    h.free();
    h.clock.advance(10_000);
    h.services.workflow.engine.tick();
    const done = await h.services.workflow.engine.until(id, undefined, 10_000);
    expect(done).toMatchObject({ status: "succeeded", output: 42 });
    expect(h.lines.filter((l) => l.msg === "workflow engine works again")).toHaveLength(1);
    expect(h.engineErrors()).toHaveLength(1);
  });

  test("a delay that ends on a full disk: requests answer 503, sign-in works, /health tells; all goes on once space returns", async () => {
    const h = await hearth();
    h.services.start();
    const run = await h.call("POST", "/api/workflow/execute", { token: h.jwt, body: { product_id: h.ws, graph: linear({ id: "start", type: "trigger.manual" }, { id: "nap", type: "delay", config: { ms: 1000 } }, { id: "out", type: "output", config: { value: "woke" } }) } });
    const id = run.body.data.id as string;
    await h.services.workflow.engine.until(id, ["waiting"], 10_000);
    h.fill(["workflow_executions", "workflow_node_runs", "workflow_events", "activity_events"]);

    // The delay runs out: the engine's tick cannot record it, and Hearth goes on.
    h.clock.advance(2000);
    h.services.workflow.engine.tick();
    expect(h.engineErrors()).toHaveLength(1);

    const refused = await h.call("POST", "/api/workflow/execute", { token: h.jwt, body: { product_id: h.ws, graph: linear({ id: "start", type: "trigger.manual" }) } });
    expect(refused.status).toBe(503);
    expect(refused.body).toEqual({ success: false, error: "ServiceUnavailable", message: expect.stringContaining("The disk of Hearth's data dir is full: free space there") });
    expect(refused.headers.get("retry-after")).toBe("60");

    // The operator can still sign in (the trail row is refused and logged), and sees why.
    const signedIn = await h.login();
    expect(signedIn.status).toBe(200);
    expect((await h.login("not the password")).status).toBe(401);
    expect((await h.call("GET", "/health")).body.checks.database).toEqual({ status: "unavailable" });
    const health = await h.call("GET", "/health", { token: signedIn.body.data.token });
    expect(health.body.checks.database).toEqual({ status: "unavailable", reason: expect.stringContaining("writes fail: database or disk is full") });

    h.free();
    h.clock.advance(10_000);
    h.services.workflow.engine.tick();
    expect(await h.services.workflow.engine.until(id, undefined, 10_000)).toMatchObject({ status: "succeeded", output: "woke" });
    expect((await h.call("GET", "/health", { token: h.jwt })).body.checks.database.status).toBe("ok");
    expect((await h.call("POST", "/api/workflow/execute", { token: h.jwt, body: { product_id: h.ws, graph: linear({ id: "start", type: "trigger.manual" }) } })).status).toBe(202);
    expect(h.engineErrors()).toHaveLength(1);
  });
});

describe("signing in on a full disk", () => {
  test("a refused trail row does not refuse a right password, and wrong ones still count against the account", async () => {
    const h = await hearth();
    h.fill(["activity_events"]);
    const signIn = createSignIn({ accounts: h.services.accounts, activity: h.services.activity, now: () => h.clock.now(), log: h.log });
    const attempt = (password: string, i: number) => signIn.signIn({ email: EMAIL, password, method: "POST", endpoint: "/api/auth/login", ipAddress: `192.0.2.${i}`, userAgent: null });
    expect((await attempt(PASSWORD, 1)).email).toBe(EMAIL);
    expect(h.errors()).toEqual([{ level: "error", msg: "sign-in not recorded in the security trail", fields: expect.objectContaining({ action: "login_succeeded", error: expect.stringContaining("database or disk is full") }) }]);
    // From a new address each time, so only the account's budget (in memory) stops them.
    for (let i = 0; i < ACCOUNT_FAILURE_BUDGET; i++) await expect(attempt("wrong", 10 + i)).rejects.toMatchObject({ status: 401 });
    await expect(attempt(PASSWORD, 99)).rejects.toMatchObject({ status: 429 });
  });
});

describe("what a person is told", () => {
  test("a full, failing or damaged disk is a 503 saying what to do; other failures stay a 500", () => {
    const full = Object.assign(new Error("database or disk is full"), { code: "SQLITE_FULL" });
    const enospc = Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" });
    const ioerr = Object.assign(new Error("disk I/O error"), { code: "SQLITE_IOERR_WRITE" });
    for (const e of [full, enospc]) {
      expect(toAppError("UNKNOWN", e)).toMatchObject({ status: 503, code: "ServiceUnavailable", message: expect.stringContaining("data dir is full"), headers: { "retry-after": "60" } });
    }
    expect(toAppError("UNKNOWN", ioerr)).toMatchObject({ status: 503, message: expect.stringContaining("cannot write its database: disk I/O error") });
    // What SQLite reports of the pages it read once the disk answered EIO.
    const malformed = Object.assign(new Error("database disk image is malformed"), { code: "SQLITE_CORRUPT" });
    expect(toAppError("UNKNOWN", malformed)).toMatchObject({ status: 503, message: expect.stringContaining("the data dir's disk is failing or the file is damaged") });
    expect(toAppError("UNKNOWN", new Error("no such table: x"))).toMatchObject({ status: 500, code: "InternalError" });
  });

  test("/health's database check reads the data dir's free space", async () => {
    const storage = await storageIn();
    const check = (bytes: number) => databasePart(storage.sqlite, { freeBytes: async () => bytes }).checks!.database!();
    expect(await check(DISK_FULL_BYTES - 1024 * 1024)).toEqual({ status: "unavailable", reason: expect.stringMatching(/^disk full: 7\.0 MB free/) });
    expect(await check(100 * 1024 * 1024)).toEqual({ status: "ok", detail: expect.stringContaining("low disk space: 100.0 MB free") });
    expect(await check(50 * 1024 ** 3)).toEqual({ status: "ok" });
  });

  test("checkpoints failing four times a second are logged when they start failing and when one works", () => {
    const warnings: string[] = [];
    const report = checkpointReports({ warn: (msg) => void warnings.push(msg) });
    for (let i = 0; i < 1000; i++) report({ op: "failed", error: "SQLiteError: database or disk is full" });
    expect(warnings).toEqual(["checkpoint failed; retrying, logged again when one works"]);
    expect(writeFailures.recent()?.kind).toBe("full");
    report({ op: "checkpointed" });
    report({ op: "checkpointed" });
    report({ op: "failed", error: "SQLiteError: disk I/O error" });
    expect(warnings).toEqual(["checkpoint failed; retrying, logged again when one works", "checkpoint works again", "checkpoint failed; retrying, logged again when one works"]);
  });
});
