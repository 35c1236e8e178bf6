// A process for keyword-migration.test.ts to kill -9: `migrate <db>` applies the migrations,
// `backlog <db>` indexes the listed CJK chunks a slice at a time; each says where it is on stdout.
import { Database } from "bun:sqlite";
import { drizzle } from "drizzle-orm/bun-sqlite";
import { migrate } from "../../../src/platform/db/migrate";
import { createKeywordStore } from "../../../src/features/knowledge/keyword-store";

const [what, path] = process.argv.slice(2);
const sqlite = new Database(path!);
sqlite.exec("PRAGMA journal_mode = WAL; PRAGMA foreign_keys = ON; PRAGMA busy_timeout = 5000");
if (what === "migrate") {
  console.log("migrating");
  migrate(drizzle(sqlite) as never);
  console.log("migrated");
} else {
  const store = createKeywordStore(sqlite);
  while (store.indexBacklog(20) > 0) {
    console.log("slice");
    await Bun.sleep(1);
  }
  console.log("indexed");
}
