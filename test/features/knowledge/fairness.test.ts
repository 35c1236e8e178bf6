// Ingestion takes turns between workspaces: while two workspaces' large files are being ingested, a
// third workspace's small upload starts at once and is ready long before them.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startedHarness, uploadText, type Harness } from "../../support/harness";

let h: Harness;
let jwt: string;
beforeAll(async () => void ({ h, jwt } = await startedHarness()));
afterAll(() => h.close());

const workspace = async (name: string) => (await h.call("POST", "/api/products", { token: jwt, body: { name } })).body.data.id as string;
const status = async (id: string) => (await h.call("GET", `/api/knowledge-base/storage/file/${id}`, { token: jwt })).body.data.status as string;

test("a third workspace's small upload does not wait for two other workspaces' large files", async () => {
  const large = Array.from({ length: 1500 }, (_, i) => `Paragraph ${i}: the archive room on floor ${i % 7} keeps records of project ${i} and its reviews.`).join("\n\n");
  const a = await uploadText(h, jwt, await workspace("A"), "a.txt", large);
  const b = await uploadText(h, jwt, await workspace("B"), "b.txt", `${large} (B)`);
  for (let i = 0; i < 200 && ((await status(a)) !== "processing" || (await status(b)) !== "processing"); i++) await Bun.sleep(10);
  const c = await uploadText(h, jwt, await workspace("C"), "c.txt", "Workspace C: the badge office opens at nine.");
  // Before: two slots, both taken, and C's note waited queued for one of the large files to end.
  for (let i = 0; i < 400 && (await status(c)) !== "ready"; i++) await Bun.sleep(25);
  expect([await status(c), await status(a), await status(b)]).toEqual(["ready", "processing", "processing"]);
}, 30_000);
