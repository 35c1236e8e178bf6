// A consistent copy of the live database (VACUUM INTO), checked before it is called done.
import { Database } from "bun:sqlite";
import { existsSync, mkdirSync, renameSync, rmSync, statSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { invalid } from "../../platform/errors";
import { privateFile } from "../../platform/db/database";

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
  rmSync(partial, { force: true });
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
  return { file, bytes: statSync(file).size, integrity: "ok" };
}
