// DOCX to sections with mammoth, after a check that the zip does not inflate past its cap: a zip
// bomb (a few MB whose document.xml inflates to 2 GB) ran until the parser child hit its memory
// cap, 5-10 s later; checked first, it fails in a fraction of a second, naming the limit.
import type JSZip from "jszip";
import { megabytes, ParseError, type Section } from "./parse";
import { tidy } from "./text";

/** What the zip says an entry inflates to: JSZip keeps it in `_data` (no public accessor). */
function declaredSize(f: JSZip.JSZipObject): number | undefined {
  const size = (f as { _data?: { uncompressedSize?: unknown } })._data?.uncompressedSize;
  return typeof size === "number" && size >= 0 ? size : undefined;
}

/**
 * Inflates every entry (JSZip, as mammoth does) and counts the bytes, stopping at `cap`: the sizes a
 * zip declares can lie, so they are only a first look. Nothing inflated is kept.
 */
async function checkInflatedSize(zip: JSZip, cap: number): Promise<void> {
  const entries = Object.values(zip.files).filter((f) => !f.dir);
  const over = () => new ParseError(`the DOCX inflates to more than ${megabytes(cap)} (the limit per document)`);
  // A bomb that says what it is fails before anything is inflated.
  const declared = entries.reduce((n, f) => n + (declaredSize(f) ?? 0), 0);
  if (declared > cap) throw over();
  let total = 0;
  for (const entry of entries) {
    const says = declaredSize(entry);
    let size = 0;
    await new Promise<void>((resolve, reject) => {
      const stop = (e: ParseError) => {
        stream.pause();
        stream.removeAllListeners("data");
        reject(e);
      };
      // JSZip's Node stream (readable-stream 2) has events but no async iterator.
      const stream = entry.nodeStream("nodebuffer");
      stream.on("data", (piece: Buffer) => {
        size += piece.byteLength;
        total += piece.byteLength;
        if (total > cap) stop(over());
        // JSZip refuses it too, but only once all of it is inflated.
        else if (says !== undefined && size > says) stop(new ParseError(`not a readable DOCX: ${entry.name} inflates to more than the ${says} bytes it declares`));
      });
      stream.on("error", (e: Error) => reject(new ParseError(`not a readable DOCX: ${e.message}`)));
      stream.on("end", resolve);
    });
  }
}

const ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", nbsp: " " };
const decodeEntities = (s: string) =>
  s.replace(/&(#x[0-9a-f]+|#\d+|\w+);/gi, (m, e: string) =>
    e[0] === "#" ? String.fromCodePoint(e[1]?.toLowerCase() === "x" ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10)) : (ENTITIES[e.toLowerCase()] ?? m),
  );
const stripTags = (html: string) => decodeEntities(html.replace(/<br\s*\/?>/gi, "\n").replace(/<[^>]+>/g, ""));

export async function parseDocx(bytes: Uint8Array, maxInflatedBytes: number): Promise<Section[]> {
  // mammoth (the larger of the two to load) only once the zip has passed its check.
  const { default: JSZipLib } = await import("jszip");
  let zip: JSZip;
  try {
    zip = await JSZipLib.loadAsync(bytes);
  } catch (e) {
    throw new ParseError(`not a readable DOCX: ${(e as Error).message}`);
  }
  await checkInflatedSize(zip, maxInflatedBytes);
  const { default: mammoth } = await import("mammoth");
  let html: string;
  try {
    // externalFileAccess: false, so a document cannot make Hearth read files it links to.
    html = (await mammoth.convertToHtml({ buffer: Buffer.from(bytes) }, { externalFileAccess: false })).value;
  } catch (e) {
    throw new ParseError(`not a readable DOCX: ${(e as Error).message}`);
  }
  const sections: Section[] = [];
  const headings: string[] = [];
  let current: Section = { text: "", headings: [] };
  const flush = () => {
    current.text = tidy(current.text);
    if (current.text) sections.push(current);
  };
  for (const m of html.matchAll(/<(h[1-6]|p|li|td|th)\b[^>]*>([\s\S]*?)<\/\1>/gi)) {
    const tag = m[1]!.toLowerCase();
    const text = tidy(stripTags(m[2]!));
    if (!text) continue;
    if (tag[0] === "h" && tag !== "th") {
      flush();
      const level = Number(tag[1]);
      headings.splice(level - 1, headings.length, text);
      current = { text: "", headings: headings.filter(Boolean) };
    } else {
      current.text += `${text}\n\n`;
    }
  }
  flush();
  return sections;
}
