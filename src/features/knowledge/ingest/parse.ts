// Turns a file's bytes into sections of text that know their page and heading path, with the
// design card's parsers: unpdf, mammoth (docx.ts), papaparse, fast-xml-parser; Markdown, JSON and TXT here.
// Each parser library is loaded when its first file arrives (an idle Hearth holds none of them).
import type Papa from "papaparse";
import type { XMLParser } from "fast-xml-parser";
import { jsonDepthExceeds } from "../../../platform/http/body";
import type { FileFormat } from "./detect";
import { decodeText, tidy } from "./text";
import { dropPageFurniture } from "./page-furniture";

export interface Section {
  text: string;
  page?: number;
  headings: string[];
  /** A line every chunk of this section repeats first (a CSV's header row). */
  repeat?: string;
}

/** The file cannot be read as its format; ingestion fails with this message. */
export class ParseError extends Error {}

const MAX_DEPTH = 256;

export interface ParseCaps {
  /** Each section is at least one chunk, so more sections than chunks per file can never succeed. */
  maxSections: number;
  /** Text (with headings) a parsed document may hold: ~15 MB is already 20,000 full chunks. */
  maxTextBytes: number;
  /**
   * JSON and XML repeat their keys' paths in the text they become: deep nesting turned 60 KB into
   * thousands of chunks (minutes of embedding). Their text may be at most this many times the file
   * (but 1 MB always).
   */
  maxExpansion?: number;
  /** Set when the text cap came from maxExpansion: the message says so. */
  expanded?: boolean;
  /**
   * Bytes a zip-based document (DOCX) may inflate to, all its entries together, counted while they
   * inflate: a zip bomb fails at this instead of at the parser's memory cap, seconds later.
   */
  maxInflatedBytes?: number;
}

const MAX_INFLATED_BYTES = 256 * 1024 * 1024;
export const PARSE_CAPS: ParseCaps = { maxSections: 20_000, maxTextBytes: 32 * 1024 * 1024, maxExpansion: 16, maxInflatedBytes: MAX_INFLATED_BYTES };
const EXPANSION_FLOOR = 1024 * 1024;

/** Megabytes for messages: "32 MB", "0.06 MB". */
export const megabytes = (bytes: number) => `${bytes >= 2 ** 20 ? Math.round(bytes / 2 ** 20) : Number((bytes / 2 ** 20).toPrecision(1))} MB`;

/** Counts what a parser produces and stops it as soon as a cap is passed, before the rest is built. */
class Budget {
  private sections = 0;
  private bytes = 0;
  constructor(private readonly caps: ParseCaps) {}
  text(n: number) {
    this.bytes += n;
    if (this.bytes > this.caps.maxTextBytes) {
      throw new ParseError(
        this.caps.expanded
          ? `flattened, the document becomes more than ${megabytes(this.caps.maxTextBytes)} of text, over ${this.caps.maxExpansion}× its size (the limit for JSON and XML): nesting this deep repeats its paths on every value`
          : `the document holds more than ${megabytes(this.caps.maxTextBytes)} of text (the limit per file)`,
      );
    }
  }
  section(s: Section) {
    if (++this.sections > this.caps.maxSections) throw new ParseError(`the document has more than ${this.caps.maxSections} sections (the limit per file)`);
    this.text(s.text.length + (s.repeat?.length ?? 0) + s.headings.reduce((n, h) => n + h.length, 0));
  }
}

export async function parseDocument(format: FileFormat, bytes: Uint8Array, caps = PARSE_CAPS): Promise<Section[]> {
  if (caps.maxExpansion && (format === "json" || format === "xml")) {
    const expansion = Math.max(EXPANSION_FLOOR, caps.maxExpansion * bytes.byteLength);
    if (expansion < caps.maxTextBytes) caps = { ...caps, maxTextBytes: expansion, expanded: true };
  }
  const budget = new Budget(caps);
  const sections = await parseFormat(format, bytes, budget, caps);
  // Checked again on the result: the counting above sees a tree's text, not every format's output.
  const check = new Budget(caps);
  for (const s of sections) check.section(s);
  return sections;
}

