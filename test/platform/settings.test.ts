// Hearth's own settings (platform/settings): a value stored once stays, so the JWT secret generated at
// the first start signs sessions that still work after a restart.
import { afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openStorage, type Storage } from "../../src/platform/db/database";
import { migrate } from "../../src/platform/db/migrate";
import { manualClock } from "../../src/platform/clock";
import { createSettings } from "../../src/platform/settings/settings";
import { createHarness } from "../support/harness";

const dirs: string[] = [];
const opened: Storage[] = [];
afterEach(() => {
  for (const s of opened.splice(0)) s.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), "hearth-settings-"));
  dirs.push(d);
  return d;
};

describe("settings", () => {
  test("ensure stores a value the first time and returns the stored one after", async () => {
    const storage = await openStorage(tempDir());
    opened.push(storage);
    migrate(storage.db);
    const settings = createSettings({ db: storage.db, clock: manualClock() });
    const stored = () => (storage.sqlite.query("SELECT value FROM settings WHERE key = 'k'").get() as { value: string } | null)?.value;
    expect(stored()).toBeUndefined();
    expect(settings.ensure("k", "first")).toBe("first");
    expect(settings.ensure("k", "second")).toBe("first");
    expect(stored()).toBe("first");
  });

  test("a session signed before a restart still works after it (the generated JWT secret is kept)", async () => {
    const dir = tempDir();
    const first = await createHarness({}, dir);
    const jwt = await first.login();
    await first.close();
    const second = await createHarness({}, dir);
    try {
      const me = await second.call("GET", "/api/auth/me", { token: jwt });
      expect(me.status).toBe(200);
      expect(me.body.data.auth_type).toBe("jwt");
    } finally {
      await second.close();
    }
  });
});
