// Chunking by tokens: nothing over the budget, structure before characters, overlap, offsets.
import { describe, expect, test } from "bun:test";
import { chunkParts, chunkPlaced, chunkSections } from "../../../src/features/knowledge/ingest/chunk";
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

  test("the tokenizer reads the text about twice (its sentences, then each chunk), not again at every coarser level", () => {
    const text = Array.from({ length: 200 }, (_, p) => Array.from({ length: 3 }, (_, l) => `Line ${l} of paragraph ${p} says one thing. It then says another.`).join("\n")).join("\n\n");
    let counted = 0;
    const counting = (t: string) => ((counted += t.length), words(t));
    const chunks = chunkSections([{ text, headings: [] }], { maxTokens: 60, overlapTokens: 8, countTokens: counting });
    expect(chunks.length).toBeGreaterThan(50);
    // Counting every paragraph, line and the whole section as well made it 5.1 times the text.
    expect(counted / text.length).toBeLessThan(2.5);
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

describe("chunking in parts", () => {
  const doc = (sections: { text: string }[]) => sections.map((s) => s.text).join("\n\n");

  test("small sections are grouped up to the size; a long one is cut at a paragraph, keeping its headings and offsets", () => {
    const long = Array.from({ length: 30 }, (_, i) => `Paragraph ${i} has some words in it.`).join("\n\n");
    const sections = [
      { text: "intro words", headings: ["Intro"] },
      { text: "more words", headings: ["Intro"] },
      { text: long, page: 4, headings: ["Body", "Detail"] },
      { text: "closing words", headings: ["End"] },
    ];
    const parts = chunkParts(sections, 200);
    expect(parts[0]!.map((p) => p.section.text)).toEqual(["intro words", "more words", expect.stringMatching(/^Paragraph 0 /)]);
    for (const part of parts) expect(part.reduce((n, p) => n + p.section.text.length, 0)).toBeLessThanOrEqual(200);
    const pieces = parts.flat().filter((p) => p.section.page === 4);
    expect(pieces.length).toBeGreaterThan(4);
    for (const p of pieces) {
      expect(p.section.headings).toEqual(["Body", "Detail"]);
      expect(p.section.text.startsWith("Paragraph")).toBe(true); // cut after a blank line, never inside a paragraph
      expect(doc(sections).slice(p.at, p.at + p.section.text.length)).toBe(p.section.text);
    }
    expect(pieces.map((p) => p.section.text).join("")).toBe(long);
  });

  test("chunked part by part, every chunk's offsets point at its text in the whole document", () => {
    const sections = [
      { text: Array.from({ length: 400 }, (_, i) => `line ${i} of the log`).join("\n"), headings: [] },
      { text: "tail section", headings: ["Tail"] },
    ];
    const whole = doc(sections);
    const chunks = chunkParts(sections, 1000).flatMap((part) => chunkPlaced(part, { maxTokens: 40, overlapTokens: 8, countTokens: words }));
    for (const c of chunks) expect(whole.slice(c.charStart, c.charEnd)).toBe(c.text);
    expect(chunks.at(-1)!.text).toBe("tail section");
    const lines = new Set(chunks.flatMap((c) => [...c.text.matchAll(/line (\d+) /g)].map((m) => m[1])));
    expect(lines.size).toBe(400);
  });

  test("text with no break is cut at the size, never inside a surrogate pair", () => {
    const text = "😀".repeat(300); // 600 UTF-16 units
    const pieces = chunkParts([{ text, headings: [] }], 101).flat();
    expect(pieces.map((p) => p.section.text).join("")).toBe(text);
    for (const p of pieces) {
      expect(p.section.text.length).toBeLessThanOrEqual(101);
      expect(p.section.text.length % 2).toBe(0);
    }
  });

  test("one part for a document under the size, the sections unchanged", () => {
    const sections = [{ text: "a b c", headings: ["H"] }];
    expect(chunkParts(sections, 100)).toEqual([[{ section: sections[0]!, at: 0 }]]);
    expect(chunkParts([], 100)).toEqual([]);
  });
});
