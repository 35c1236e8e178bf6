// A consistent copy of the live database (VACUUM INTO), checked before it is called done.
import { Database } from "bun:sqlite";
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { forbidden, invalid } from "../../platform/errors";
import type { Clock } from "../../platform/clock";
import type { Principal } from "../../platform/auth/principal";
import { privateFile } from "../../platform/db/database";
import { workerUrl } from "../../platform/native";

/** A partial copy and the files SQLite may keep beside it. */
const PARTIAL_SUFFIXES = ["", "-journal", "-wal", "-shm"];

export interface BackupResult {
  file: string;
  bytes: number;
  integrity: "ok";
}

/**
 * Writes a copy of `sqlite`'s database to `target` and runs an integrity check on the copy.
 * Works while Hearth serves requests: VACUUM INTO reads one snapshot under WAL.
 */
export function backupDatabase(sqlite: Database, target: string, loadExtension?: (db: Database) => void): BackupResult {
  const file = resolve(target);
  if (existsSync(file)) throw invalid(`backup target ${file} already exists; choose a new file name`);
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  const partial = `${file}.partial`;
  // What a copy that failed leaves (the disk filled up, an I/O error, a bad check): its partial
  // file and SQLite's journal beside it, removed at once rather than at the next start.
  const removePartial = () => {
    for (const suffix of PARTIAL_SUFFIXES) rmSync(`${partial}${suffix}`, { force: true });
  };
  removePartial();
  try {
    // Created empty and private first (VACUUM INTO accepts an empty file): a copy holds the same
    // secrets as the database.
    privateFile(partial);
    sqlite.query("VACUUM INTO ?").run(partial);
    const copy = new Database(partial, { readonly: true });
    try {
      loadExtension?.(copy);
      const rows = copy.query<{ integrity_check: string }, []>("PRAGMA integrity_check").all();
      if (rows.length !== 1 || rows[0]!.integrity_check !== "ok") {
        throw new Error(`backup copy failed its integrity check: ${rows.map((r) => r.integrity_check).join("; ")}`);
      }
    } finally {
      copy.close();
    }
    renameSync(partial, file);
  } catch (e) {
    removePartial();
    throw e;
  }
  return { file, bytes: statSync(file).size, integrity: "ok" };
}

/**
 * `backupDatabase` of the database file at `dbPath` on a thread of its own (backup-worker.ts), for
 * the running server: a refusal (the target exists) keeps its status, anything else is a failure.
 */
export function backupApart(dbPath: string, target: string): Promise<BackupResult> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(workerUrl("features/system/backup-worker.ts"), { smol: true });
    worker.onmessage = (ev: MessageEvent<{ ok: true; result: BackupResult } | { ok: false; status: number; message: string }>) => {
      worker.terminate();
      const r = ev.data;
      if (r.ok) resolve(r.result);
      else reject(r.status === 400 ? invalid(r.message) : new Error(`backup failed: ${r.message}`));
    };
    worker.onerror = (ev) => {
      worker.terminate();
      reject(new Error(`backup failed: ${ev.message}`));
    };
    worker.postMessage({ path: dbPath, target });
  });
}

/**
 * Super admins' backups (POST /api/admin/backup) into <data dir>/backups/, named by when each was
 * taken. One copy is made at a time: requests that come while one is made share the next one,
 * which starts when it ends, so each answer's copy holds everything acknowledged before it was
 * asked for. (Made side by side, copies of one millisecond shared a name and a partial file:
 * 10 at once gave 3 refusals and 2 "disk I/O error"s.)
 */
export function createAdminBackups(d: { dataDir: string; clock: Clock; backup: (file: string) => Promise<BackupResult>; keep: number }) {
  let running: Promise<BackupResult> | undefined;
  let next: Promise<BackupResult> | undefined;
  const dir = join(d.dataDir, "backups");
  /**
   * Keeps the newest `keep` copies (HEARTH_BACKUP_KEEP; 0: all), once a new one is whole: a
   * backup a day filled the data dir's own disk, the one the database writes to. Their names
   * sort by when they were taken.
   */
  const prune = () => {
    if (d.keep === 0) return;
    const copies = readdirSync(dir).filter((n) => /^hearth-.*\.db$/.test(n)).sort();
    for (const name of copies.slice(0, Math.max(0, copies.length - d.keep))) rmSync(join(dir, name), { force: true });
  };
  const copy = (): Promise<BackupResult> => {
    const stamp = new Date(d.clock.now()).toISOString().replace(/[:.]/g, "-");
    let file = join(dir, `hearth-${stamp}.db`);
    for (let n = 2; existsSync(file); n++) file = join(dir, `hearth-${stamp}-${n}.db`);
    running = d
      .backup(file)
      .then((result) => {
        prune();
        return result;
      })
      .finally(() => (running = undefined));
    return running;
  };
  return {
    take(principal: Principal): Promise<BackupResult> {
      if (principal.kind !== "user" || !principal.isSuperAdmin) throw forbidden("Only super admins may take backups");
      if (!running) return copy();
      next ??= running
        .catch(() => undefined)
        .then(() => {
          next = undefined;
          return copy();
        });
      return next;
    },
  };
}

/** Removes what backups a crash or a kill cut short left in <data dir>/backups/ (their partial files). */
export function clearPartialBackups(dataDir: string): void {
  const dir = join(dataDir, "backups");
  if (!existsSync(dir)) return;
  for (const name of readdirSync(dir)) if (/\.partial(-journal|-wal|-shm)?$/.test(name)) rmSync(join(dir, name), { force: true });
}
