// Builds the retrieval suite's corpus: 140 pages of the PostgreSQL 15 manual (Debian's postgresql-doc,
// PostgreSQL Licence) converted into PDF (real pages), DOCX, CSV, JSON, XML, TXT and Markdown.
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { PDFDocument, StandardFonts, type PDFFont } from "pdf-lib";
import { Document, HeadingLevel, Packer, Paragraph, TextRun } from "docx";
import { RETRIEVAL_FILES, type CorpusFormat } from "../fixtures/retrieval-files";

export const MANUAL_DIR = "/usr/share/doc/postgresql-doc-15/html";
/** Bumped when the conversion changes: the cached corpus (and its embeddings) are then rebuilt. */
const BUILDER_VERSION = 1;

export interface Block {
  kind: "heading" | "para" | "code" | "row";
  /** Heading level, 1 for the page title. */
  level?: number;
  text: string;
}

const ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", nbsp: " " };
const decode = (s: string) =>
  s.replace(/&(#x[0-9a-f]+|#\d+|\w+);/gi, (m, e: string) =>
    e[0] === "#" ? String.fromCodePoint(e[1]?.toLowerCase() === "x" ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10)) : (ENTITIES[e.toLowerCase()] ?? m),
  );

const BLOCK_TAGS = new Set(["p", "li", "dt", "dd", "div", "table", "blockquote", "caption", "ul", "ol", "dl", "br"]);

/** The manual page's title and its content as blocks (navigation, tables of contents and index links dropped). */
export function htmlToBlocks(html: string): { title: string; blocks: Block[] } {
  const title = decode(html.match(/<title>([\s\S]*?)<\/title>/)?.[1] ?? "").replace(/\s+/g, " ").trim();
  const body = html
    .replace(/^[\s\S]*?<body[^>]*>/, "")
    .replace(/<div class="navheader">[\s\S]*?<\/table><hr \/><\/div>/, "")
    .replace(/<div class="navfooter">[\s\S]*$/, "")
    .replace(/<div class="toc">[\s\S]*?<\/dl><\/div>/g, "");
  const raw: Block[] = [];
  let text = "";
  let kind: Block["kind"] = "para";
  let level = 0;
  let inPre = 0;
  let inRow = 0;
  let cells = 0;
  const flush = () => {
    const t = kind === "code" ? text.replace(/^\n+|\s+$/g, "") : text.replace(/\s+/g, " ").trim();
    if (t) raw.push(kind === "heading" ? { kind, level, text: t } : { kind, text: t });
    text = "";
    kind = "para";
  };
  for (const m of body.matchAll(/<(\/?)([a-zA-Z0-9]+)[^>]*?(\/?)>|([^<]+)/g)) {
    if (m[4] !== undefined) {
      text += decode(m[4]);
      continue;
    }
    const closing = m[1] === "/";
    const tag = m[2]!.toLowerCase();
    if (tag === "pre") {
      if (!closing && !inRow) flush();
      inPre += closing ? -1 : 1;
      if (!closing && !inRow) kind = "code";
      if (closing && !inRow) flush();
      continue;
    }
    if (inPre) continue;
    if (tag === "tr") {
      if (!closing) {
        flush();
        inRow++;
        cells = 0;
        kind = "row";
      } else {
        inRow = Math.max(0, inRow - 1);
        flush();
      }
      continue;
    }
    if (inRow) {
      if ((tag === "td" || tag === "th") && !closing) text += cells++ ? " | " : "";
      else if (tag === "p" || tag === "br" || tag === "div") text += " ";
      continue;
    }
    if (/^h[1-6]$/.test(tag)) {
      flush();
      if (!closing) {
        kind = "heading";
        level = Number(tag[1]);
      }
      continue;
    }
    if (BLOCK_TAGS.has(tag)) flush();
  }
  flush();
  // The page title comes first at level 1; the page's own headings follow from level 2.
  const headings = raw.filter((b) => b.kind === "heading");
  const top = Math.min(...headings.map((b) => b.level!), 9);
  const blocks: Block[] = [{ kind: "heading", level: 1, text: title }];
  for (const b of raw) {
    if (b.kind === "heading") {
      if (b.text === title) continue;
      blocks.push({ ...b, level: Math.min(4, b.level! - top + 2) });
    } else blocks.push(b);
  }
  return { title, blocks };
}

