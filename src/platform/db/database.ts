// Opens Hearth's one SQLite file: pragmas, the single-instance lock, sqlite-vec, drizzle.
import { Database } from "bun:sqlite";
import { mkdirSync, writeFileSync, readFileSync, accessSync, constants, chmodSync, closeSync, existsSync, openSync } from "node:fs";
import { statfs } from "node:fs/promises";
import { dirname, join } from "node:path";
import { drizzle, type BunSQLiteDatabase } from "drizzle-orm/bun-sqlite";
import { getLoadablePath } from "sqlite-vec";
import { nativePath } from "../native";
import { ConfigError } from "../config";
import type { Logger } from "../log";
import type { Part } from "../parts";
import { startCheckpointer, type Checkpointer, type CheckpointerOptions } from "./checkpointer";
import { writeFailures } from "./write-failures";

// With its connection (`$client`), for the few hot statements that skip the query builder.
export type Db = BunSQLiteDatabase & { $client: Database };

export interface Storage {
  readonly sqlite: Database;
  readonly db: Db;
  readonly path: string;
  readonly vecVersion: string;
  /** A second connection to the same file, for a hot path that needs its own durability. */
  openConnection(durability: Durability): { sqlite: Database; db: Db };
  /** Moves WAL checkpoints to a worker thread (the server; see checkpointer.ts). */
  startCheckpointer(log: Pick<Logger, "warn">, options?: CheckpointerOptions): Checkpointer;
  close(): Promise<void>;
}

/**
 * Creates `path` readable and writable by Hearth's user only (0600), or tightens it if it exists:
 * the database holds password hashes, token hashes and the session signing secret.
 */
export function privateFile(path: string): void {
  closeSync(openSync(path, "a", 0o600));
  chmodSync(path, 0o600);
}

/** Below this much free space on the data dir's disk the database is reported unavailable (SQLite refuses writes near it). */
export const DISK_FULL_BYTES = 8 * 1024 * 1024;
/** Below this much, /health says so beside `ok`. */
export const DISK_LOW_BYTES = 256 * 1024 * 1024;
/** /health is not limited: the free space it reports is read at most this often. */
const FREE_SPACE_TTL_MS = 1000;

/** Bytes an unprivileged process may still write on the file system holding `dir`. */
export async function freeBytesOf(dir: string): Promise<number> {
  const s = await statfs(dir);
  return s.bavail * s.bsize;
}

const megabytes = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);

/**
 * The database as a part of Hearth (platform/parts.ts). /health asks it a query, and since a query
 * reads and a full disk refuses only writes, also the free space of its disk and whether a write
 * failed within the last minute with none working since (platform/db/write-failures.ts).
 */
export function databasePart(sqlite: Database, { freeBytes = freeBytesOf }: { freeBytes?: (dir: string) => Promise<number> } = {}): Part {
  const dir = dirname(sqlite.filename);
  let free: { bytes: number | undefined; at: number } | undefined;
  const freeNow = async () => {
    const now = performance.now();
    if (!free || now - free.at > FREE_SPACE_TTL_MS) free = { bytes: await freeBytes(dir).catch(() => undefined), at: now };
    return free.bytes;
  };
  return {
    name: "database",
    checks: {
      database: async () => {
        sqlite.query("SELECT 1").get();
        const bytes = await freeNow();
        if (bytes !== undefined && bytes < DISK_FULL_BYTES) return { status: "unavailable", reason: `disk full: ${megabytes(bytes)} MB free on the data dir's disk; writes fail until space is freed (delete files or old executions)` };
        const failed = writeFailures.recent();
        if (failed) return { status: "unavailable", reason: `writes fail: ${failed.error} (last ${Math.round(failed.agoMs / 1000)} s ago)` };
        return bytes !== undefined && bytes < DISK_LOW_BYTES ? { status: "ok", detail: `low disk space: ${megabytes(bytes)} MB free on the data dir's disk` } : { status: "ok" };
      },
    },
  };
}

/** Another Hearth already holds the data dir. */
export class InstanceLockedError extends Error {}

export type Durability = "FULL" | "NORMAL";

/** The settings every connection to the database gets, as statements (a worker thread's connection runs them too). */
export function pragmaStatements(durability: Durability = "FULL"): string[] {
  return [
    "PRAGMA journal_mode = WAL",
    // FULL (the main connection): in WAL mode every commit is fsynced before it returns, so an
    // acknowledged write (a token, an upload, a chunk batch) survives a power cut, not only a
    // process crash. NORMAL (only the connections that fold journaled audit rows, see
    // `openConnection` and write-behind.ts): the commit is in the WAL through write(), while a
    // power cut may lose the last rows since the previous checkpoint.
    `PRAGMA synchronous = ${durability}`,
    "PRAGMA foreign_keys = ON",
    // Wait for a lock instead of failing at once (the backup command reads while Hearth writes).
    "PRAGMA busy_timeout = 5000",
    "PRAGMA temp_store = MEMORY",
  ];
}

