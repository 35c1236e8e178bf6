// Decodes text files: UTF-8 (with or without BOM), UTF-16 LE/BE (with a BOM, or recognised by
// its zero bytes), so a Windows "Unicode" .txt reads as well as a UTF-8 one, and text in a Windows
// code page (Excel's CSV export, an old .txt), read as Windows-1252.
export function decodeText(bytes: Uint8Array): string {
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return new TextDecoder("utf-16le").decode(bytes.subarray(2));
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return new TextDecoder("utf-16be").decode(bytes.subarray(2));
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return new TextDecoder().decode(bytes.subarray(3));
  const sample = bytes.subarray(0, 4096);
  let evenZeros = 0;
  let oddZeros = 0;
  for (let i = 0; i < sample.length; i++) if (sample[i] === 0) i % 2 === 0 ? evenZeros++ : oddZeros++;
  const half = sample.length / 2;
  if (oddZeros > half * 0.3 && evenZeros < half * 0.05) return new TextDecoder("utf-16le").decode(bytes);
  if (evenZeros > half * 0.3 && oddZeros < half * 0.05) return new TextDecoder("utf-16be").decode(bytes);
  return decodeEightBit(bytes);
}

/**
 * UTF-8, or else Windows-1252. A UTF-8 file with a damaged byte or two keeps its text (those bytes
 * become U+FFFD); in a code-page file nearly every byte above 0x7F is no UTF-8 at all.
 */
function decodeEightBit(bytes: Uint8Array): string {
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    const lax = new TextDecoder().decode(bytes);
    let high = 0;
    for (const b of bytes) if (b > 0x7f) high++;
    let bad = 0;
    for (let i = lax.indexOf("\uFFFD"); i >= 0; i = lax.indexOf("\uFFFD", i + 1)) bad++;
    return bad <= high / 10 ? lax : new TextDecoder("windows-1252").decode(bytes);
  }
}

/** Collapses runs of spaces and blank lines the way extracted text needs, keeping paragraphs. */
export function tidy(text: string): string {
  return text
    .replace(/\r\n?/g, "\n")
    .replace(/[ \t\u00a0]+/g, " ")
    .replace(/ *\n */g, "\n")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
}
