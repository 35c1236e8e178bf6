// String formats (`t.String({ format: "uuid" })`) checked with plain compiled patterns.
// @elysiajs/openapi pulls in @sinclair/typemap, whose module replaces TypeBox's global format
// registry with Zod checks that build a new Zod schema on every call: a uuid path parameter then
// cost ~40 µs per request (16 % of a token-authenticated GET under load). Elysia's own table
// (a fork of ajv-formats) is put back after that import, so formats mean what Elysia documents.
import { FormatRegistry } from "@sinclair/typebox";
import { fullFormats } from "elysia/type-system/format";

/** The exact shape Date#toISOString writes: every date Hearth answers with. */
const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

export function useElysiaFormats(): void {
  for (const [name, check] of Object.entries(fullFormats)) {
    if (check instanceof RegExp) FormatRegistry.Set(name, (value) => check.test(value));
    else if (typeof check === "function") FormatRegistry.Set(name, check as (value: string) => boolean);
  }
  // Responses carry many dates, all written by toISOString: one that reads back to itself is a
  // valid RFC 3339 date-time (an impossible day would not), so it skips the general check.
  const dateTime = fullFormats["date-time"];
  const readsBack = (value: string) => {
    const d = new Date(value);
    return !Number.isNaN(d.getTime()) && d.toISOString() === value;
  };
  FormatRegistry.Set("date-time", (value) => (ISO_UTC.test(value) && readsBack(value)) || dateTime(value));
}
