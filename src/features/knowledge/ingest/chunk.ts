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
  /** The line embedded before each chunk of a section (context.ts): its tokens come out of the window. */
  contextOf?: (section: Section) => string;
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
  // Above sentences the text is cut whatever its size, so it is not counted there (it was three
  // passes of the tokenizer over every character, for nothing).
  const tokens = level >= ALWAYS_SPLIT_TO ? count(text.slice(start, end)) : 0;
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

/** The most of a chunk's window a repeated line (a CSV header) may take; the rest is content. */
const REPEAT_SHARE = 0.25;

/**
 * The repeated line cut to at most `max` tokens, at a cell (" | ") or word boundary, with "…"
 * where it was cut; empty when not even its first word fits. Without this, a wide header fills
 * the window and every chunk carries one row.
 */
export function fitRepeat(line: string, max: number, count: (t: string) => number): string {
  if (count(line) <= max) return line;
  const cuts: number[] = [];
  for (const m of line.matchAll(/ \| |\s+/g)) cuts.push(m.index!);
  let lo = 0;
  let hi = cuts.length - 1;
  let best = "";
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const candidate = `${line.slice(0, cuts[mid])} …`;
    if (count(candidate) <= max) {
      best = candidate;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return best;
}

/** A section and where its text starts in the document (the sections' texts joined by blank lines). */
export interface PlacedSection {
  section: Section;
  at: number;
}

/** The sections with their offsets in the document. */
export function placeSections(sections: Section[]): PlacedSection[] {
  let at = 0;
  return sections.map((section) => {
    const placed = { section, at };
    at += section.text.length + 2;
    return placed;
  });
}

const PART_CUTS = [/\n{2,}/g, /\n/g, /\s+/g];

/** Where to end a part of `text` that may hold at most `max` characters: after a paragraph, a line or a space in its second half, else at `max`. */
function partEnd(text: string, max: number): number {
  const window = text.slice(0, max);
  for (const cut of PART_CUTS) {
    let end = 0;
    for (const m of window.matchAll(cut)) end = m.index! + m[0].length;
    if (end > max / 2) return end;
  }
  // Never between the two halves of a surrogate pair.
  const code = text.charCodeAt(max - 1);
  return code >= 0xd800 && code <= 0xdbff ? max - 1 : max;
}

/**
 * Characters of section text per part of a document (one chunking request to the inference worker):
 * ~10 ms of the model's tokenizer on 2 cores (p90 13), less than one embedding sub-batch. As one
 * request, a 4 MB text file held the worker, and every other workspace's upload and every search
 * behind it, for 8-9 s (a 20 MB one, 41 s).
 */
export const PART_CHARS = 16 * 1024;

/**
 * The document as the parser child hands it over: its parts (chunkParts, PART_CHARS each), each as
 * the JSON of its placed sections. The event loop passes them on to the inference worker without
 * parsing them: decoding a 20 MB document's JSON there held it 25-55 ms.
 */
export function documentParts(sections: Section[]): string[] {
  return chunkParts(sections, PART_CHARS).map((part) => JSON.stringify(part));
}

/**
 * The document in parts of at most `maxChars` characters of section text, in order, each chunked on
 * its own (one request to the inference worker): a section longer than that is cut at a paragraph,
 * line or word into pieces that keep its headings, page and offsets. Chunks never span two pieces.
 */
export function chunkParts(sections: Section[], maxChars: number): PlacedSection[][] {
  const parts: PlacedSection[][] = [];
  let size = Infinity;
  const add = (placed: PlacedSection) => {
    if (size + placed.section.text.length > maxChars) parts.push([]), (size = 0);
    parts.at(-1)!.push(placed);
    size += placed.section.text.length;
  };
  for (const { section, at } of placeSections(sections)) {
    let from = 0;
    while (section.text.length - from > maxChars) {
      const end = from + partEnd(section.text.slice(from), maxChars);
      add({ section: { ...section, text: section.text.slice(from, end) }, at: at + from });
      from = end;
    }
    add({ section: from === 0 ? section : { ...section, text: section.text.slice(from) }, at: at + from });
  }
  return parts;
}

export function chunkSections(sections: Section[], opts: ChunkOptions): Chunk[] {
  return chunkPlaced(placeSections(sections), opts);
}

/** Chunks of sections whose places in the document are given (a part of it: chunkParts). */
export function chunkPlaced(placed: PlacedSection[], opts: ChunkOptions): Chunk[] {
  const chunks: Chunk[] = [];
  const repeatMax = Math.floor(opts.maxTokens * REPEAT_SHARE);
  const fitted = new Map<string, string>();
  for (const { section, at: offset } of placed) {
    const text = section.text;
    let line = section.repeat ? fitted.get(section.repeat) : "";
    if (line === undefined) fitted.set(section.repeat!, (line = fitRepeat(section.repeat!, repeatMax, opts.countTokens)));
    const repeat = line ? `${line}\n` : "";
    // +1: the line break after the repeated line (and after the context) may be a token of its own.
    const context = opts.contextOf?.(section) ?? "";
    const budget = opts.maxTokens - (repeat ? opts.countTokens(line!) + 1 : 0) - (context ? opts.countTokens(context) + 1 : 0);
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
      // Step back over trailing pieces worth up to overlapTokens, and never more than half the chunk:
      // the next chunk moves on by at least half of this one, so chunks stay proportional to tokens.
      let chunkTokens = 0;
      for (let k = i; k < j; k++) chunkTokens += pieces[k]!.tokens;
      const overlapMax = Math.min(opts.overlapTokens, Math.floor(chunkTokens / 2));
      let back = j;
      let overlap = 0;
      while (back - 1 > i && overlap + pieces[back - 1]!.tokens <= overlapMax) overlap += pieces[--back]!.tokens;
      i = back;
    }
  }
  return chunks;
}
