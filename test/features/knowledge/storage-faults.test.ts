// Knowledge files when Hearth's own storage fails (a full disk, simulated by SQLite's max_page_count;
// a delete the database refuses, by a trigger): an upload that fails mid-way leaves no pieces, and a
// file failed by the storage says so and can be retried (the same bytes uploaded again, or PUT
// …/embeddings?file_id=) instead of staying failed for good.
import { afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createHarness, defaultWorkspaceId, uploadFile, type Harness } from "../../support/harness";
import { createContentStore, PIECE_BYTES } from "../../../src/features/knowledge/content";

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const text = (bytes: number, seed: string) => {
  const line = `${seed} ${"lorem ipsum dolor sit amet ".repeat(3)}\n`;
  return line.repeat(Math.ceil(bytes / line.length)).slice(0, bytes);
};

async function open(dataDir?: string) {
  h = await createHarness({}, dataDir);
  const jwt = await h.login();
  const ws = await defaultWorkspaceId(h, jwt);
  const sqlite = h.services.storage.sqlite;
  const count = (sql: string) => (sqlite.query(sql).get() as { n: number }).n;
  return {
    h,
    jwt,
    ws,
    sqlite,
    upload: (name: string, body: string) => uploadFile(h!, jwt, ws, name, body),
    file: async (id: string) => (await h!.call("GET", `/api/knowledge-base/storage/file/${id}`, { token: jwt })).body.data,
    pieces: () => count("SELECT count(*) AS n FROM knowledge_content_pieces"),
    /** The database may grow by `pages` more pages at most, as a disk with that much room left. */
    diskFull: (pages = 0) => sqlite.exec(`PRAGMA max_page_count = ${(sqlite.query("PRAGMA page_count").get() as { page_count: number }).page_count + pages}`),
    diskBack: () => sqlite.exec("PRAGMA max_page_count = 4294967294"),
  };
}

