// The real server process (bun src/main.ts): start-up, bad configuration, a second instance,
// graceful stop that loses no acknowledged audit row, and the backup command.
import { afterAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { mkdtempSync, rmSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { MAIN, startHearth } from "../support/hearth-process";

const dirs: string[] = [];
const procs: Subprocess[] = [];
afterAll(() => {
  for (const p of procs) p.kill("SIGKILL");
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), "hearth-server-"));
  dirs.push(d);
  return d;
};

const env = (dataDir: string, extra: Record<string, string> = {}) => ({
  ...process.env,
  HEARTH_DATA_DIR: dataDir,
  HEARTH_ADMIN_PASSWORD: "server-test-password",
  HEARTH_RATE_LIMIT: "100000",
  ...extra,
});

/** Starts Hearth on a free port and resolves with its base URL once it listens. */
async function start(dataDir: string, extra: Record<string, string> = {}) {
  const h = await startHearth(env(dataDir, extra), 20_000);
  procs.push(h.proc);
  return { proc: h.proc, url: h.url, stdout: h.stdout() };
}

const run = async (args: string[], e: Record<string, string | undefined>) => {
  const p = Bun.spawn([process.execPath, MAIN, ...args], { env: e, stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { stdout, stderr, code };
};

describe("process", () => {
  test("a bad configuration value stops start-up with one clear line", async () => {
    for (const [k, v, re] of [
      ["HEARTH_PORT", "eighty", /HEARTH_PORT must be a whole number/],
      ["HEARTH_RATE_LIMIT", "-3", /HEARTH_RATE_LIMIT/],
    ] as const) {
      const r = await run(["serve"], env(tempDir(), { [k]: v }));
      expect(r.code).toBe(2);
      expect(r.stderr.trim().split("\n")).toHaveLength(1);
      expect(r.stderr).toMatch(re);
    }
    const blocked = join(tempDir(), "file");
    await Bun.write(blocked, "not a dir");
    const r = await run(["serve"], env(join(blocked, "sub")));
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.stderr).toMatch(/HEARTH_DATA_DIR .* cannot be created or written/);
    // A damaged database (here: not one at all) is named, with what to do, for serve and backup alike.
    const damaged = tempDir();
    await Bun.write(join(damaged, "hearth.db"), crypto.getRandomValues(new Uint8Array(64 * 1024)));
    for (const args of [["serve", "--port", "0"], ["backup", join(damaged, "copy.db")]]) {
      const d = await run(args, env(damaged));
      expect(d.code).toBe(2);
      expect(d.stderr.trim().split("\n")).toEqual([`hearth: ${join(damaged, "hearth.db")} is not a SQLite database (damaged, or another file): restore a backup in its place (README: Backup and restore)`]);
    }
    // A real database cut in half (a disk that filled, a copy that stopped): named as damaged.
    const good = tempDir();
    expect((await run(["backup", join(good, "x.db")], env(good))).code).toBe(2); // nothing there yet
    const first = await start(good);
    first.proc.kill("SIGTERM");
    expect(await first.proc.exited).toBe(0);
    const cut = join(good, "hearth.db");
    const bytes = new Uint8Array(await Bun.file(cut).arrayBuffer());
    await Bun.write(cut, bytes.subarray(0, bytes.length / 2));
    const half = await run(["serve", "--port", "0"], env(good));
    expect(half.code).toBe(2);
    expect(half.stderr).toContain(`hearth: ${cut} is damaged (SQLite: database disk image is malformed): restore a backup in its place`);
  });

  test("a start whose disk refuses the writes says so in one line", async () => {
    // Files may not pass 256 KB (ulimit -f; SIGXFSZ ignored, so the write fails instead): the
    // migration's writes fail as on a failing disk.
    const dir = tempDir();
    const p = Bun.spawn(["bash", "-c", `trap '' XFSZ; ulimit -f 256; exec "$0" "$1" serve --port 0`, process.execPath, MAIN], { env: env(dir), stdout: "pipe", stderr: "pipe" });
    const [code, stderr] = await Promise.all([p.exited, new Response(p.stderr).text()]);
    expect(code).toBe(2);
    expect(stderr.trim().split("\n")).toHaveLength(1);
    expect(stderr).toMatch(/^hearth: could not start: (disk I\/O error on the data dir's disk .*check the disk|the disk of the data dir is full .*free space there)/);
  }, 30_000);

  test("--help and --version", async () => {
    const help = await run(["--help"], process.env);
    expect(help.code).toBe(0);
    for (const word of ["serve", "backup", "reset-password", "--port", "HEARTH_DATA_DIR", "--rate-limit-strict"]) expect(help.stdout).toContain(word);
    // Every option in three columns that line up, the longest names included.
    const options = help.stdout.split("\n").filter((l) => l.startsWith("  --") && l.includes("HEARTH_"));
    expect(options.length).toBeGreaterThan(20);
    for (const line of options) expect(line).toMatch(/^  --[\w-]+ <value> {2,}HEARTH_\w+ {2,}\S/);
    expect(new Set(options.map((l) => l.indexOf("HEARTH_"))).size).toBe(1);
    const version = await run(["--version"], process.env);
    expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
    // Before: "unknown option --help", exit 2.
    for (const args of [["serve", "--help"], ["backup", "-h"], ["reset-password", "--help"]]) expect(await run(args, process.env)).toMatchObject({ code: 0, stdout: help.stdout });
  });

  test("serve, refuse a second instance, back up while running, stop on SIGTERM without losing audit rows", async () => {
    const dir = tempDir();
    const { proc, url, stdout } = await start(dir);
    expect(stdout).toContain("admin@localhost");
    expect(stdout).not.toContain("server-test-password");

    const second = await run(["serve", "--port", "0"], env(dir));
    expect(second.code).toBe(2);
    expect(second.stderr).toMatch(/already using the data dir/);
    expect(second.stderr.trim().split("\n")).toHaveLength(1);
    // A Hearth of another data dir on the same port is refused too: were the port shared, every
    // other request would be answered from the other database.
    const port = new URL(url).port;
    // Refused before anything is created: no data dir, no first owner whose password scrolled past.
    const unused = join(tempDir(), "never-created");
    const sameport = await run(["serve", "--port", port], env(unused));
    expect(sameport.code).toBe(2);
    expect(sameport.stderr).toContain(`127.0.0.1:${port} is in use by another program`);
    expect(sameport.stdout).not.toContain("password");
    expect(existsSync(unused)).toBe(false);
    const badHost = await run(["serve", "--port", "3999", "--host", "999.1.1.1"], env(unused));
    expect(badHost.code).toBe(2);
    expect(badHost.stderr).toContain('--host must be an IP address or a host name of this machine, got "999.1.1.1"');
    expect(existsSync(unused)).toBe(false);

    const login = await fetch(`${url}/api/auth/login`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ email: "admin@localhost", password: "server-test-password" }) });
    const jwt = ((await login.json()) as any).data.token;
    const auth = { authorization: `Bearer ${jwt}`, "content-type": "application/json" };
    const ws = ((await (await fetch(`${url}/api/products`, { headers: auth })).json()) as any).data[0].id;
    const created = (await (await fetch(`${url}/api/api-tokens`, { method: "POST", headers: auth, body: JSON.stringify({ product_id: ws, token_name: "t" }) })).json()) as any;
    const token = created.data.token;
    const uses = await Promise.all(Array.from({ length: 30 }, () => fetch(`${url}/api/api-token/auth/validate`, { headers: { "x-api-token": token } })));
    expect(uses.every((r) => r.status === 200)).toBe(true);

    const backupFile = join(dir, "copy.db");
    const b = await run(["backup", backupFile], env(dir));
    expect(b.code).toBe(0);
    const copy = new Database(backupFile, { readonly: true });
    expect((copy.query("SELECT count(*) AS n FROM api_tokens").get() as { n: number }).n).toBe(1);
    copy.close();
    const again = await run(["backup", backupFile], env(dir));
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/already exists/);
    // A wrong data dir is refused, not backed up as a new empty database.
    const elsewhere = join(dir, "not-a-data-dir");
    const wrong = await run(["backup", join(dir, "empty.db")], env(elsewhere));
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain(`no Hearth database at ${join(elsewhere, "hearth.db")}`);
    expect(existsSync(elsewhere)).toBe(false);
    expect(existsSync(join(dir, "empty.db"))).toBe(false);

    proc.kill("SIGTERM");
    expect(await proc.exited).toBe(0);
    const db = new Database(join(dir, "hearth.db"), { readonly: true });
    const used = db.query("SELECT count(*) AS n FROM api_token_audit_logs WHERE action = 'used'").get() as { n: number };
    db.close();
    expect(used.n).toBe(30);
    expect(existsSync(join(dir, "hearth.db"))).toBe(true);

    // And it starts again on the same data dir.
    const restarted = await start(dir);
    const v = await fetch(`${restarted.url}/api/api-token/auth/validate`, { headers: { "x-api-token": token } });
    expect(v.status).toBe(200);
    restarted.proc.kill("SIGTERM");
    expect(await restarted.proc.exited).toBe(0);
  }, 60_000);

  test("reset-password gives a lost owner password back, while Hearth runs and while it is stopped", async () => {
    const dir = tempDir();
    const { proc, url } = await start(dir);
    const signIn = (password: string) => fetch(`${url}/api/auth/login`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ email: "admin@localhost", password }) });
    const me = (jwt: string) => fetch(`${url}/api/auth/me`, { headers: { authorization: `Bearer ${jwt}` } });
    const before = ((await (await signIn("server-test-password")).json()) as any).data.token;
    const running = await run(["reset-password", "ADMIN@localhost"], env(dir));
    expect(running.code).toBe(0);
    const password = running.stdout.match(/is\n\n {4}(\S+)\n/)?.[1];
    expect(password).toHaveLength(24);
    // The running server sees the new password and the ended session at the next request.
    expect((await me(before)).status).toBe(401);
    expect((await signIn("server-test-password")).status).toBe(401);
    const after = ((await (await signIn(password!)).json()) as any).data.token;
    expect((await me(after)).status).toBe(200);
    const orgId = ((await (await me(after)).json()) as any).data.user.organization_id;
    const trail = ((await (await fetch(`${url}/api/organizations/${orgId}/activity?action=password_reset`, { headers: { authorization: `Bearer ${after}` } })).json()) as any).data;
    expect(trail).toHaveLength(1);
    expect(trail[0]).toMatchObject({ method: "CLI", endpoint: "hearth reset-password", detail: "admin@localhost" });
    const unknown = await run(["reset-password", "nobody@localhost"], env(dir));
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("no user with the email nobody@localhost");
    expect((await run(["reset-password"], env(dir))).stderr).toContain("needs the account's email");
    proc.kill("SIGTERM");
    expect(await proc.exited).toBe(0);
    // Stopped: the command takes the data dir's lock itself, and the next start signs in with it.
    const stopped = await run(["reset-password", "admin@localhost"], env(dir));
    expect(stopped.code).toBe(0);
    const again = stopped.stdout.match(/is\n\n {4}(\S+)\n/)![1]!;
    const restarted = await start(dir);
    const ok = await fetch(`${restarted.url}/api/auth/login`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ email: "admin@localhost", password: again }) });
    expect(ok.status).toBe(200);
    restarted.proc.kill("SIGTERM");
    expect(await restarted.proc.exited).toBe(0);
    expect((await run(["reset-password", "admin@localhost"], env(join(dir, "nowhere")))).stderr).toContain("no Hearth database at");
    // Another version's database: neither migrated (an older Hearth could then no longer start on
    // it; before, the command migrated it silently) nor written when newer.
    const db = new Database(join(dir, "hearth.db"));
    const newest = db.query("SELECT max(created_at) AS t FROM __drizzle_migrations").get() as { t: number };
    const migrations = () => (db.query("SELECT count(*) AS n FROM __drizzle_migrations").get() as { n: number }).n;
    db.run("UPDATE __drizzle_migrations SET created_at = created_at - 1 WHERE created_at = ?", [newest.t]);
    const recorded = migrations();
    const older = await run(["reset-password", "admin@localhost"], env(dir));
    expect([older.code, migrations()]).toEqual([2, recorded]);
    expect(older.stderr).toContain("is from an older Hearth");
    db.run("UPDATE __drizzle_migrations SET created_at = ? WHERE created_at = ?", [newest.t + 86_400_000, newest.t - 1]);
    const newer = await run(["reset-password", "admin@localhost"], env(dir));
    expect([newer.code, newer.stderr]).toEqual([2, expect.stringContaining("was written by a newer Hearth")]);
    db.close();
  }, 60_000);

  test("kill -9 right after the last response loses no acknowledged `used` audit row", async () => {
    const dir = tempDir();
    const { proc, url } = await start(dir);
    const login = await fetch(`${url}/api/auth/login`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ email: "admin@localhost", password: "server-test-password" }) });
    const jwt = ((await login.json()) as any).data.token;
    const auth = { authorization: `Bearer ${jwt}`, "content-type": "application/json" };
    const ws = ((await (await fetch(`${url}/api/products`, { headers: auth })).json()) as any).data[0].id;
    const created = (await (await fetch(`${url}/api/api-tokens`, { method: "POST", headers: auth, body: JSON.stringify({ product_id: ws, token_name: "t" }) })).json()) as any;
    const uses = await Promise.all(Array.from({ length: 200 }, () => fetch(`${url}/api/api-token/auth/validate`, { headers: { "x-api-token": created.data.token } })));
    expect(uses.every((r) => r.status === 200)).toBe(true);
    // No SIGTERM: the rows still waiting in the journal must come back at the next start.
    proc.kill("SIGKILL");
    await proc.exited;

    const restarted = await start(dir);
    const logs = await fetch(`${restarted.url}/api/api-tokens/${created.data.id}/audit-logs?limit=1000`, { headers: auth });
    expect(logs.status).toBe(200);
    const actions = ((await logs.json()) as any).data.map((e: { action: string }) => e.action);
    expect(actions.filter((a: string) => a === "used")).toHaveLength(200);
    expect(actions.at(-1)).toBe("created");
    restarted.proc.kill("SIGTERM");
    expect(await restarted.proc.exited).toBe(0);
  }, 60_000);

  test("SIGTERM ends open event streams and stops in seconds, cutting a request that would not end after the grace", async () => {
    const { proc, url } = await start(tempDir());
    const login: any = await (await fetch(`${url}/api/auth/login`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ email: "admin@localhost", password: "server-test-password" }) })).json();
    const auth = { authorization: `Bearer ${login.data.token}`, "content-type": "application/json" };
    const products: any = await (await fetch(`${url}/api/products`, { headers: auth })).json();
    const graph = { nodes: [{ id: "t", type: "trigger.manual" }, { id: "ask", type: "approval", config: { message: "?" } }], edges: [{ from: "t", to: "ask" }] };
    const run: any = await (await fetch(`${url}/api/workflow/execute`, { method: "POST", headers: auth, body: JSON.stringify({ graph, product_id: products.data[0].id, input: {} }) })).json();
    // A follower of an execution waiting for an approval: its stream would stay open for ever.
    const events = await fetch(`${url}/api/workflow/${run.data.id}/events`, { headers: auth });
    const streamEnded = (async () => {
      for await (const _ of events.body!);
      return true;
    })().catch(() => true);
    // An upload whose body never ends: it is cut once the grace is over.
    void fetch(`${url}/api/knowledge-base/storage/upload`, { method: "POST", headers: { ...auth, "content-type": "multipart/form-data; boundary=x" }, body: new ReadableStream({ pull: () => Bun.sleep(1000) }), duplex: "half" } as RequestInit).catch(() => undefined);
    await Bun.sleep(300);
    const t0 = performance.now();
    proc.kill("SIGTERM");
    expect(await Promise.race([streamEnded, Bun.sleep(3000).then(() => false)])).toBe(true);
    // Before: the stop waited for as long as the follower stayed connected.
    expect(await proc.exited).toBe(0);
    expect(performance.now() - t0).toBeLessThan(12_000);
  }, 30_000);

  test("a request body over Bun's own limit still gets a JSON 413", async () => {
    const { proc, url } = await start(tempDir());
    const r = await fetch(`${url}/api/auth/login`, { method: "POST", headers: { "content-type": "application/json" }, body: new Uint8Array(60 * 1024 * 1024) });
    expect(r.status).toBe(413);
    expect(((await r.json()) as any).error).toBe("PayloadTooLarge");
    // Past twice the largest limit Bun answered by itself, with no body (110 MB measured).
    const huge = await fetch(`${url}/api/knowledge-base/storage/upload`, { method: "POST", headers: { "content-type": "multipart/form-data; boundary=x" }, body: new Uint8Array(110 * 1024 * 1024) });
    expect(huge.status).toBe(413);
    expect(((await huge.json()) as any).error).toBe("PayloadTooLarge");
    proc.kill("SIGTERM");
    await proc.exited;
  });
});
