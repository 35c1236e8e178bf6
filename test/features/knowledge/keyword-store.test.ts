// The FTS5 query built from user text: safe quoting, codes kept whole, stop words dropped.
import { describe, expect, test } from "bun:test";
import { toFtsQuery } from "../../../src/features/knowledge/keyword-store";

describe("toFtsQuery", () => {
  test("quotes every term, so FTS5 operators in user text are just words", () => {
    expect(toFtsQuery('NEAR(foo bar) OR "x" -y*')).toBe('"NEAR" OR "foo" OR "bar" OR "OR" OR "x" OR "y"');
  });

  test("keeps codes that the tokenizer splits together as phrases", () => {
    expect(toFtsQuery("ZX-9042 and api.v2")).toBe('"ZX 9042" OR "api v2"');
  });

  test("drops stop words unless nothing else is left", () => {
    expect(toFtsQuery("How do I reset the VPN token?")).toBe('"reset" OR "VPN" OR "token"');
    expect(toFtsQuery("who are they")).toBe('"who" OR "are" OR "they"');
    expect(toFtsQuery("?!")).toBeNull();
  });
});