describe("an upload the disk cannot hold", () => {
  test("fails with nothing of it left: the pieces already written are removed at once", async () => {
    const t = await open();
    const before = t.pieces();
    // Room for about two of the file's eight pieces.
    t.diskFull(Math.ceil((2.5 * PIECE_BYTES) / 4096));
    const r = await t.upload("big.txt", text(8 * PIECE_BYTES, "big"));
    expect(r.status).toBeGreaterThanOrEqual(500);
    expect(t.pieces()).toBe(before);
    // Their room is free again: a smaller file fits where the pieces were.
    const small = await t.upload("small.txt", text(2 * PIECE_BYTES, "small"));
    expect(small.status).toBe(202);
    expect(t.pieces()).toBe(before + 2);
    t.diskBack();
  });

  test("when the delete is refused too, the write's error is the one thrown and the pieces go at the next start", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hearth-faults-"));
    try {
      const t = await open(dir);
      t.sqlite.exec("CREATE TEMP TRIGGER refuse_delete BEFORE DELETE ON main.knowledge_content_pieces BEGIN SELECT RAISE(ABORT, 'disk I/O error'); END");
      t.diskFull(Math.ceil((2.5 * PIECE_BYTES) / 4096));
      const write = createContentStore(t.h.services.storage.db).write(new Blob([text(8 * PIECE_BYTES, "big")]));
      await expect(write).rejects.toThrow("database or disk is full");
      expect(t.pieces()).toBe(2);
      t.diskBack();
      await t.h.close();
      h = undefined;
      const again = await open(dir);
      again.h.services.start();
      expect(again.pieces()).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("content a committed file names is never discarded (a step after the commit failed)", async () => {
    const t = await open();
    const r = await t.upload("kept.txt", text(PIECE_BYTES + 10, "kept"));
    expect(r.status).toBe(202);
    const { c } = t.sqlite.query("SELECT content_id AS c FROM knowledge_files WHERE id = ?").get(r.body.data.id) as { c: string };
    const content = createContentStore(t.h.services.storage.db);
    expect(content.discard(c)).toBe(true);
    expect(t.pieces()).toBe(2);
    // Content no row names goes.
    const stray = await content.write(new Blob([text(10, "stray")]));
    expect(t.pieces()).toBe(3);
    expect(content.discard(stray)).toBe(true);
    expect(t.pieces()).toBe(2);
  });
});

describe("a file failed by Hearth's storage", () => {
  /**
   * Uploads a file whose ingestion fails for good because Hearth could not open its database (too
   * many open files, EMFILE: what the probe saw): every attempt spent, the file left `failed`.
   * (A full disk no longer fails a file: the job waits without spending attempts, test below.)
   */
  async function failedFile(t: Awaited<ReturnType<typeof open>>, name: string, body: string) {
    t.h.services.start();
    t.sqlite.exec("CREATE TEMP TRIGGER no_fds BEFORE INSERT ON main.knowledge_chunks BEGIN SELECT RAISE(ABORT, 'unable to open database file'); END");
    const r = await t.upload(name, body);
    expect(r.status).toBe(202);
    for (let i = 0; i < 3; i++) {
      await t.h.services.jobs.idle();
      t.h.clock.advance(60_000);
    }
    await t.h.services.jobs.idle();
    t.sqlite.exec("DROP TRIGGER temp.no_fds");
    const f = await t.file(r.body.data.id);
    expect(f.status).toBe("failed");
    return f;
  }

  test("a full disk during ingestion fails nothing: the file waits and is ready once there is room", async () => {
    const t = await open();
    // Acknowledged first (the queue not yet running), then the disk fills before its chunks are written.
    const r = await t.upload("waits.md", "# Waits\n\nThis file is ingested once the disk has room again.\n");
    expect(r.status).toBe(202);
    t.h.services.start(); // the queue's first pump runs after this turn, with the disk already full
    t.diskFull();
    for (let i = 0; i < 5; i++) {
      await t.h.services.jobs.idle();
      t.h.clock.advance(60_000);
    }
    await t.h.services.jobs.idle();
    // Five tries on a full disk, with three attempts allowed: still waiting, not failed.
    expect((await t.file(r.body.data.id)).status).not.toBe("failed");
    expect((t.sqlite.query("SELECT max(attempts) AS n FROM jobs").get() as { n: number }).n).toBeLessThanOrEqual(1);
    t.diskBack();
    t.h.clock.advance(60_000);
    await t.h.services.jobs.idle();
    expect(await t.file(r.body.data.id)).toMatchObject({ status: "ready", error: null });
  }, 60_000);

  test("says it was Hearth's storage, not the file; the same bytes uploaded again queue it again and it becomes ready", async () => {
    const t = await open();
    const body = "# Runbook\n\nRestart the service with the serve command after an upgrade.\n";
    const f = await failedFile(t, "runbook.md", body);
    expect(f.error).toStartWith("Hearth's own storage failed while ingesting this file (");
    expect(f.error).toContain("unable to open database file); nothing is wrong with the file.");
    expect(f.error).toContain(`PUT /api/knowledge-base/embeddings?file_id=${f.id}`);
    const again = await t.upload("runbook.md", body);
    expect(again.status).toBe(202);
    expect(again.body.data).toMatchObject({ id: f.id, status: "queued", progress: 0, error: null });
    // Once queued, the same bytes are the record again, not a second retry.
    const third = await t.upload("runbook.md", body);
    expect([third.status, third.body.data.id]).toEqual([200, f.id]);
    await t.h.services.jobs.idle();
    expect(await t.file(f.id)).toMatchObject({ status: "ready", error: null });
    expect(t.sqlite.query("SELECT count(*) AS n FROM knowledge_files").get()).toEqual({ n: 1 });
  }, 60_000);

  test("PUT /api/knowledge-base/embeddings?file_id= ingests it again", async () => {
    const t = await open();
    const f = await failedFile(t, "faq.md", "# FAQ\n\nBackups run every night at two.\n");
    const put = await t.h.call("PUT", `/api/knowledge-base/embeddings?file_id=${f.id}`, { token: t.jwt });
    expect(put.status).toBe(202);
    expect(put.body.data).toEqual({ queued: 1 });
    expect((await t.file(f.id)).status).toBe("queued");
    await t.h.services.jobs.idle();
    expect(await t.file(f.id)).toMatchObject({ status: "ready", error: null });
    // A ready file is re-embedded as before.
    expect((await t.h.call("PUT", `/api/knowledge-base/embeddings?file_id=${f.id}`, { token: t.jwt })).body.data).toEqual({ queued: 1 });
    await t.h.services.jobs.idle();
  }, 60_000);

  test("a file that failed for its own reasons keeps its error as it is", async () => {
    const t = await open();
    t.h.services.start();
    const r = await t.upload("broken.json", '{"a": [1, 2');
    await t.h.services.jobs.idle();
    const f = await t.file(r.body.data.id);
    expect(f.status).toBe("failed");
    expect(f.error).not.toContain("Hearth's own storage");
  }, 60_000);
});
