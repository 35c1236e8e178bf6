// Builds real documents for the knowledge tests: a multi-page PDF (pdf-lib), a DOCX with
// headings (docx), and text formats in the encodings users have.
import { PDFDocument, StandardFonts } from "pdf-lib";
import { Document, HeadingLevel, Packer, Paragraph } from "docx";

/** A PDF with one page per entry of `pages`, each page's text drawn line by line. */
export async function makePdf(pages: string[]): Promise<Uint8Array> {
  const pdf = await PDFDocument.create();
  const font = await pdf.embedFont(StandardFonts.Helvetica);
  for (const text of pages) {
    const page = pdf.addPage([595, 842]);
    text.split("\n").forEach((line, i) => page.drawText(line, { x: 50, y: 780 - i * 16, size: 11, font }));
  }
  return pdf.save();
}

/** A DOCX whose blocks are headings ({h: level, text}) or paragraphs (strings). */
export async function makeDocx(blocks: (string | { h: 1 | 2 | 3; text: string })[]): Promise<Uint8Array> {
  const level = { 1: HeadingLevel.HEADING_1, 2: HeadingLevel.HEADING_2, 3: HeadingLevel.HEADING_3 } as const;
  const doc = new Document({
    sections: [
      {
        children: blocks.map((b) => (typeof b === "string" ? new Paragraph(b) : new Paragraph({ text: b.text, heading: level[b.h] }))),
      },
    ],
  });
  return new Uint8Array(await Packer.toBuffer(doc));
}

export function utf16le(text: string, bom = true): Uint8Array {
  const body = Buffer.from(text, "utf16le");
  return bom ? Buffer.concat([Buffer.from([0xff, 0xfe]), body]) : body;
}
