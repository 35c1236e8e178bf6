// The parser launcher reads a stored upload from the database itself (the event loop never holds its
// bytes) and parses it like bytes handed to it.
import { afterAll, expect, test } from "bun:test";
import { parseIsolated, parseStoredFile } from "../../../src/features/knowledge/ingest/isolate";
import { PART_CHARS, type PlacedSection } from "../../../src/features/knowledge/ingest/chunk";
import { ParseError } from "../../../src/features/knowledge/ingest/parse";
import { createHarness, defaultWorkspaceId, uploadText, type Harness } from "../../support/harness";
import { sectionsOf } from "../../support/parts";

let h: Harness;
afterAll(() => h?.close());

test("a stored file is read and parsed on the launcher thread; a missing one fails saying so", async () => {
  h = await createHarness();
  const jwt = await h.login();
  const id = await uploadText(h, jwt, await defaultWorkspaceId(h, jwt), "runbook.md", "# Runbook\nRestart the daemon with code RB-5512.");
  const dbPath = h.services.storage.path;
  const { c: contentId, n: size } = h.services.storage.sqlite.query("SELECT content_id AS c, size AS n FROM knowledge_files WHERE id = ?").get(id) as { c: string; n: number };
  expect(sectionsOf(await parseStoredFile("md", { dbPath, contentId, size }))).toEqual([{ text: "Runbook\nRestart the daemon with code RB-5512.", headings: ["Runbook"] }]);
  const missing = await parseStoredFile("md", { dbPath, contentId: crypto.randomUUID(), size }).then(
    () => undefined,
    (e: Error) => e,
  );
  expect(missing).toBeInstanceOf(ParseError);
  expect(missing!.message).toBe("the file's bytes are missing");
});

test("the child hands the document over in parts of 16 KB of text with their places; a document with no text fails there", async () => {
  const lines = Array.from({ length: 3000 }, (_, i) => `Line ${i}: the pump in hall ${i % 7} was serviced.`).join("\n");
  const parts = await parseIsolated("txt", new TextEncoder().encode(lines));
  expect(parts.length).toBeGreaterThan(lines.length / PART_CHARS);
  const placed = parts.flatMap((p) => JSON.parse(p) as PlacedSection[]);
  expect(placed.map((p) => p.section.text).join("")).toBe(lines);
  for (const p of placed) expect(lines.slice(p.at, p.at + p.section.text.length)).toBe(p.section.text);
  for (const [format, bytes, reason] of [
    ["txt", "  \n\t \n", "the file holds no text to index"],
    ["md", "   \n\n   \n", "the file holds no text to index"],
  ] as const) {
    const failed = await parseIsolated(format, new TextEncoder().encode(bytes)).then(
      () => undefined,
      (e: Error) => e,
    );
    expect(failed).toBeInstanceOf(ParseError);
    expect(failed!.message).toBe(reason);
  }
});