// ---- writers -------------------------------------------------------------------------------

function toMarkdown(blocks: Block[]): string {
  return `${blocks
    .map((b) => (b.kind === "heading" ? `${"#".repeat(b.level!)} ${b.text}` : b.kind === "code" ? `\`\`\`\n${b.text}\n\`\`\`` : b.kind === "row" ? `- ${b.text}` : b.text))
    .join("\n\n")}\n`;
}

function toText(blocks: Block[]): string {
  return `${blocks
    .map((b) => (b.kind === "heading" ? (b.level === 1 ? `${b.text}\n${"=".repeat(b.text.length)}` : `${b.text}\n${"-".repeat(b.text.length)}`) : b.kind === "code" ? b.text.replace(/^/gm, "    ") : b.text))
    .join("\n\n")}\n`;
}

/** Blocks grouped under their nearest heading (the page title for text before the first one). */
function sectionsOf(blocks: Block[]): { heading: string; blocks: Block[] }[] {
  const out: { heading: string; blocks: Block[] }[] = [];
  for (const b of blocks) {
    if (b.kind === "heading") out.push({ heading: b.text, blocks: [] });
    else out.at(-1)!.blocks.push(b);
  }
  return out.filter((s) => s.blocks.length);
}

const csvCell = (s: string) => (/[",\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s);

function toCsv(title: string, blocks: Block[]): string {
  const rows = [["page", "section", "kind", "content"]];
  for (const s of sectionsOf(blocks)) for (const b of s.blocks) rows.push([title, s.heading, b.kind === "row" ? "table row" : b.kind === "code" ? "example" : "text", b.text]);
  return `${rows.map((r) => r.map(csvCell).join(",")).join("\n")}\n`;
}

function toJson(title: string, source: string, blocks: Block[]): string {
  const sections = sectionsOf(blocks).map((s) => ({
    heading: s.heading,
    paragraphs: s.blocks.filter((b) => b.kind !== "code").map((b) => b.text),
    ...(s.blocks.some((b) => b.kind === "code") ? { examples: s.blocks.filter((b) => b.kind === "code").map((b) => b.text) } : {}),
  }));
  return `${JSON.stringify({ title, source: `PostgreSQL 15 manual, ${source}`, sections }, null, 2)}\n`;
}

const xmlEscape = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

function toXml(title: string, source: string, blocks: Block[]): string {
  const body = sectionsOf(blocks)
    .map((s) => `  <section>\n    <heading>${xmlEscape(s.heading)}</heading>\n${s.blocks.map((b) => `    <${b.kind === "code" ? "example" : "para"}>${xmlEscape(b.text)}</${b.kind === "code" ? "example" : "para"}>`).join("\n")}\n  </section>`)
    .join("\n");
  return `<?xml version="1.0" encoding="UTF-8"?>\n<document source="${xmlEscape(source)}">\n  <title>${xmlEscape(title)}</title>\n${body}\n</document>\n`;
}

async function toDocx(blocks: Block[]): Promise<Uint8Array> {
  const levels = [HeadingLevel.HEADING_1, HeadingLevel.HEADING_2, HeadingLevel.HEADING_3, HeadingLevel.HEADING_4];
  const children = blocks.flatMap((b) => {
    if (b.kind === "heading") return [new Paragraph({ text: b.text, heading: levels[b.level! - 1] })];
    if (b.kind === "code") return b.text.split("\n").map((line) => new Paragraph({ children: [new TextRun({ text: line, font: "Courier New", size: 18 })] }));
    return [new Paragraph({ text: b.text })];
  });
  const doc = new Document({ creator: "hearth bench", title: blocks[0]!.text, sections: [{ children }] });
  return new Uint8Array(await Packer.toBuffer(doc));
}

/** Greedy word wrap to `width` points. */
function wrap(text: string, font: PDFFont, size: number, width: number): string[] {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(/ +/)) {
    const next = line ? `${line} ${word}` : word;
    if (line && font.widthOfTextAtSize(next, size) > width) {
      lines.push(line);
      line = word;
    } else line = next;
  }
  if (line) lines.push(line);
  return lines;
}

/** A4 pages, Helvetica body, Courier examples, a footer with the title and page number on each page. */
async function toPdf(title: string, blocks: Block[]): Promise<Uint8Array> {
  const pdf = await PDFDocument.create();
  pdf.setTitle(title);
  const regular = await pdf.embedFont(StandardFonts.Helvetica);
  const bold = await pdf.embedFont(StandardFonts.HelveticaBold);
  const mono = await pdf.embedFont(StandardFonts.Courier);
  const charset = new Set(regular.getCharacterSet());
  const clean = (s: string) => [...s.replace(/\t/g, "    ")].map((c) => (charset.has(c.codePointAt(0)!) ? c : c === "→" ? "->" : "?")).join("");
  const [W, H, M] = [595, 842, 50];
  let page = pdf.addPage([W, H]);
  let y = H - M;
  const need = (h: number) => {
    if (y - h < M + 20) {
      page = pdf.addPage([W, H]);
      y = H - M;
    }
  };
  const draw = (line: string, font: PDFFont, size: number, x = M) => {
    need(size + 4);
    y -= size + 4;
    page.drawText(clean(line), { x, y, size, font });
  };
  for (const b of blocks) {
    if (b.kind === "heading") {
      const size = b.level === 1 ? 16 : b.level === 2 ? 13 : 11;
      need(size * 3);
      y -= 8;
      for (const l of wrap(clean(b.text), bold, size, W - 2 * M)) draw(l, bold, size);
      y -= 4;
    } else if (b.kind === "code") {
      for (const raw of b.text.split("\n")) for (const l of raw.length > 88 ? (raw.match(/.{1,88}/g) ?? [""]) : [raw]) draw(l, mono, 8.5, M + 10);
      y -= 6;
    } else {
      for (const l of wrap(clean(b.text), regular, 10, W - 2 * M)) draw(l, regular, 10);
      y -= 6;
    }
  }
  const pages = pdf.getPages();
  pages.forEach((p, i) => p.drawText(clean(`${title} - page ${i + 1} of ${pages.length}`), { x: M, y: 25, size: 8, font: regular }));
  return pdf.save();
}

// ---- the corpus ----------------------------------------------------------------------------

export interface CorpusFile {
  /** The uploaded file's name, e.g. "sql-vacuum.pdf": what the labels name. */
  name: string;
  source: string;
  format: CorpusFormat;
  path: string;
}

async function render(format: CorpusFormat, source: string, title: string, blocks: Block[]): Promise<string | Uint8Array> {
  switch (format) {
    case "pdf":
      return toPdf(title, blocks);
    case "docx":
      return toDocx(blocks);
    case "csv":
      return toCsv(title, blocks);
    case "json":
      return toJson(title, source, blocks);
    case "xml":
      return toXml(title, source, blocks);
    case "txt":
      return toText(blocks);
    case "md":
      return toMarkdown(blocks);
  }
}

/** A hash of the manual's pages, the file list and the builder version: the cache key of the corpus. */
export function corpusKey(): string {
  const h = createHash("sha256").update(`v${BUILDER_VERSION}\n`);
  for (const f of RETRIEVAL_FILES) h.update(`${f.source}:${f.format}\n`).update(readFileSync(join(MANUAL_DIR, f.source)));
  return h.digest("hex").slice(0, 16);
}

/** Writes every corpus file under `dir` (skipped when already built there) and lists them. */
export async function buildCorpus(dir: string): Promise<CorpusFile[]> {
  if (!existsSync(join(MANUAL_DIR, "index.html"))) throw new Error(`the PostgreSQL manual is not at ${MANUAL_DIR}: apt-get install postgresql-doc`);
  mkdirSync(dir, { recursive: true });
  const done = join(dir, ".complete");
  const files = RETRIEVAL_FILES.map((f) => {
    const name = `${f.source.replace(/\.html$/, "")}.${f.format}`;
    return { name, source: f.source, format: f.format, path: join(dir, name) };
  });
  if (existsSync(done)) return files;
  for (const f of files) {
    const { title, blocks } = htmlToBlocks(readFileSync(join(MANUAL_DIR, f.source), "utf8"));
    writeFileSync(f.path, await render(f.format, f.source, title, blocks));
  }
  writeFileSync(done, "");
  return files;
}

if (import.meta.main) {
  const dir = process.argv[2] ?? join(import.meta.dir, "../results/retrieval", `corpus-${corpusKey()}`);
  const files = await buildCorpus(dir);
  process.stdout.write(`${files.length} files in ${dir}\n`);
}
