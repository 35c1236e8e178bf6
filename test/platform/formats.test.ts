// String formats after the explorer's import: Elysia's compiled checks; dates and ids found valid
// are remembered, and a remembered answer is the general check's.
import { expect, test } from "bun:test";
import { FormatRegistry } from "@sinclair/typebox";
import { fullFormats } from "elysia/type-system/format";
import "../../src/platform/http/explorer";

test("date-time: toISOString output passes, impossible or malformed dates do not, offsets still pass", () => {
  const check = FormatRegistry.Get("date-time")!;
  for (const v of ["2026-11-23T10:00:00.000Z", "2024-02-29T23:59:59.999Z", "2026-11-23T10:00:00+01:00", "2026-11-23T10:00:00Z"]) expect(check(v)).toBe(true);
  for (const v of ["2026-02-30T00:00:00.000Z", "2025-02-29T00:00:00.000Z", "2026-13-01T00:00:00.000Z", "2026-11-23T24:00:01.000Z", "2026-11-23", "soon", ""]) expect(check(v)).toBe(false);
  // Asked again (answered from memory when valid), every answer is still the general check's.
  for (const v of ["2026-11-23T10:00:00.000Z", "2026-02-30T00:00:00.000Z", "2026-11-23T10:00:00+01:00", "soon"]) expect(check(v)).toBe(fullFormats["date-time"](v));
  for (let t = Date.UTC(2020, 0, 1); t < Date.UTC(2030, 0, 1); t += 86_400_000 * 7 + 3_723_456) {
    const v = new Date(t).toISOString();
    expect(check(v)).toBe(fullFormats["date-time"](v));
    expect(check(v)).toBe(true);
  }
});

test("uuid and email are Elysia's patterns (not checks that build a schema per call)", () => {
  const uuid = FormatRegistry.Get("uuid")!;
  expect(uuid(crypto.randomUUID())).toBe(true);
  // Version 0: Elysia's pattern takes it, the Zod check the plugin installs (versions 1-8) did not.
  expect(uuid("00000000-0000-0000-0000-000000000001")).toBe(true);
  expect(uuid("not-a-uuid")).toBe(false);
  // Asked again (answered from memory when valid), every answer is still the pattern's.
  const id = crypto.randomUUID();
  for (const v of [id, id, id.toUpperCase(), `${id}x`, `${id}x`, "not-a-uuid", ""]) expect(uuid(v)).toBe((fullFormats.uuid as RegExp).test(v));
  expect(FormatRegistry.Get("email")!("someone@example.org")).toBe(true);
  expect(FormatRegistry.Get("email")!("nobody")).toBe(false);
});
