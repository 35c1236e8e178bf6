// A process that appends rows to a write-behind journal and is then killed (the test sends SIGKILL):
// `bun journal-writer.ts <dir> <rows>` opens <dir>/t.db and <dir>/t.journal as the write-behind
// tests do, appends the rows (nothing is folded: the delay is an hour), prints "appended" and waits.
import { Database } from "bun:sqlite";
import { join } from "node:path";
import { createWriteBehind } from "../../src/platform/db/write-behind";
import { createLogger } from "../../src/platform/log";

const [dir, count] = [process.argv[2]!, Number(process.argv[3])];
const db = new Database(join(dir, "t.db"));
db.exec("PRAGMA journal_mode = WAL");
db.exec("CREATE TABLE IF NOT EXISTS rows (id INTEGER PRIMARY KEY, v TEXT NOT NULL)");
db.exec("CREATE TABLE IF NOT EXISTS mark (k INTEGER PRIMARY KEY CHECK (k = 1), seq INTEGER NOT NULL)");
const wb = createWriteBehind<{ v: string }>({
  path: join(dir, "t.journal"),
  log: createLogger(true),
  delayMs: 3_600_000,
  db,
  sql: { rowSql: "INSERT INTO rows (v) VALUES (?)", markSql: "INSERT INTO mark (k, seq) VALUES (1, ?) ON CONFLICT (k) DO UPDATE SET seq = excluded.seq" },
  params: (r) => [r.v],
  applied: () => (db.query("SELECT seq FROM mark").get() as { seq: number } | null)?.seq ?? 0,
});
// Half appended one by one, half in groups of a turn (as token requests are).
for (let i = 0; i < count / 2; i++) wb.append({ v: `r${i}` });
await Promise.all(Array.from({ length: count - Math.floor(count / 2) }, (_, i) => wb.appendInGroup({ v: `r${Math.floor(count / 2) + i}` })));
process.stdout.write("appended\n");
setInterval(() => {}, 1_000);
