// What Hearth shows and leaves on disk: /health tells strangers only ok/loading/unavailable, only
// super admins take backups and only owners and admins read a security trail, and every file Hearth
// writes (database, WAL, shm, lock, backups) is readable by its user only.
import { afterAll, afterEach, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { createHarness, defaultWorkspaceId, secondTenant, type Harness } from "../support/harness";
import { ensureDataDir, lockDataDir, openStorage } from "../../src/platform/db/database";

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});
const dirs: string[] = [];
const procs: Subprocess[] = [];
afterAll(() => {
  for (const p of procs) p.kill("SIGKILL");
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), "hearth-ops-"));
  dirs.push(d);
  return d;
};

const mode = (path: string) => (statSync(path).mode & 0o777).toString(8);
const CHECKS = ["database", "vectors", "embedder", "transcriber", "llm"];

describe("/health", () => {
  test("without credentials: the DESIGN shape with only a status per part, no paths, no URLs, no reasons", async () => {
    h = await createHarness({ HEARTH_OLLAMA_URL: "http://127.0.0.1:9/secret-ollama" });
    const r = await h.call("GET", "/health");
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ status: "ok", version: expect.any(String) });
    expect(Object.keys(r.body.checks).sort()).toEqual([...CHECKS].sort());
    for (const name of CHECKS) {
      expect(Object.keys(r.body.checks[name])).toEqual(["status"]);
      expect(["ok", "loading", "unavailable"]).toContain(r.body.checks[name].status);
    }
    for (const secret of ["secret-ollama", "127.0.0.1:9", h.services.config.modelsDir, h.dataDir, "sqlite-vec"]) expect(r.text).not.toContain(secret);
  });

  test("an owner's or admin's session sees the details; members and API tokens do not; a bad credential is 401", async () => {
    h = await createHarness({ HEARTH_OLLAMA_URL: "http://127.0.0.1:9/secret-ollama" });
    const owner = await h.login();
    const orgId = (await h.call("GET", "/api/auth/me", { token: owner })).body.data.user.organization_id;
    await h.call("POST", `/api/organizations/${orgId}/users`, { token: owner, body: { email: "m@example.test", password: "member-password", role: "member" } });
    const member = await h.login("m@example.test", "member-password");
    const ws = await defaultWorkspaceId(h, owner);
    const token = (await h.call("POST", "/api/api-tokens", { token: owner, body: { product_id: ws, token_name: "probe" } })).body.data.token;

    const detailed = await h.call("GET", "/health", { token: owner });
    expect(detailed.status).toBe(200);
    expect(detailed.body.checks.vectors.detail).toStartWith("sqlite-vec");
    expect(detailed.body.checks.llm).toMatchObject({ status: "unavailable", reason: expect.stringContaining("127.0.0.1:9") });
    expect(detailed.headers.get("ratelimit-limit")).toBeNull();

    for (const caller of [member, token]) {
      const r = await h.call("GET", "/health", { token: caller });
      expect(r.status).toBe(200);
      for (const name of CHECKS) expect(Object.keys(r.body.checks[name])).toEqual(["status"]);
    }
    expect((await h.call("GET", "/health", { token: "svc_" + "x".repeat(40) })).status).toBe(401);
  });
});

describe("/health and a model server that hangs", () => {
  test("answers at once (loading) instead of waiting out the probe, and concurrent calls share one probe", async () => {
    // Accepts connections and never answers, like an Ollama stuck loading a model.
    let connections = 0;
    const hung = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { open: () => void connections++, data: () => undefined } });
    try {
      h = await createHarness({ HEARTH_OLLAMA_URL: `http://127.0.0.1:${hung.port}` });
      const owner = await h.login();
      const t0 = performance.now();
      const answers = await Promise.all(Array.from({ length: 20 }, () => h!.call("GET", "/health", { token: owner })));
      const took = performance.now() - t0;
      for (const r of answers) {
        expect(r.status).toBe(200);
        expect(r.body.checks.llm).toEqual({ status: "loading", detail: `asking Ollama at http://127.0.0.1:${hung.port}` });
      }
      expect(took).toBeLessThan(1_500); // the probe itself gives up only after 2 s
      expect(connections).toBe(1);
      // Once the probe gave up, its answer is what /health says, and no caller waits for it.
      await Bun.sleep(2_300);
      const after = await h.call("GET", "/health", { token: owner });
      expect(after.body.checks.llm).toMatchObject({ status: "unavailable", reason: expect.stringContaining("did not answer in time") });
    } finally {
      hung.stop(true);
    }
  }, 15_000);
});

