// Storage: pragmas, migrations bundled and applied once, sqlite-vec loaded, restart persistence.
import { describe, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openStorage, lockDataDir, InstanceLockedError } from "../../src/platform/db/database";
import { bundledMigrations, migrate } from "../../src/platform/db/migrate";
import { migrationJournal } from "../../src/platform/db/migrations/index";
import { createHarness, defaultWorkspaceId } from "../support/harness";

const tempDir = () => mkdtempSync(join(tmpdir(), "hearth-storage-"));

describe("database", () => {
  test("WAL, foreign keys, busy timeout, FULL sync and sqlite-vec are on", async () => {
    const dir = tempDir();
    const s = await openStorage(dir);
    const q = (sql: string) => Object.values(s.sqlite.query(sql).get() as object)[0];
    expect(q("PRAGMA journal_mode")).toBe("wal");
    expect(q("PRAGMA foreign_keys")).toBe(1);
    expect(q("PRAGMA busy_timeout")).toBe(5000);
    expect(q("PRAGMA synchronous")).toBe(2);
    expect(String(q("SELECT vec_version()"))).toMatch(/^v\d/);
    s.sqlite.exec("CREATE VIRTUAL TABLE v USING vec0(embedding float[4])");
    s.sqlite.query("INSERT INTO v(rowid, embedding) VALUES (1, ?)").run(new Float32Array([1, 0, 0, 0]));
    const hit = s.sqlite.query("SELECT rowid, distance FROM v WHERE embedding MATCH ? AND k = 1").get(new Float32Array([1, 0, 0, 0])) as { rowid: number; distance: number };
    expect(hit).toEqual({ rowid: 1, distance: 0 });
    s.close();
    rmSync(dir, { recursive: true });
  });

  test("every migration on disk is bundled, and migrating twice is a no-op", async () => {
    const dir = join(import.meta.dir, "../../src/platform/db/migrations");
    const onDisk = readdirSync(dir).filter((f) => f.endsWith(".sql")).map((f) => f.replace(/\.sql$/, ""));
    expect(migrationJournal.entries.map((e) => e.tag).sort()).toEqual(onDisk.sort());
    expect(bundledMigrations().length).toBe(onDisk.length);

    const data = tempDir();
    const s = await openStorage(data);
    migrate(s.db);
    migrate(s.db);
    const applied = s.sqlite.query("SELECT count(*) AS n FROM __drizzle_migrations").get() as { n: number };
    expect(applied.n).toBe(onDisk.length);
    // A database a newer Hearth migrated further is refused, not run on a schema this build does not know.
    const newest = Math.max(...bundledMigrations().map((m) => m.folderMillis));
    s.sqlite.run("INSERT INTO __drizzle_migrations (hash, created_at) VALUES ('from-a-newer-hearth', ?)", [newest + 86_400_000]);
    expect(() => migrate(s.db)).toThrow(/was written by a newer Hearth .*: run that version, or restore a backup taken before the upgrade/);
    s.close();
    rmSync(data, { recursive: true });
  });

  test("a second holder of the data dir is refused with a clear message; the lock dies with its holder", () => {
    const dir = tempDir();
    const first = lockDataDir(dir);
    expect(() => lockDataDir(dir)).toThrow(InstanceLockedError);
    expect(() => lockDataDir(dir)).toThrow(/already using the data dir/);
    first.release();
    const again = lockDataDir(dir);
    again.release();
    rmSync(dir, { recursive: true });
  });
});

describe("restart", () => {
  test("users, workspaces, tokens and audit rows survive a restart; the first owner is not recreated", async () => {
    const dir = tempDir();
    const a = await createHarness({}, dir);
    const jwt = await a.login();
    const ws = await a.call("POST", "/api/products", { token: jwt, body: { name: "Persisted" } });
    const t = await a.call("POST", "/api/api-tokens", { token: jwt, body: { product_id: ws.body.data.id, token_name: "survivor" } });
    await a.call("GET", "/api/api-token/auth/validate", { headers: { "x-api-token": t.body.data.token } });
    expect(a.services.bootstrap).not.toBeNull();
    await a.close(); // stop() writes queued audit rows

    const b = await createHarness({ HEARTH_ADMIN_PASSWORD: "a different password" }, dir);
    expect(b.services.bootstrap).toBeNull();
    const jwt2 = await b.login(); // the original password still works
    expect((await b.call("GET", `/api/products/${ws.body.data.id}`, { token: jwt2 })).body.data.name).toBe("Persisted");
    // The stored JWT secret survives too, so an old session stays valid.
    expect((await b.call("GET", "/api/auth/me", { token: jwt })).status).toBe(200);
    const v = await b.call("GET", "/api/api-token/auth/validate", { headers: { "x-api-token": t.body.data.token } });
    expect(v.status).toBe(200);
    const log = await b.call("GET", `/api/api-tokens/${t.body.data.id}/audit-logs`, { token: jwt2 });
    expect(log.body.data.map((e: { action: string }) => e.action)).toEqual(["used", "used", "created"]);
    expect(await defaultWorkspaceId(b, jwt2)).toBeString();
    await b.close();
    rmSync(dir, { recursive: true });
  });
});
