// Applies drizzle-kit's migrations, which are bundled as text so the compiled binary has them too.
import { createHash } from "node:crypto";
import type { Db } from "./database";
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

/** Runs every migration newer than the database's last one, in one transaction. */
export function migrate(db: Db): void {
  // drizzle's dialect.migrate is what its own bun-sqlite migrator calls after reading the folder.
  const internal = db as unknown as { dialect: { migrate(m: MigrationMeta[], s: unknown, c: object): void }; session: unknown };
  internal.dialect.migrate(bundledMigrations(), internal.session, {});
}
