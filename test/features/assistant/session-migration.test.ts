// Migration 0006 carries chat sessions and messages over to the workspace-scoped key, and keeps tokens and their logs.
import { expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openStorage } from "../../../src/platform/db/database";
import { bundledMigrations, migrate } from "../../../src/platform/db/migrate";

test("sessions, messages, tokens and audit rows written before 0006 are all there after it", async () => {
  const dir = mkdtempSync(join(tmpdir(), "hearth-migration-"));
  const s = await openStorage(dir);
  const before = bundledMigrations().slice(0, 6); // 0000..0005
  (s.db as unknown as { dialect: { migrate(m: unknown, s: unknown, c: object): void }; session: unknown }).dialect.migrate(before, (s.db as any).session, {});
  const run = (sql: string, ...args: unknown[]) => s.sqlite.query(sql).run(...(args as never[]));
  run("INSERT INTO organizations (id, name, created_at) VALUES ('o', 'Org', 1)");
  run("INSERT INTO users (id, organization_id, email, name, password_hash, role, created_at) VALUES ('u', 'o', 'a@b.c', 'A', 'x', 'owner', 1)");
  run("INSERT INTO products (id, organization_id, name, created_at, updated_at) VALUES ('p', 'o', 'W', 1, 1)");
  run("INSERT INTO chat_sessions (id, product_id, title, created_at, updated_at) VALUES ('support', 'p', 'first', 1, 2), ('b', 'p', 'second', 3, 4)");
  run("INSERT INTO chat_messages (session_id, role, content, created_at) VALUES ('support', 'user', 'q1', 1), ('b', 'user', 'q2', 3), ('support', 'assistant', 'a1', 2)");
  run("INSERT INTO api_tokens (id, product_id, user_id, token_name, token_prefix, token_hash, created_at, updated_at) VALUES ('t', 'p', 'u', 'n', 'svc_x', 'h', 1, 1)");
  run("INSERT INTO api_token_audit_logs (token_id, action, created_at) VALUES ('t', 'created', 1), ('t', 'used', 2)");

  migrate(s.db);

  const sessions = s.sqlite.query("SELECT key, id, product_id, owner_kind, owner_id, title FROM chat_sessions ORDER BY key").all();
  expect(sessions).toEqual([
    { key: 1, id: "support", product_id: "p", owner_kind: null, owner_id: null, title: "first" },
    { key: 2, id: "b", product_id: "p", owner_kind: null, owner_id: null, title: "second" },
  ]);
  const messages = s.sqlite.query("SELECT m.id, s.id AS session, m.content FROM chat_messages m JOIN chat_sessions s ON s.key = m.session_key ORDER BY m.id").all();
  expect(messages).toEqual([
    { id: 1, session: "support", content: "q1" },
    { id: 2, session: "b", content: "q2" },
    { id: 3, session: "support", content: "a1" },
  ]);
  // The foreign key follows the renamed table: deleting a session deletes its messages.
  run("DELETE FROM chat_sessions WHERE id = 'b'");
  expect((s.sqlite.query("SELECT count(*) AS n FROM chat_messages").get() as { n: number }).n).toBe(2);
  expect(s.sqlite.query("PRAGMA foreign_key_check").all()).toEqual([]);
  expect(s.sqlite.query("SELECT action, count FROM api_token_audit_logs ORDER BY id").all()).toEqual([
    { action: "created", count: 1 },
    { action: "used", count: 1 },
  ]);
  expect(s.sqlite.query("SELECT deleted_at FROM api_tokens").get()).toEqual({ deleted_at: null });
  s.close();
  rmSync(dir, { recursive: true });
});