export function applyPragmas(sqlite: Database, durability: Durability = "FULL"): void {
  for (const statement of pragmaStatements(durability)) sqlite.exec(statement);
}

/**
 * Holds an exclusive lock on `<dataDir>/hearth.lock` for the life of the process. The lock is a
 * SQLite write transaction, so the OS drops it when the process dies: no stale lock after a crash.
 */
export function lockDataDir(dataDir: string): { release(): void } {
  const lockPath = join(dataDir, "hearth.lock");
  const pidPath = join(dataDir, "hearth.pid");
  privateFile(lockPath);
  const lock = new Database(lockPath, { create: true });
  try {
    lock.exec("PRAGMA busy_timeout = 0");
    lock.exec("BEGIN EXCLUSIVE");
  } catch (e) {
    lock.close();
    if (!/locked|busy/i.test(String(e))) throw e;
    let holder = "another process";
    try {
      holder = `process ${readFileSync(pidPath, "utf8").trim()}`;
    } catch {}
    throw new InstanceLockedError(`another Hearth (${holder}) is already using the data dir ${dataDir}; stop it first or choose another HEARTH_DATA_DIR`);
  }
  writeFileSync(pidPath, String(process.pid), { mode: 0o600 });
  chmodSync(pidPath, 0o600);
  return {
    release() {
      try {
        lock.exec("ROLLBACK");
      } catch {}
      lock.close();
    },
  };
}

export function ensureDataDir(dataDir: string): void {
  try {
    // 0700 for the folders Hearth creates; an existing folder is the operator's choice.
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    accessSync(dataDir, constants.W_OK);
  } catch {
    throw new ConfigError(`HEARTH_DATA_DIR ${dataDir} cannot be created or written`);
  }
}

/**
 * What to tell the operator when SQLite finds the database damaged (a ConfigError naming the file
 * and the way out), or undefined for any other failure.
 */
export function damagedDatabase(e: unknown, path: string): ConfigError | undefined {
  const code = (e as { code?: string }).code;
  if (code === "SQLITE_NOTADB") return new ConfigError(`${path} is not a SQLite database (damaged, or another file): restore a backup in its place (README: Backup and restore)`);
  if (code === "SQLITE_CORRUPT") return new ConfigError(`${path} is damaged (SQLite: ${(e as Error).message}): restore a backup in its place (README: Backup and restore)`);
  return undefined;
}

/** Opens (creating if needed) `<dataDir>/hearth.db` with sqlite-vec loaded. */
export async function openStorage(dataDir: string): Promise<Storage> {
  ensureDataDir(dataDir);
  const path = join(dataDir, "hearth.db");
  // SQLite gives the WAL and shm files the database's mode, so a 0600 database keeps them private;
  // ones left by an older Hearth are tightened too.
  privateFile(path);
  for (const f of [`${path}-wal`, `${path}-shm`]) if (existsSync(f)) chmodSync(f, 0o600);
  const sqlite = new Database(path, { create: true, strict: true });
  try {
    applyPragmas(sqlite);
  } catch (e) {
    sqlite.close();
    throw damagedDatabase(e, path) ?? e;
  }
  const vec = await nativePath("vec0.so", dataDir, getLoadablePath);
  sqlite.loadExtension(vec);
  const { version } = sqlite.query<{ version: string }, []>("SELECT vec_version() AS version").get()!;
  const extra: Database[] = [];
  let checkpointer: Checkpointer | undefined;
  return {
    sqlite,
    db: drizzle({ client: sqlite }),
    path,
    vecVersion: version,
    openConnection(durability) {
      const conn = new Database(path, { strict: true });
      applyPragmas(conn, durability);
      checkpointer?.adopt(conn);
      extra.push(conn);
      return { sqlite: conn, db: drizzle({ client: conn }) };
    },
    startCheckpointer(log, options) {
      checkpointer ??= startCheckpointer(path, log, options);
      for (const c of [sqlite, ...extra]) checkpointer.adopt(c);
      return checkpointer;
    },
    async close() {
      await checkpointer?.stop();
      for (const c of extra) c.close();
      sqlite.close();
    },
  };
}
