// A process that appends rows to a write-behind journal and is then killed (the test sends SIGKILL):
// `bun journal-writer.ts <dir> <rows>` opens the database and journal the write-behind test's
// fixture made in <dir>, appends the rows (nothing is folded: the delay is an hour), prints
// "appended" and waits.
import { Database } from "bun:sqlite";
import { join } from "node:path";
import { createWriteBehind } from "../../src/platform/db/write-behind";
import { createLogger } from "../../src/platform/log";
import { appliedMark, JOURNAL_SQL } from "./journal-fixture";

const [dir, count] = [process.argv[2]!, Number(process.argv[3])];
const db = new Database(join(dir, "t.db"));
const wb = createWriteBehind<{ v: string }>({
  path: join(dir, "t.journal"),
  log: createLogger(true),
  delayMs: 3_600_000,
  db,
  sql: JOURNAL_SQL,
  params: (r) => [r.v],
  applied: () => appliedMark(db),
});
// Half appended one by one, the rest in groups of a turn (as token requests are).
const half = Math.floor(count / 2);
for (let i = 0; i < half; i++) wb.append({ v: `r${i}` });
await Promise.all(Array.from({ length: count - half }, (_, i) => wb.appendInGroup({ v: `r${half + i}` })));
process.stdout.write("appended\n");
setInterval(() => {}, 1_000);
