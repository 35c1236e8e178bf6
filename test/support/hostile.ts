// Hostile documents for the ingestion tests, built small in memory: a zip-bomb DOCX, a
// billion-laughs XML, a PDF whose page tree loops, deep JSON, a one-line 50 MB CSV.
import { deflateRawSync, constants } from "node:zlib";

function crc32(bytes: Uint8Array): number {
  return Bun.hash.crc32(bytes);
}

/** A zip with the given entries; `inflated` entries carry their real (huge) size in the header. */
function zip(entries: { name: string; data: Uint8Array; size: number; crc: number; method: 0 | 8 }[]): Uint8Array {
  const parts: Buffer[] = [];
  const central: Buffer[] = [];
  let offset = 0;
  for (const e of entries) {
    const name = Buffer.from(e.name);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(e.method, 8);
    local.writeUInt32LE(e.crc >>> 0, 14);
    local.writeUInt32LE(e.data.length, 18);
    local.writeUInt32LE(e.size >>> 0, 22);
    local.writeUInt16LE(name.length, 26);
    parts.push(local, name, Buffer.from(e.data));
    const c = Buffer.alloc(46);
    c.writeUInt32LE(0x02014b50, 0);
    c.writeUInt16LE(20, 4);
    c.writeUInt16LE(20, 6);
    c.writeUInt16LE(e.method, 10);
    c.writeUInt32LE(e.crc >>> 0, 16);
    c.writeUInt32LE(e.data.length, 20);
    c.writeUInt32LE(e.size >>> 0, 24);
    c.writeUInt16LE(name.length, 28);
    c.writeUInt32LE(offset, 42);
    central.push(c, name);
    offset += 30 + name.length + e.data.length;
  }
  const dir = Buffer.concat(central);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(dir.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...parts, dir, end]);
}

/**
 * A DOCX whose word/document.xml inflates to `megabytes` MB of spaces, from a few hundred KB:
 * one fully flushed deflate block of 1 MB repeated (each block stands alone), then a final block.
 * Its headers say it inflates to `declaredBytes` (the truth unless told otherwise).
 */
export function makeZipBombDocx(megabytes = 2000, declaredBytes = megabytes * 1024 * 1024): Uint8Array {
  const mb = Buffer.alloc(1024 * 1024, 0x20);
  const block = deflateRawSync(mb, { finishFlush: constants.Z_FULL_FLUSH });
  const last = deflateRawSync(Buffer.alloc(0));
  const data = Buffer.concat([...Array.from({ length: megabytes }, () => block), last]);
  const types = Buffer.from('<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>');
  const rels = Buffer.from('<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>');
  return zip([
    { name: "[Content_Types].xml", data: types, size: types.length, crc: crc32(types), method: 0 },
    { name: "_rels/.rels", data: rels, size: rels.length, crc: crc32(rels), method: 0 },
    { name: "word/document.xml", data, size: declaredBytes, crc: 0, method: 8 },
  ]);
}

/** A DOCX under the inflated-size cap that still keeps the parser busy for seconds (100 MB of spaces to inflate twice and read). */
export const slowDocx = () => makeZipBombDocx(100);

export function billionLaughs(): Uint8Array {
  const levels = Array.from({ length: 9 }, (_, i) => `<!ENTITY l${i + 1} "${`&l${i};`.repeat(10)}">`).join("");
  return new TextEncoder().encode(`<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY l0 "lol">${levels}]><lolz>&l9;</lolz>`);
}

/** A PDF whose page tree points back at itself. */
export function loopingPdf(): Uint8Array {
  const objects = [
    "<< /Type /Catalog /Pages 2 0 R >>",
    "<< /Type /Pages /Kids [2 0 R 3 0 R] /Count 2 >>",
    "<< /Type /Pages /Kids [2 0 R] /Parent 2 0 R /Count 1 >>",
  ];
  let body = "%PDF-1.4\n";
  const offsets: number[] = [];
  objects.forEach((o, i) => {
    offsets.push(body.length);
    body += `${i + 1} 0 obj\n${o}\nendobj\n`;
  });
  const xref = body.length;
  body += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, "0")} 00000 n \n`).join("")}`;
  body += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return new TextEncoder().encode(body);
}

export const deepJson = (depth = 1_000_000) => new TextEncoder().encode("[".repeat(depth) + "]".repeat(depth));

export const oneLineCsv = (bytes = 50 * 1024 * 1024) => {
  const out = new Uint8Array(bytes).fill(0x61);
  for (let i = 100; i < bytes; i += 100) out[i] = 0x2c; // commas: one enormous row
  return out;
};

/** A CSV of short rows under a very wide header: the header alone is far over a chunk's window. */
export const wideCsv = (columns: number, rows: number) =>
  new TextEncoder().encode(
    [Array.from({ length: columns }, (_, i) => `c${i}`).join(","), ...Array.from({ length: rows }, (_, r) => String(r % 10))].join("\n"),
  );

/**
 * About `bytes` of JSON: objects nested 250 deep under 20-letter keys, then an array of sevens,
 * so writing the full path for every leaf turns it into ~1,500 times its size.
 */
export function nestedJson(bytes: number): Uint8Array {
  const depth = 250;
  const key = "k".repeat(20);
  const open = `{"${key}":`.repeat(depth);
  const leaves = Math.max(1, Math.floor((bytes - open.length - depth - 2) / 2));
  return new TextEncoder().encode(`${open}[${Array(leaves).fill(7).join(",")}]${"}".repeat(depth)}`);
}

/** ~500 KB of one tag opener that never closes: `<<<<…`, `</</…`, `<a/<a/…`. */
export const openAngles = (unit: string, bytes = 500_000) => new TextEncoder().encode(unit.repeat(Math.ceil(bytes / unit.length)));

/** A Markdown heading whose text is padded with `spaces` spaces: `# a      …      b`. */
export const spacedHeading = (spaces: number) => new TextEncoder().encode(`# a${" ".repeat(spaces)}b\n`);
