// The statements the write-behind tests fold with, shared by the test's fixture and by
// journal-writer.ts (a process the tests kill): both must journal and fold the same way.
import type { Database } from "bun:sqlite";
import type { FoldSql } from "../../src/platform/db/fold-protocol";

export const JOURNAL_SQL: FoldSql = {
  rowSql: "INSERT INTO rows (v) VALUES (?)",
  markSql: "INSERT INTO mark (k, seq) VALUES (1, ?) ON CONFLICT (k) DO UPDATE SET seq = excluded.seq",
};

/** The sequence number of the last row folded, as `markSql` wrote it (0 for none). */
export const appliedMark = (db: Database) => (db.query("SELECT seq FROM mark").get() as { seq: number } | null)?.seq ?? 0;
