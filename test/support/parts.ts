// The sections inside a document's parts as the parser child hands them over (chunk.ts documentParts).
import type { PlacedSection } from "../../src/features/knowledge/ingest/chunk";
import type { Section } from "../../src/features/knowledge/ingest/parse";

/**
 * The document's sections, in order: the pieces of a section longer than a part joined back (a
 * piece starts where the one before it ends; two sections have a blank line between them).
 */
export function sectionsOf(parts: string[]): Section[] {
  const out: PlacedSection[] = [];
  for (const placed of parts.flatMap((p) => JSON.parse(p) as PlacedSection[])) {
    const last = out.at(-1);
    if (last && last.at + last.section.text.length === placed.at) last.section = { ...last.section, text: last.section.text + placed.section.text };
    else out.push(placed);
  }
  return out.map((p) => p.section);
}
