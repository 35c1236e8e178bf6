// Format detection and parsing of every supported format, with pages and heading paths.
import { describe, expect, test } from "bun:test";
import { detectFormat } from "../../../src/features/knowledge/ingest/detect";
import { parseDocument, ParseError } from "../../../src/features/knowledge/ingest/parse";
import { makeDocx, makePdf, utf16le } from "../../support/documents";

const enc = (s: string) => new TextEncoder().encode(s);

describe("detect", () => {
  test("by content first, then by name", async () => {
    expect(detectFormat("report.bin", await makePdf(["hello"]))).toBe("pdf");
    expect(detectFormat("notes", await makeDocx(["hello"]))).toBe("docx");
    expect(detectFormat("data.csv", enc("a,b\n1,2"))).toBe("csv");
    expect(detectFormat("x.json", enc('{"a":1}'))).toBe("json");
    expect(detectFormat("noext", enc('<?xml version="1.0"?><a/>'))).toBe("xml");
    expect(detectFormat("README.md", enc("# Title\ntext"))).toBe("md");
    expect(detectFormat("plain", enc("just words"))).toBe("txt");
    expect(detectFormat("win.txt", utf16le("héllo wörld"))).toBe("txt");
  });

  test("UTF-8 text ending in, or cut by the sample inside, a multi-byte character is still text", () => {
    expect(detectFormat("temp.md", enc("# Limits\nKeep the room below 45 °C"))).toBe("md");
    const cut = enc("a".repeat(8191) + "é and more");
    expect(detectFormat("long.txt", cut)).toBe("txt");
    // Not UTF-8 but free of control bytes: text in a Windows code page (see below), no longer refused.
    expect(detectFormat("latin.txt", new Uint8Array([0x61, 0x62, 0xc3, 0x28, 0x61]))).toBe("txt");
  });

  test("binaries and liars are refused", () => {
    expect(detectFormat("photo.png", new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 0]))).toBeNull();
    expect(detectFormat("fake.pdf", enc("not a pdf at all"))).toBeNull();
    expect(detectFormat("fake.txt", new Uint8Array([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0]))).toBeNull();
    expect(detectFormat("archive.zip", new Uint8Array([0x50, 0x4b, 0x03, 0x04, 0, 0, 0, 0]))).toBeNull();
    expect(detectFormat("data.bin", new Uint8Array(100).fill(0))).toBeNull();
  });
});

describe("parse", () => {
  test("PDF: one section per page, with its page number", async () => {
    const pdf = await makePdf(["Intro page", "Second page text", "The answer is on page three: error E4711"]);
    const sections = await parseDocument("pdf", pdf);
    expect(sections.map((s) => s.page)).toEqual([1, 2, 3]);
    expect(sections[2]!.text).toContain("E4711");
  });

  test("DOCX: heading paths kept", async () => {
    const docx = await makeDocx([{ h: 1, text: "Setup" }, "Install the thing.", { h: 2, text: "Linux" }, "Use the package.", { h: 1, text: "Usage" }, "Run it."]);
    const sections = await parseDocument("docx", docx);
    expect(sections).toEqual([
      { text: "Install the thing.", headings: ["Setup"] },
      { text: "Use the package.", headings: ["Setup", "Linux"] },
      { text: "Run it.", headings: ["Usage"] },
    ]);
  });

  test("CSV: rows with the header to repeat", async () => {
    const sections = await parseDocument("csv", enc('name,code\nAlice,"A,1"\nBob,B2\n'));
    expect(sections).toEqual([{ text: "Alice | A,1\nBob | B2", headings: [], repeat: "name | code" }]);
  });

  test("JSON: values by path", async () => {
    const sections = await parseDocument("json", enc('{"server":{"port":8080,"tls":{"cert":"/etc/c.pem"}},"users":[{"name":"ann"}]}'));
    expect(sections).toEqual([
      { text: "server.port: 8080", headings: ["server.port"] },
      { text: "server.tls.cert: /etc/c.pem", headings: ["server.tls"] },
      { text: "users.[0].name: ann", headings: ["users.[0]"] },
    ]);
  });

  test("XML: values by path, entities never expanded", async () => {
    const sections = await parseDocument("xml", enc('<?xml version="1.0"?><config><db host="h1">primary</db></config>'));
    expect(sections.map((s) => s.text).join("\n")).toContain("config.db.@host: h1");
    const bomb = `<?xml version="1.0"?><!DOCTYPE l [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]><l>&b;</l>`;
    await expect(parseDocument("xml", enc(bomb))).rejects.toBeInstanceOf(ParseError);
    const deep = "<a>".repeat(100_000) + "</a>".repeat(100_000);
    await expect(parseDocument("xml", enc(deep))).rejects.toBeInstanceOf(ParseError);
  });

  test("JSON nested a million deep fails cleanly", async () => {
    await expect(parseDocument("json", enc("[".repeat(1_000_000) + "]".repeat(1_000_000)))).rejects.toBeInstanceOf(ParseError);
  });

  test("Markdown: sections by heading, code fences respected", async () => {
    const md = "# A\nintro\n## B\n```\n# not a heading\n```\ntext\n# C\nend\n";
    const sections = await parseDocument("md", enc(md));
    expect(sections.map((s) => s.headings)).toEqual([["A"], ["A", "B"], ["C"]]);
    expect(sections[1]!.text).toContain("# not a heading");
  });

  test("TXT in UTF-16 with and without BOM, and UTF-8", async () => {
    for (const bytes of [utf16le("Grüße aus Köln"), utf16le("Grüße aus Köln", false), enc("\uFEFFGrüße aus Köln")]) {
      expect(await parseDocument("txt", bytes)).toEqual([{ text: "Grüße aus Köln", headings: [] }]);
    }
  });

  test("text in a Windows code page (Excel's CSV export, an old .txt) is read as Windows-1252; a damaged UTF-8 byte does not turn a UTF-8 file into one", async () => {
    const cp1252 = (s: string) => Uint8Array.from(s, (c) => (c === "€" ? 0x80 : c.charCodeAt(0)));
    const csv = cp1252("Name;City;Price\nJosé;Málaga;12 €\nZoë;Köln;9 €\n");
    // Before: refused as "not a supported document" (415).
    expect(detectFormat("excel.csv", csv)).toBe("csv");
    expect(detectFormat("old-notes", cp1252("Café crème, déjà vu"))).toBe("txt");
    const [table] = await parseDocument("csv", csv);
    expect(table!.text).toContain("José");
    expect(table!.text).toContain("Málaga");
    expect(table!.text).toContain("12 €");
    expect(await parseDocument("txt", cp1252("Café crème, déjà vu"))).toEqual([{ text: "Café crème, déjà vu", headings: [] }]);
    const damaged = new Uint8Array([...enc("Grüße aus Köln, schöne Grüße "), 0xff, ...enc(" und Tschüß")]);
    expect((await parseDocument("txt", damaged))[0]!.text).toBe("Grüße aus Köln, schöne Grüße \uFFFD und Tschüß");
  });

  test("a truncated PDF or DOCX is a ParseError", async () => {
    const pdf = await makePdf(["a", "b"]);
    await expect(parseDocument("pdf", pdf.subarray(0, 200))).rejects.toBeInstanceOf(ParseError);
    const docx = await makeDocx(["hello"]);
    await expect(parseDocument("docx", docx.subarray(0, 300))).rejects.toBeInstanceOf(ParseError);
  });
});
