// The backup's thread (backup.ts backupApart): VACUUM INTO and the copy's integrity check on a
// connection of its own, so copying a large database (~4 ms per MB) never stops the event loop.
import { Database } from "bun:sqlite";
import { AppError } from "../../platform/errors";
import { backupDatabase } from "./backup";

declare const self: Worker;

self.onmessage = (ev: MessageEvent<{ path: string; target: string }>) => {
  let db: Database | undefined;
  try {
    db = new Database(ev.data.path, { create: false });
    self.postMessage({ ok: true, result: backupDatabase(db, ev.data.target) });
  } catch (e) {
    self.postMessage({ ok: false, status: e instanceof AppError ? e.status : 500, message: (e as Error).message });
  } finally {
    db?.close();
  }
};
