// Tells which of the supported formats a file is, from its bytes first and its name second.
export type FileFormat = "pdf" | "docx" | "csv" | "json" | "xml" | "md" | "txt";

export const SUPPORTED = "CSV, PDF, DOCX, TXT, MD, JSON, XML";

const MIME: Record<FileFormat, string> = {
  pdf: "application/pdf",
  docx: "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
  csv: "text/csv",
  json: "application/json",
  xml: "application/xml",
  md: "text/markdown",
  txt: "text/plain",
};

export const mimeOf = (f: FileFormat) => MIME[f];

const startsWith = (b: Uint8Array, sig: number[]) => sig.every((v, i) => b[i] === v);

/** Signatures of common binary formats that must never be taken for text. */
const BINARY_SIGNATURES = [
  [0x89, 0x50, 0x4e, 0x47], // PNG
  [0xff, 0xd8, 0xff], // JPEG
  [0x47, 0x49, 0x46, 0x38], // GIF
  [0x7f, 0x45, 0x4c, 0x46], // ELF
  [0x4d, 0x5a], // Windows executable
  [0x1f, 0x8b], // gzip
  [0x52, 0x61, 0x72, 0x21], // RAR
  [0x37, 0x7a, 0xbc, 0xaf], // 7z
  [0x49, 0x44, 0x33], // MP3
  [0x52, 0x49, 0x46, 0x46], // RIFF (WAV, AVI, WebP)
  [0x25, 0x21, 0x50, 0x53], // PostScript
  [0xd0, 0xcf, 0x11, 0xe0], // old Office (doc, xls)
];

const extension = (name: string) => name.toLowerCase().match(/\.([a-z0-9]+)$/)?.[1] ?? "";

/**
 * True when the sample is text: UTF-16 with a BOM, or 8-bit text without control bytes (UTF-8, or
 * a Windows code page: decodeText tells them apart). Binary data has control bytes within its
 * first kilobytes, and the common binary formats are refused by their signatures before this.
 */
export function looksLikeText(sample: Uint8Array): boolean {
  if (startsWith(sample, [0xff, 0xfe]) || startsWith(sample, [0xfe, 0xff])) return true;
  for (const b of sample) if (b < 9 || (b > 13 && b < 32 && b !== 27)) return false;
  return true;
}

/** How many of a file's first bytes detectFormat reads (the rest may be left out). */
export const DETECT_BYTES = 65536;

/** The format of a file, or null when it is none of the supported ones. */
export function detectFormat(name: string, bytes: Uint8Array): FileFormat | null {
  const head = bytes.subarray(0, 8192);
  const ext = extension(name);
  if (startsWith(head, [0x25, 0x50, 0x44, 0x46, 0x2d])) return "pdf"; // %PDF-
  if (startsWith(head, [0x50, 0x4b, 0x03, 0x04])) {
    // A DOCX is a zip whose entries include word/document.xml (names are stored uncompressed).
    return ext === "docx" || Buffer.from(bytes.subarray(0, DETECT_BYTES)).includes("word/") ? "docx" : null;
  }
  if (BINARY_SIGNATURES.some((s) => startsWith(head, s))) return null;
  if (!looksLikeText(head)) return null;
  const text = new TextDecoder().decode(head).replace(/^\uFEFF/, "").trimStart();
  switch (ext) {
    case "pdf":
    case "docx":
      return null; // claims to be a PDF or DOCX but is not one
    case "csv":
    case "tsv":
      return "csv";
    case "json":
      return "json";
    case "xml":
      return "xml";
    case "md":
    case "markdown":
      return "md";
    case "txt":
    case "text":
    case "log":
      return "txt";
  }
  if (text.startsWith("<?xml")) return "xml";
  if (text.startsWith("{") || text.startsWith("[")) return "json";
  if (/^#{1,6}\s/m.test(text)) return "md";
  return "txt";
}
