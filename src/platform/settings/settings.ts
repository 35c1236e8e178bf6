// Hearth's own settings (settings table): a value stored the first time and read back whichever value
// won (a secret generated at the first start stays the same ever after).
import { eq } from "drizzle-orm";
import type { Db } from "../db/database";
import type { Clock } from "../clock";
import { settings } from "./table";

export function createSettings({ db, clock }: { db: Db; clock: Clock }) {
  return {
    /** Stores `value` under `key` unless one is already there; returns the stored value. */
    ensure(key: string, value: string): string {
      db.insert(settings).values({ key, value, updatedAt: new Date(clock.now()) }).onConflictDoNothing().run();
      return db.select().from(settings).where(eq(settings.key, key)).get()!.value;
    },
    /** Stores `value` under `key`, replacing what was there. */
    put(key: string, value: string): void {
      const updatedAt = new Date(clock.now());
      db.insert(settings).values({ key, value, updatedAt }).onConflictDoUpdate({ target: settings.key, set: { value, updatedAt } }).run();
    },
  };
}

export type Settings = ReturnType<typeof createSettings>;
