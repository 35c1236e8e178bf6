// A backup that fails leaves nothing behind: its partial copy and SQLite's journal beside it are
// removed at once (before, they stayed in backups/ until the next start), and the error is the copy's.
import { afterAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { backupDatabase } from "../../../src/features/system/backup";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A database of ~4 MB (4 blobs of 1 MB that do not compress) in a new folder. */
function source() {
  const dir = mkdtempSync(join(tmpdir(), "hearth-backup-"));
  dirs.push(dir);
  const path = join(dir, "hearth.db");
  const db = new Database(path);
  db.exec("PRAGMA journal_mode = WAL; CREATE TABLE ballast (b BLOB)");
  const page = new Uint8Array(1 << 20).map((_, i) => (i * 2654435761) & 255);
  for (let i = 0; i < 4; i++) db.run("INSERT INTO ballast VALUES (?)", [page]);
  return { dir, path, db };
}

describe("a backup that fails", () => {
  test("cut short by a full disk (a 1 MB file-size limit): no partial copy and no journal are left", async () => {
    const s = source();
    s.db.close();
    const target = join(s.dir, "backups", "copy.db");
    // The child may write files of 1 MB at most: VACUUM INTO's writes past it fail (EFBIG, its
    // signal ignored), as they do on a disk that fills up during the copy.
    const script = `import { Database } from "bun:sqlite";
      import { backupDatabase } from ${JSON.stringify(join(import.meta.dir, "../../../src/features/system/backup.ts"))};
      try { backupDatabase(new Database(${JSON.stringify(s.path)}), ${JSON.stringify(target)}); console.log("copied"); }
      catch (e) { console.log("failed: " + e.message); }`;
    const child = Bun.spawn(["bash", "-c", `trap '' XFSZ; ulimit -f 1024; exec "$0" -e "$1"`, process.execPath, script], { stdout: "pipe", stderr: "inherit" });
    const said = (await new Response(child.stdout).text()).trim();
    expect(await child.exited).toBe(0);
    expect(said).toBe("failed: disk I/O error");
    expect(readdirSync(join(s.dir, "backups"))).toEqual([]);
  }, 30_000);

  test("a copy that fails its check is removed and the check's error thrown", () => {
    const s = source();
    const target = join(s.dir, "backups", "checked.db");
    const refuse = () => {
      throw new Error("backup copy failed its integrity check: page 3 is never used");
    };
    expect(() => backupDatabase(s.db, target, refuse)).toThrow("page 3 is never used");
    expect(readdirSync(join(s.dir, "backups"))).toEqual([]);
    // The next copy to that name is made as if the first never was.
    expect(backupDatabase(s.db, target).integrity).toBe("ok");
    expect(existsSync(target)).toBe(true);
    expect(readdirSync(join(s.dir, "backups"))).toEqual(["checked.db"]);
    s.db.close();
  });
});