describe("who may run operations", () => {
  test("only super admins take backups; only an organization's owners and admins read its security trail", async () => {
    h = await createHarness();
    const admin = await h.login();
    const other = await secondTenant(h, admin); // owner of another organization, not a super admin
    const backup = await h.call("POST", "/api/admin/backup", { token: other.jwt });
    expect(backup.status).toBe(403);
    expect(backup.body).toMatchObject({ success: false, error: "Forbidden", message: "Only super admins may take backups" });
    expect(existsSync(join(h.dataDir, "backups"))).toBe(false);

    await h.call("POST", `/api/organizations/${other.orgId}/users`, { token: other.jwt, body: { email: "member@other.test", password: "member-password", role: "member" } });
    const member = await h.login("member@other.test", "member-password");
    const trail = await h.call("GET", `/api/organizations/${other.orgId}/activity`, { token: member });
    expect(trail.status).toBe(403);
    expect(trail.body.message).toBe("Only owners and admins may read the security trail");
    // The owner reads it, with the org id in any case; another organization's trail does not exist for them.
    expect((await h.call("GET", `/api/organizations/${other.orgId.toUpperCase()}/activity`, { token: other.jwt })).status).toBe(200);
    const me = await h.call("GET", "/api/auth/me", { token: admin });
    expect((await h.call("GET", `/api/organizations/${me.body.data.user.organization_id}/activity`, { token: other.jwt })).status).toBe(404);
  });
});

describe("backups", () => {
  test("ten backups asked at once all succeed, one copy at a time: those that came during one share the next", async () => {
    h = await createHarness();
    const jwt = await h.login();
    // Before: copies of the same millisecond shared a name and a partial file (400s and 500s, partial files left).
    const answers = await Promise.all(Array.from({ length: 10 }, () => h!.call("POST", "/api/admin/backup", { token: jwt })));
    expect(answers.map((a) => a.status)).toEqual(Array(10).fill(201));
    const files = new Set(answers.map((a) => a.body.data.file as string));
    expect(files.size).toBeLessThanOrEqual(2);
    // The place is not the caller's to choose: a field is refused, not ignored.
    const chosen = await h.call("POST", "/api/admin/backup", { token: jwt, body: { path: "/tmp/elsewhere.db" } });
    expect([chosen.status, chosen.body.message]).toEqual([422, "Invalid body: path is not an accepted field"]);
    const { readdirSync } = await import("node:fs");
    expect(readdirSync(join(h.dataDir, "backups")).sort()).toEqual([...files].map((f) => f.split("/").at(-1)!).sort());
  });

  test("API backups keep the newest HEARTH_BACKUP_KEEP copies: the oldest go once a new one is whole", async () => {
    // Before: every copy stayed in <data dir>/backups/, on the database's own disk, until it filled.
    h = await createHarness({ HEARTH_BACKUP_KEEP: "2" });
    const jwt = await h.login();
    const taken: string[] = [];
    for (let i = 0; i < 4; i++) {
      const r = await h.call("POST", "/api/admin/backup", { token: jwt });
      expect(r.status).toBe(201);
      taken.push((r.body.data.file as string).split("/").at(-1)!);
      h.clock.advance(60_000);
    }
    const { readdirSync } = await import("node:fs");
    expect(readdirSync(join(h.dataDir, "backups")).sort()).toEqual(taken.slice(2).sort());
  });

  test("what a killed backup left in backups/ is removed at the next start", async () => {
    const dir = tempDir();
    const first = await createHarness({}, dir);
    await first.services.stop();
    first.services.storage.close();
    const { mkdirSync, writeFileSync, readdirSync } = await import("node:fs");
    mkdirSync(join(dir, "backups"), { recursive: true });
    for (const f of ["hearth-x.db.partial", "hearth-x.db.partial-journal", "hearth-kept.db"]) writeFileSync(join(dir, "backups", f), "x");
    h = await createHarness({}, dir);
    expect(readdirSync(join(dir, "backups"))).toEqual(["hearth-kept.db"]);
  });

  test("the server keeps answering while a backup copies the database, and the copy holds every acknowledged token use", async () => {
    h = await createHarness();
    const jwt = await h.login();
    const ws = await defaultWorkspaceId(h, jwt);
    const token = (await h.call("POST", "/api/api-tokens", { token: jwt, body: { product_id: ws, token_name: "during backup" } })).body.data;
    for (let i = 0; i < 5; i++) expect((await h.call("GET", "/api/api-token/auth/validate", { headers: { "x-api-token": token.token } })).status).toBe(200);
    // ~150 MB of pages to copy (several hundred ms): on the event loop, nothing else would be answered meanwhile.
    const sqlite = h.services.storage.sqlite;
    sqlite.run("CREATE TABLE ballast (b BLOB)");
    const page = new Uint8Array(1 << 20).map((_, i) => (i * 2654435761) & 255);
    sqlite.transaction(() => {
      for (let i = 0; i < 150; i++) sqlite.run("INSERT INTO ballast VALUES (?)", [page]);
    })();
    let backupDone = false;
    const backup = h.call("POST", "/api/admin/backup", { token: jwt }).then((r) => {
      backupDone = true;
      return r;
    });
    const health = await h.call("GET", "/health");
    expect(health.status).toBe(200);
    expect(backupDone).toBe(false);
    const b = await backup;
    expect(b.status).toBe(201);
    expect(b.body.data).toMatchObject({ integrity: "ok", bytes: expect.any(Number) });
    const { Database } = await import("bun:sqlite");
    const copy = new Database(b.body.data.file, { readonly: true });
    try {
      expect(copy.query("SELECT count(*) AS n FROM ballast").get()).toEqual({ n: 150 });
      const uses = copy.query("SELECT count(*) AS n FROM api_token_audit_logs WHERE token_id = ? AND action = 'used'").get(token.id) as { n: number };
      expect(uses.n).toBe(5);
    } finally {
      copy.close();
    }
  });
});

