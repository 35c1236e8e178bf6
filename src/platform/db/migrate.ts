// Applies drizzle-kit's migrations, which are bundled as text so the compiled binary has them too.
import { createHash } from "node:crypto";
import { ConfigError } from "../config";
import { damagedDatabase, type Db } from "./database";
import { migrationJournal, migrationSql } from "./migrations/index";

interface MigrationMeta {
  sql: string[];
  bps: boolean;
  folderMillis: number;
  hash: string;
}

/** The same records drizzle's file-based migrator reads from disk, built from the bundled text. */
export function bundledMigrations(): MigrationMeta[] {
  return migrationJournal.entries.map((entry) => {
    const text = migrationSql[entry.tag];
    if (text === undefined) throw new Error(`migration ${entry.tag} is in the journal but not bundled; run npm run db:generate`);
    return {
      sql: text.split("--> statement-breakpoint"),
      bps: entry.breakpoints,
      folderMillis: entry.when,
      hash: createHash("sha256").update(text).digest("hex"),
    };
  });
}

/** When the database's last migration was made; null when none was (a new database has no migrations table yet). */
function lastMigration(sqlite: Db["$client"]): number | null {
  const known = sqlite.query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '__drizzle_migrations'").get();
  return known ? (sqlite.query<{ last: number | null }, []>("SELECT max(created_at) AS last FROM __drizzle_migrations").get()?.last ?? null) : null;
}

/** When the database's last migration was made (null: none yet), and the newest this build has. */
export function schemaDates(db: Db): { last: number | null; newest: number } {
  return { last: lastMigration(db.$client), newest: Math.max(...bundledMigrations().map((m) => m.folderMillis)) };
}

/**
 * Runs every migration newer than the database's last one, in one transaction. A database whose
 * last migration is newer than any this build has was written by a newer Hearth: refused, since
 * this one would run on a schema it does not know (a binary rolled back after an upgrade).
 */
export function migrate(db: Db): void {
  const migrations = bundledMigrations();
  const newest = Math.max(...migrations.map((m) => m.folderMillis));
  const sqlite = db.$client;
  try {
    const last = lastMigration(sqlite);
    if (last !== null && last > newest) {
      throw new ConfigError(
        `${sqlite.filename} was written by a newer Hearth (its schema is from ${new Date(last).toISOString()}, this build knows up to ${new Date(newest).toISOString()}): run that version, or restore a backup taken before the upgrade`,
      );
    }
    // drizzle's dialect.migrate is what its own bun-sqlite migrator calls after reading the folder.
    const internal = db as unknown as { dialect: { migrate(m: MigrationMeta[], s: unknown, c: object): void }; session: { run(q: unknown): unknown } };
    // SQLite rolls the transaction back itself when a write fails (a full or failing disk); drizzle's
    // ROLLBACK then failed with "no transaction is active", and that error hid the one that mattered.
    const session = Object.create(internal.session, {
      run: {
        value: (q: unknown) => {
          try {
            return internal.session.run(q);
          } catch (e) {
            if (/no transaction is active/.test(String((e as { cause?: unknown }).cause))) return undefined;
            throw e;
          }
        },
      },
    });
    internal.dialect.migrate(migrations, session, {});
  } catch (e) {
    // A damaged file shows itself here first (the pragmas at open read only its header).
    throw damagedDatabase(e, sqlite.filename) ?? e;
  }
}
