// The ingestion job's prepared updates of a file row write what drizzle's own update would: dates as
// milliseconds, nulls as NULL, undefined columns left alone, one statement per shape.
import { afterAll, expect, test } from "bun:test";
import { fileUpdates } from "../../../src/features/knowledge/ingest/file-updates";
import { createHarness, defaultWorkspaceId, uploadText, type Harness } from "../../support/harness";

let h: Harness;
afterAll(() => h?.close());

test("a patch sets exactly its columns, mapped as the table declares them", async () => {
  h = await createHarness();
  const jwt = await h.login();
  const id = await uploadText(h, jwt, await defaultWorkspaceId(h, jwt), "note.txt", "A note.");
  const row = () =>
    h.services.storage.sqlite.query("SELECT status, progress, error, embedding_model, embedded_at, typeof(embedded_at) AS t FROM knowledge_files WHERE id = ?").get(id);
  const update = fileUpdates(h.services.storage.db);

  update(id, { status: "failed", progress: 0.5, error: "why" });
  expect(row()).toEqual({ status: "failed", progress: 0.5, error: "why", embedding_model: null, embedded_at: null, t: "null" });
  update(id, { status: "ready", error: null, progress: undefined, embeddingModel: "m", embeddedAt: new Date(1_700_000_000_123) });
  expect(row()).toEqual({ status: "ready", progress: 0.5, error: null, embedding_model: "m", embedded_at: 1_700_000_000_123, t: "integer" });
  // The same shape again, with other values, reuses its statement.
  update(id, { status: "failed", progress: 0.25, error: "again" });
  expect(row()).toMatchObject({ status: "failed", progress: 0.25, error: "again" });
  // Through drizzle, the row reads back as the same values.
  const file = (await h.call("GET", `/api/knowledge-base/storage/file/${id}`, { token: jwt })).body.data;
  expect(file).toMatchObject({ status: "failed", progress: 0.25, error: "again", embedding_model: "m" });
});