describe("file modes", () => {
  test("database, WAL and shm are 0600 after start; a backup is 0600 in a 0700 folder", async () => {
    h = await createHarness();
    const db = join(h.dataDir, "hearth.db");
    for (const f of [db, `${db}-wal`, `${db}-shm`]) expect({ f, mode: mode(f) }).toEqual({ f, mode: "600" });

    const jwt = await h.login();
    const b = await h.call("POST", "/api/admin/backup", { token: jwt });
    expect(b.status).toBe(201);
    expect(mode(b.body.data.file)).toBe("600");
    expect(mode(join(h.dataDir, "backups"))).toBe("700");
  });

  test("the lock and pid files are 0600; a data dir Hearth creates is 0700; an old 0644 database is tightened on open", async () => {
    const dir = join(tempDir(), "nested", "data");
    ensureDataDir(dir);
    expect(mode(dir)).toBe("700");
    const lock = lockDataDir(dir);
    try {
      expect(mode(join(dir, "hearth.lock"))).toBe("600");
      expect(mode(join(dir, "hearth.pid"))).toBe("600");
    } finally {
      lock.release();
    }
    const first = await openStorage(dir);
    first.sqlite.exec("CREATE TABLE t (x)");
    first.close();
    chmodSync(join(dir, "hearth.db"), 0o644);
    const again = await openStorage(dir);
    try {
      for (const f of ["hearth.db", "hearth.db-wal", "hearth.db-shm"]) if (existsSync(join(dir, f))) expect({ f, mode: mode(join(dir, f)) }).toEqual({ f, mode: "600" });
    } finally {
      again.close();
    }
  });

  test("the real server and `hearth backup` (default umask 022): every file they write is 0600", async () => {
    const MAIN = join(import.meta.dir, "../../src/main.ts");
    const dir = join(tempDir(), "data");
    const env = { ...process.env, HEARTH_DATA_DIR: dir, HEARTH_ADMIN_PASSWORD: "ops-test-password", HEARTH_MODELS_DIR: join(tempDir(), "no-models") };
    const proc = Bun.spawn(["sh", "-c", `umask 022 && exec "${process.execPath}" "${MAIN}" serve --port 0`], { env, stdout: "pipe", stderr: "pipe" });
    procs.push(proc);
    const reader = proc.stdout.getReader();
    let out = "";
    while (!/listening on/.test(out)) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`Hearth did not start: ${out}`);
      out += new TextDecoder().decode(value);
    }
    expect(mode(dir)).toBe("700");
    for (const f of ["hearth.db", "hearth.db-wal", "hearth.db-shm", "hearth.lock", "hearth.pid"]) expect({ f, mode: mode(join(dir, f)) }).toEqual({ f, mode: "600" });

    const target = join(tempDir(), "copies", "hearth-copy.db");
    const backup = Bun.spawn(["sh", "-c", `umask 022 && exec "${process.execPath}" "${MAIN}" backup "${target}"`], { env, stdout: "pipe", stderr: "pipe" });
    expect(await backup.exited).toBe(0);
    expect(mode(target)).toBe("600");
    proc.kill("SIGTERM");
    await proc.exited;
  }, 30_000);
});
