// Running headers and footers of paged documents ("Handbook - page 3 of 9" on every page): text
// that belongs to the layout, not to the page. Left in, each page's last chunk carried the title
// once more, and a short final page was mostly footer, so these chunks outranked the passage a
// question was about in both BM25 and the embedding.

/** Lines from each end of a page that may be furniture. */
const EDGE_LINES = 2;
/** A line is furniture when it sits at the same end of at least this share of the pages (and of 3). */
const SHARE = 0.5;

/**
 * Equal once numbers are masked: "page 3 of 9" and "page 4 of 9" are one line. A line without
 * words (a row of figures) never is furniture: tables often end pages.
 */
const shape = (line: string) => {
  const s = line.trim().replace(/\d+/g, "#");
  return (s.match(/\p{L}/gu)?.length ?? 0) >= 3 ? s : "";
};

/** Indexes of the lines at a page's top and at its bottom. */
const ends = (lines: string[]) => {
  const n = Math.min(EDGE_LINES, lines.length);
  return { top: Array.from({ length: n }, (_, i) => i), bottom: Array.from({ length: n }, (_, i) => lines.length - 1 - i) };
};

/** The pages' texts without the lines that recur at the top, or at the bottom, of most pages. */
export function dropPageFurniture(pages: string[]): string[] {
  if (pages.length < 3) return pages;
  const split = pages.map((p) => p.split("\n"));
  const min = Math.max(3, Math.ceil(pages.length * SHARE));
  const furniture = (end: "top" | "bottom") => {
    const seen = new Map<string, number>();
    for (const lines of split) for (const s of new Set(ends(lines)[end].map((i) => shape(lines[i]!)))) if (s) seen.set(s, (seen.get(s) ?? 0) + 1);
    return new Set([...seen].filter(([, n]) => n >= min).map(([s]) => s));
  };
  const top = furniture("top");
  const bottom = furniture("bottom");
  if (top.size === 0 && bottom.size === 0) return pages;
  return split.map((lines) => {
    const { top: t, bottom: b } = ends(lines);
    const drop = new Set([...t.filter((i) => top.has(shape(lines[i]!))), ...b.filter((i) => bottom.has(shape(lines[i]!)))]);
    return lines.filter((_, i) => !drop.has(i)).join("\n");
  });
}