async function parseFormat(format: FileFormat, bytes: Uint8Array, budget: Budget, caps: ParseCaps): Promise<Section[]> {
  switch (format) {
    case "pdf":
      return parsePdf(bytes);
    case "docx":
      return (await import("./docx")).parseDocx(bytes, caps.maxInflatedBytes ?? MAX_INFLATED_BYTES);
    case "csv":
      return parseCsv(decodeText(bytes), (await import("papaparse")).default);
    case "json":
      return parseJson(decodeText(bytes), budget);
    case "xml":
      return parseXml(decodeText(bytes), budget, (await import("fast-xml-parser")).XMLParser);
    case "md":
      return parseMarkdown(decodeText(bytes));
    case "txt":
      return [{ text: tidy(decodeText(bytes)), headings: [] }].filter((s) => s.text);
  }
}

async function parsePdf(bytes: Uint8Array): Promise<Section[]> {
  const { extractText, getDocumentProxy } = await import("unpdf");
  let pages: string[];
  try {
    // verbosity 0: errors only; pdf.js warnings would otherwise be printed into the reason a file failed.
    const pdf = await getDocumentProxy(new Uint8Array(bytes), { stopAtErrors: true, verbosity: 0 });
    try {
      pages = (await extractText(pdf, { mergePages: false })).text;
    } finally {
      await pdf.cleanup();
    }
  } catch (e) {
    throw new ParseError(`not a readable PDF: ${(e as Error).message}`);
  }
  return dropPageFurniture(pages.map(tidy)).map((t, i) => ({ text: t.trim(), page: i + 1, headings: [] })).filter((s) => s.text);
}

const CSV_ROWS_PER_SECTION = 200;
const MAX_CSV_ROW_CHARS = 1024 * 1024;
/** A header longer than this is cut: chunks repeat it, and the chunker keeps only what fits a quarter of the window anyway. */
const MAX_CSV_HEADER_CHARS = 2000;

function parseCsv(text: string, papa: typeof Papa): Section[] {
  // Checked before parsing: a row this long is not a table, and papaparse would hold it whole.
  let lineStart = 0;
  for (let i = text.indexOf("\n"); ; i = text.indexOf("\n", i + 1)) {
    const end = i === -1 ? text.length : i;
    if (end - lineStart > MAX_CSV_ROW_CHARS) throw new ParseError("a CSV line is longer than 1 MB; this is not a table Hearth can index");
    if (i === -1) break;
    lineStart = i + 1;
  }
  const result = papa.parse<string[]>(text.replace(/^\uFEFF/, ""), { skipEmptyLines: "greedy" });
  const rows = result.data;
  if (rows.length === 0) return [];
  if (result.errors.length > 0 && rows.length <= 1) throw new ParseError(`not a readable CSV: ${result.errors[0]!.message}`);
  const header = rows[0]!.map((c) => c.trim());
  const line = (r: string[]) => r.map((c) => c.trim()).join(" | ");
  let repeat = line(header);
  if (repeat.length > MAX_CSV_HEADER_CHARS) repeat = `${repeat.slice(0, repeat.lastIndexOf(" | ", MAX_CSV_HEADER_CHARS) + 1 || MAX_CSV_HEADER_CHARS).trimEnd()} …`;
  const sections: Section[] = [];
  for (let i = 1; i < rows.length; i += CSV_ROWS_PER_SECTION) {
    const body = rows
      .slice(i, i + CSV_ROWS_PER_SECTION)
      .map(line)
      .filter((l) => l.replace(/[|\s]/g, ""))
      .join("\n");
    if (body) sections.push({ text: body, headings: [], repeat });
  }
  // A CSV with only a header row still has something to find.
  return sections.length ? sections : [{ text: line(header), headings: [] }];
}

/** Path segments a leaf's line shows, and the characters kept of each: the group heading holds the start. */
const SHOWN_SEGMENTS = 3;
const SEGMENT_CHARS = 64;
const shortSegment = (s: string) => (s.length > SEGMENT_CHARS ? `${s.slice(0, SEGMENT_CHARS)}…` : s);

/**
 * Flattens a parsed tree into "path: value" lines grouped by their top-level path. A line shows
 * only the last few segments of its path, each cut short: the full path of every leaf would make
 * a small, deeply nested file hundreds of times its size.
 */
