// Splits parsed sections into chunks sized in the embedding model's tokens, at structure first
// (paragraphs, lines, sentences, words) and characters last, with overlap between neighbours.
import type { Section } from "./parse";

export interface Chunk {
  text: string;
  page?: number;
  headings: string[];
  /** Offsets into the document text: the sections' texts joined by blank lines. */
  charStart: number;
  charEnd: number;
  tokens: number;
}

export interface ChunkOptions {
  /** Most tokens a chunk may hold (without the model's special tokens). */
  maxTokens: number;
  overlapTokens: number;
  countTokens: (text: string) => number;
}

interface Piece {
  start: number;
  end: number;
  tokens: number;
  /** How strong the cut before this piece is: 0 paragraph, 1 line, 2 sentence, 3 word, 4 inside a word. */
  boundary: number;
}

const SEPARATORS = [/\n{2,}/g, /\n/g, /(?<=[.!?;:])\s+/g, /\s+/g];
/** Text is always cut down to sentences (so overlap has something to step back over); finer only when needed. */
const ALWAYS_SPLIT_TO = 3;

function split(text: string, start: number, end: number, max: number, count: (t: string) => number, level: number, boundary: number): Piece[] {
  const tokens = count(text.slice(start, end));
  if (level >= ALWAYS_SPLIT_TO && tokens <= max) return text.slice(start, end).trim() ? [{ start, end, tokens, boundary }] : [];
  const sep = SEPARATORS[level];
  if (!sep) {
    if (tokens <= max) return [{ start, end, tokens, boundary }];
    // One enormous word: cut by characters, halving until each part fits.
    const mid = start + Math.ceil((end - start) / 2);
    if (mid >= end) return [{ start, end, tokens, boundary }];
    return [...split(text, start, mid, max, count, level, boundary), ...split(text, mid, end, max, count, level, 4)];
  }
  const pieces: Piece[] = [];
  let from = start;
  let first = true;
  for (const m of text.slice(start, end).matchAll(sep)) {
    const cut = start + m.index! + m[0].length;
    if (cut > from && cut < end) {
      pieces.push(...split(text, from, cut, max, count, level + 1, first ? boundary : level));
      from = cut;
      first = false;
    }
  }
  pieces.push(...split(text, from, end, max, count, level + 1, first ? boundary : level));
  return pieces;
}

export function chunkSections(sections: Section[], opts: ChunkOptions): Chunk[] {
  const chunks: Chunk[] = [];
  let offset = 0;
  for (const section of sections) {
    const text = section.text;
    const repeat = section.repeat ? `${section.repeat}\n` : "";
    const budget = Math.max(8, opts.maxTokens - (repeat ? opts.countTokens(repeat) : 0));
    const pieces = split(text, 0, text.length, budget, opts.countTokens, 0, 0);
    let i = 0;
    while (i < pieces.length) {
      // Pack whole pieces while they fit...
      let j = i;
      let tokens = 0;
      while (j < pieces.length && tokens + pieces[j]!.tokens <= budget) tokens += pieces[j++]!.tokens;
      if (j === i) j = i + 1;
      // ...then, if the text goes on, end at the strongest boundary in the chunk's second half.
      if (j < pieces.length) {
        let best = j;
        let sum = 0;
        for (let k = i; k < j; k++) {
          if (k > i && sum >= budget / 2 && pieces[k]!.boundary < pieces[best]!.boundary) best = k;
          sum += pieces[k]!.tokens;
        }
        j = best;
      }
      const start = pieces[i]!.start;
      const end = pieces[j - 1]!.end;
      const body = text.slice(start, end).trim();
      if (body) {
        const full = repeat + body;
        const trimmedStart = start + (text.slice(start, end).length - text.slice(start, end).trimStart().length);
        chunks.push({ text: full, page: section.page, headings: section.headings, charStart: offset + trimmedStart, charEnd: offset + trimmedStart + body.length, tokens: opts.countTokens(full) });
      }
      if (j >= pieces.length) break;
      // Step back over trailing pieces worth up to overlapTokens, but always move forward.
      let back = j;
      let overlap = 0;
      while (back - 1 > i && overlap + pieces[back - 1]!.tokens <= opts.overlapTokens) overlap += pieces[--back]!.tokens;
      i = back;
    }
    offset += text.length + 2;
  }
  return chunks;
}
