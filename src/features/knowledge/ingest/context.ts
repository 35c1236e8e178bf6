// What a chunk's vector is computed from: the chunk with its file's title and heading path before
// it. A passage rarely names what it is about ("the default is 8", a PDF page with no heading on
// it); the line in front tells the model. The stored and cited text stays the chunk itself, and the
// keyword index already holds the headings.

/** Longest context line, in characters: it takes its room from the chunk's window, so it stays short. */
export const CONTEXT_CHARS = 160;

/** The file's name as words: no extension, separators as spaces ("sql-copy.pdf" → "sql copy"). */
export function fileTitle(fileName: string): string {
  const stem = fileName.replace(/\.[A-Za-z0-9]{1,5}$/, "");
  return stem.replace(/[_\-.]+/g, " ").replace(/\s+/g, " ").trim();
}

/** "title › heading › subheading", a heading equal to the one before it left out, cut to CONTEXT_CHARS. */
export function chunkContext(fileName: string, headings: readonly string[]): string {
  const parts: string[] = [];
  for (const p of [fileTitle(fileName), ...headings.map((h) => h.replace(/\s+/g, " ").trim())]) {
    if (p && p.toLowerCase() !== parts.at(-1)?.toLowerCase()) parts.push(p);
  }
  const line = parts.join(" › ");
  return line.length <= CONTEXT_CHARS ? line : `${line.slice(0, CONTEXT_CHARS - 1).trimEnd()}…`;
}

/** The text the embedding model reads for a chunk. */
export const embeddingText = (context: string, text: string) => (context ? `${context}\n${text}` : text);