function treeSections(root: unknown, rootName: string, budget: Budget): Section[] {
  const groups = new Map<string, string[]>();
  const walk = (node: unknown, path: string[]) => {
    if (node === null || typeof node !== "object") {
      const value = String(node ?? "").trim();
      if (value === "") return;
      const key = path.slice(0, 2).map(shortSegment).join(".") || rootName;
      let lines = groups.get(key);
      if (!lines) {
        budget.text(key.length);
        groups.set(key, (lines = []));
      }
      const shown = path.slice(-SHOWN_SEGMENTS).map(shortSegment).join(".");
      const line = `${path.length > SHOWN_SEGMENTS ? "…." : ""}${shown || rootName}: ${value}`;
      budget.text(line.length + 1);
      lines.push(line);
      return;
    }
    if (Array.isArray(node)) node.forEach((v, i) => walk(v, [...path, `[${i}]`]));
    else for (const [k, v] of Object.entries(node)) walk(v, [...path, k]);
  };
  walk(root, []);
  return [...groups].map(([key, lines]) => ({ text: lines.join("\n"), headings: [key] }));
}

function parseJson(text: string, budget: Budget): Section[] {
  if (jsonDepthExceeds(text, MAX_DEPTH)) throw new ParseError(`JSON nested deeper than ${MAX_DEPTH} levels`);
  let value: unknown;
  try {
    value = JSON.parse(text.replace(/^\uFEFF/, ""));
  } catch (e) {
    throw new ParseError(`not valid JSON: ${(e as Error).message}`);
  }
  return treeSections(value, "$", budget);
}

/**
 * True when elements nest deeper than `max`. One pass with indexOf: a tag runs from "<" to the
 * next ">", and text with no ">" left has no more tags (a regex like /<[^>]*\/>/ rescans the rest
 * of the text from every "<", quadratic on a file of "<<<<").
 */
function xmlDepthExceeds(text: string, max: number): boolean {
  let depth = 0;
  for (let open = text.indexOf("<"); open !== -1; ) {
    const close = text.indexOf(">", open + 1);
    if (close === -1) return false;
    const next = text[open + 1];
    if (next === "/") depth--;
    else if (next !== "!" && next !== "?" && text[close - 1] !== "/" && ++depth > max) return true;
    open = text.indexOf("<", close + 1);
  }
  return false;
}

function parseXml(text: string, budget: Budget, Parser: typeof XMLParser): Section[] {
  if (/<!ENTITY/i.test(text)) throw new ParseError("XML with entity declarations is refused (entity expansion is off)");
  if (xmlDepthExceeds(text, MAX_DEPTH)) throw new ParseError(`XML nested deeper than ${MAX_DEPTH} levels`);
  const parser = new Parser({ ignoreAttributes: false, attributeNamePrefix: "@", processEntities: false, htmlEntities: false, trimValues: true });
  let tree: unknown;
  try {
    tree = parser.parse(text, true);
  } catch (e) {
    throw new ParseError(`not well-formed XML: ${(e as Error).message}`);
  }
  return treeSections(tree, "xml", budget);
}

/**
 * An ATX heading ("## Title ##"): level and text. Plain string steps, not one regex: the pattern
 * /^(#{1,6})\s+(.+?)\s*#*\s*$/ is cubic on a heading padded with spaces (8,000 took 100 s).
 */
function heading(line: string): { level: number; text: string } | null {
  const marks = /^#{1,6}(?=[ \t])/.exec(line);
  if (!marks) return null;
  const text = line.slice(marks[0].length).trim();
  if (!text) return null;
  // A closing run of #s is dropped (/#+$/ would be quadratic on a long run of #s), unless it is all there is.
  let end = text.length;
  while (end > 0 && text[end - 1] === "#") end--;
  return { level: marks[0].length, text: text.slice(0, end).trimEnd() || text };
}

function parseMarkdown(text: string): Section[] {
  const sections: Section[] = [];
  const headings: string[] = [];
  let current: Section = { text: "", headings: [] };
  let fence: string | null = null;
  const flush = () => {
    current.text = current.text.trim();
    if (current.text) sections.push(current);
  };
  for (const line of text.replace(/^\uFEFF/, "").replace(/\r\n?/g, "\n").split("\n")) {
    const f = line.match(/^\s*(```|~~~)/);
    if (f) fence = fence === f[1] ? null : (fence ?? f[1]!);
    const h = fence ? null : heading(line);
    if (h) {
      flush();
      headings.splice(h.level - 1, headings.length, h.text);
      current = { text: `${h.text}\n`, headings: headings.filter(Boolean) };
    } else {
      current.text += `${line}\n`;
    }
  }
  flush();
  return sections;
}
