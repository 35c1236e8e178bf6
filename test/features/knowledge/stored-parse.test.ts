// The parser launcher reads a stored upload from the database itself (the event loop never holds its
// bytes) and parses it like bytes handed to it.
import { afterAll, expect, test } from "bun:test";
import { parseStoredFile } from "../../../src/features/knowledge/ingest/isolate";
import { ParseError } from "../../../src/features/knowledge/ingest/parse";
import { createHarness, defaultWorkspaceId, uploadText, type Harness } from "../../support/harness";

let h: Harness;
afterAll(() => h?.close());

test("a stored file is read and parsed on the launcher thread; a missing one fails saying so", async () => {
  h = await createHarness();
  const jwt = await h.login();
  const id = await uploadText(h, jwt, await defaultWorkspaceId(h, jwt), "runbook.md", "# Runbook\nRestart the daemon with code RB-5512.");
  const dbPath = h.services.storage.path;
  const { c: contentId, n: size } = h.services.storage.sqlite.query("SELECT content_id AS c, size AS n FROM knowledge_files WHERE id = ?").get(id) as { c: string; n: number };
  expect(await parseStoredFile("md", { dbPath, contentId, size })).toEqual([{ text: "Runbook\nRestart the daemon with code RB-5512.", headings: ["Runbook"] }]);
  const missing = await parseStoredFile("md", { dbPath, contentId: crypto.randomUUID(), size }).then(
    () => undefined,
    (e: Error) => e,
  );
  expect(missing).toBeInstanceOf(ParseError);
  expect(missing!.message).toBe("the file's bytes are missing");
});
