// Chunking by tokens: nothing over the budget, structure before characters, overlap, offsets.
import { describe, expect, test } from "bun:test";
import { chunkSections } from "../../../src/features/knowledge/ingest/chunk";
import { chunkContext, CONTEXT_CHARS, embeddingText, fileTitle } from "../../../src/features/knowledge/ingest/context";

// A stand-in tokenizer for shape tests: one token per word (the real one is used in ingestion tests).
const words = (t: string) => t.split(/\s+/).filter(Boolean).length;

describe("chunking", () => {
  test("a short section is one chunk with its offsets, page and headings", () => {
    const chunks = chunkSections([{ text: "Hello there.", page: 3, headings: ["A"] }], { maxTokens: 50, overlapTokens: 5, countTokens: words });
    expect(chunks).toEqual([{ text: "Hello there.", page: 3, headings: ["A"], charStart: 0, charEnd: 12, tokens: 2 }]);
  });

  test("long text splits at paragraphs and sentences, never over budget, with overlap", () => {
    const para = (n: number) => Array.from({ length: 6 }, (_, i) => `Sentence ${n}.${i} has exactly six words.`).join(" ");
    const text = [para(1), para(2), para(3), para(4)].join("\n\n");
    const chunks = chunkSections([{ text, headings: [] }], { maxTokens: 40, overlapTokens: 8, countTokens: words });
    expect(chunks.length).toBeGreaterThan(3);
    for (const c of chunks) {
      expect(c.tokens).toBeLessThanOrEqual(40);
      expect(c.text).toBe(text.slice(c.charStart, c.charEnd));
      expect(c.text).toMatch(/^Sentence/); // cut at a sentence start, not mid-sentence
    }
    for (let i = 1; i < chunks.length; i++) expect(chunks[i]!.charStart).toBeLessThan(chunks[i - 1]!.charEnd); // overlap
    expect(chunks.at(-1)!.charEnd).toBe(text.length);
  });

  test("a chunk and its context line together fit the window; the chunk's text is the document's", () => {
    const text = Array.from({ length: 30 }, (_, i) => `Sentence ${i} has exactly six words.`).join(" ");
    const section = { text, headings: ["Server Configuration", "Connections"] };
    const contextOf = (s: { headings: string[] }) => chunkContext("admin-guide.pdf", s.headings);
    const chunks = chunkSections([section], { maxTokens: 40, overlapTokens: 0, countTokens: words, contextOf });
    expect(chunks.length).toBeGreaterThan(4);
    for (const c of chunks) {
      expect(c.text).toBe(text.slice(c.charStart, c.charEnd));
      expect(words(embeddingText(contextOf(c), c.text))).toBeLessThanOrEqual(40);
    }
  });

  test("the context line: file title and heading path, repeats left out, cut short", () => {
    expect(fileTitle("sql-copy.pdf")).toBe("sql copy");
    expect(fileTitle("Q3_report v2.docx")).toBe("Q3 report v2");
    expect(chunkContext("pg-guide.md", ["COPY", "Parameters"])).toBe("pg guide › COPY › Parameters");
    expect(chunkContext("copy.md", ["COPY", "COPY", "Notes"])).toBe("copy › Notes");
    expect(chunkContext("notes.txt", [])).toBe("notes");
    const long = chunkContext("a.txt", ["x".repeat(500)]);
    expect(long.length).toBe(CONTEXT_CHARS);
    expect(long.endsWith("…")).toBe(true);
    expect(embeddingText("", "body")).toBe("body");
  });

  test("a single enormous word is cut by characters and still covered", () => {
    const text = "x".repeat(10_000);
    const chunks = chunkSections([{ text, headings: [] }], { maxTokens: 100, overlapTokens: 0, countTokens: (t) => Math.ceil(t.length / 4) });
    for (const c of chunks) expect(c.tokens).toBeLessThanOrEqual(100);
    expect(chunks.map((c) => c.text).join("")).toBe(text);
  });

  test("CSV chunks each repeat the header row", () => {
    const rows = Array.from({ length: 50 }, (_, i) => `row${i} | value ${i}`).join("\n");
    const chunks = chunkSections([{ text: rows, headings: [], repeat: "name | value" }], { maxTokens: 30, overlapTokens: 0, countTokens: words });
    expect(chunks.length).toBeGreaterThan(2);
    for (const c of chunks) {
      expect(c.text.startsWith("name | value\nrow")).toBe(true);
      expect(c.tokens).toBeLessThanOrEqual(30);
    }
  });

  test("offsets of later sections account for the blank line between sections", () => {
    const chunks = chunkSections(
      [
        { text: "first", headings: [] },
        { text: "second", page: 2, headings: [] },
      ],
      { maxTokens: 10, overlapTokens: 0, countTokens: words },
    );
    const doc = "first\n\nsecond";
    expect(chunks.map((c) => doc.slice(c.charStart, c.charEnd))).toEqual(["first", "second"]);
  });
});
