// Running headers and footers of paged documents are dropped; the pages' own text stays.
import { describe, expect, test } from "bun:test";
import { dropPageFurniture } from "../../../src/features/knowledge/ingest/page-furniture";
import { parseDocument } from "../../../src/features/knowledge/ingest/parse";
import { makePdf } from "../../support/documents";

describe("page furniture", () => {
  test("a line at the top or bottom of most pages, equal but for its numbers, is dropped from every edge", () => {
    const body = ["Install it.\nNote\nThen start it.", "Back it up.\nNote\nEvery night.", "Check it.\nNote\nWith E4711.", "Upgrade.\nNote\nIn place."];
    const pages = body.map((b, i) => `ACME Handbook\n${b}\nACME Handbook - page ${i + 1} of 4`);
    expect(dropPageFurniture(pages)).toEqual(body);
  });

  test("lines that recur inside pages, or at the edge of too few pages, stay; short documents are left alone", () => {
    const page = (n: number, note: number) => ["intro", "text", "more text", "even more", "the end"].map((l) => `${l} of ${"abcd"[n]}`).toSpliced(note, 0, "Note").join("\n");
    // "Note" inside every page, at the top of two of four pages and at the bottom of one.
    const pages = [page(0, 0), page(1, 1), page(2, 3), page(3, 5)];
    expect(dropPageFurniture(pages)).toEqual(pages);
    const figures = [1, 2, 3, 4].map((n) => `Results ${"abcd"[n - 1]}\n${n} | ${n * 2} | ${n * 3}`);
    expect(dropPageFurniture(figures)).toEqual(figures);
    expect(dropPageFurniture(["x - page 1", "x - page 2"])).toEqual(["x - page 1", "x - page 2"]);
  });

  test("a PDF's footer does not reach the sections", async () => {
    const bodies = ["Installation steps.", "Backups run nightly.", "The answer: error E4711."];
    const pdf = await makePdf(bodies.map((b, i) => `${b}\nManual - page ${i + 1} of 3`));
    const sections = await parseDocument("pdf", pdf);
    expect(sections.map((s) => [s.page, s.text])).toEqual(bodies.map((b, i) => [i + 1, b]));
  });
});
