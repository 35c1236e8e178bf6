// Updates of a file's row, each shape prepared once: the ingestion job writes its file's status and
// progress about ten times per document, and the query builder spent ~200 µs of the event loop
// building and compiling each one.
import { eq, getTableColumns, sql } from "drizzle-orm";
import type { Db } from "../../../platform/db/database";
import { knowledgeFiles } from "../table";

export type FilePatch = Partial<typeof knowledgeFiles.$inferInsert>;

const columns = getTableColumns(knowledgeFiles);
type Column = keyof typeof columns;

export function fileUpdates(db: Db) {
  const prepared = new Map<string, { run(values: Record<string, unknown>): unknown }>();
  const statementFor = (keys: Column[]) => {
    const shape = keys.join(",");
    let statement = prepared.get(shape);
    if (!statement) {
      // A placeholder in set() must be wrapped as SQL; its value skips the column's mapping (done below).
      const set = Object.fromEntries(keys.map((k) => [k, sql`${sql.placeholder(k)}`]));
      statement = db.update(knowledgeFiles).set(set).where(eq(knowledgeFiles.id, sql.placeholder("fileId"))).prepare();
      prepared.set(shape, statement);
    }
    return statement;
  };
  /** Sets the columns of `patch` (undefined ones are left alone, as drizzle's set() does). */
  return (id: string, patch: FilePatch) => {
    const keys = (Object.keys(patch) as Column[]).filter((k) => patch[k] !== undefined).sort();
    const values: Record<string, unknown> = { fileId: id };
    for (const k of keys) values[k] = patch[k] === null ? null : columns[k].mapToDriverValue(patch[k] as never);
    statementFor(keys).run(values);
  };
}
