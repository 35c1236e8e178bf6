// What a zip (a DOCX) says its entries inflate to, read from its central directory: the tail of
// the file and the directory itself, a few KB, never the compressed data. Uploads use it to refuse
// a zip bomb that declares its size before it is stored (the parser child still counts what it
// inflates, since a zip can lie, and reads what this does not: ZIP64 archives and entries, whose
// sizes live in records this leaves alone). Layout: PKWARE APPNOTE 6.3.10, sections 4.3.12-4.3.16.

const EOCD = 0x06054b50;
const EOCD_BYTES = 22;
const CENTRAL_HEADER = 0x02014b50;
const CENTRAL_HEADER_BYTES = 46;
/** The end record is followed by a comment of at most 64 KB. */
const MAX_TAIL = EOCD_BYTES + 0xffff;
/** A directory larger than this is left to the parser child (a DOCX's is a few KB). */
const MAX_DIRECTORY_BYTES = 4 * 1024 * 1024;

const bytesOf = async (blob: Blob, from: number, to: number) => new DataView(await blob.slice(from, to).arrayBuffer());

/**
 * The sum of the uncompressed sizes the central directory of `zip` declares, or undefined when it
 * cannot be read here (not a zip, cut short, ZIP64, a directory past MAX_DIRECTORY_BYTES): the
 * parser decides then.
 */
export async function declaredInflatedBytes(zip: Blob): Promise<number | undefined> {
  const tailStart = Math.max(0, zip.size - MAX_TAIL);
  const tail = await bytesOf(zip, tailStart, zip.size);
  let end = -1;
  for (let at = tail.byteLength - EOCD_BYTES; at >= 0; at--) {
    if (tail.getUint32(at, true) === EOCD) {
      end = at;
      break;
    }
  }
  if (end < 0) return undefined;
  const entries = tail.getUint16(end + 10, true);
  const size = tail.getUint32(end + 12, true);
  const offset = tail.getUint32(end + 16, true);
  // Maxed fields mean a ZIP64 archive (left to the parser).
  if (entries === 0xffff || size === 0xffffffff || offset === 0xffffffff) return undefined;
  if (size > MAX_DIRECTORY_BYTES || offset + size > zip.size) return undefined;
  const dir = await bytesOf(zip, offset, offset + size);
  let total = 0;
  let at = 0;
  for (let i = 0; i < entries; i++) {
    if (at + CENTRAL_HEADER_BYTES > dir.byteLength || dir.getUint32(at, true) !== CENTRAL_HEADER) return undefined;
    const inflated = dir.getUint32(at + 24, true);
    const nameLength = dir.getUint16(at + 28, true);
    const extraLength = dir.getUint16(at + 30, true);
    const commentLength = dir.getUint16(at + 32, true);
    // The real size of a ZIP64 entry is in its extra field (left to the parser).
    if (inflated === 0xffffffff) return undefined;
    total += inflated;
    at += CENTRAL_HEADER_BYTES + nameLength + extraLength + commentLength;
  }
  return total;
}
