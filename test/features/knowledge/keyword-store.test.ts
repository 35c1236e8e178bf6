// The FTS5 query built from user text: safe quoting, codes kept whole, stop words dropped.
import { describe, expect, test } from "bun:test";
import { toFtsQuery } from "../../../src/features/knowledge/keyword-store";

describe("toFtsQuery", () => {
  test("quotes every term, so FTS5 operators in user text are just words", () => {
    // "NEAR(foo" is one word, so it stays one phrase; OR in capitals is kept, as a quoted word.
    expect(toFtsQuery('NEAR(foo bar) OR "x" -y*')).toBe('"NEAR foo" OR "bar" OR "OR" OR "x" OR "y"');
    expect(toFtsQuery("AND OR NOT")).toBe('"AND" OR "OR" OR "NOT"');
  });

  test("keeps codes that the tokenizer splits together as phrases", () => {
    expect(toFtsQuery("ZX-9042 and api.v2")).toBe('"ZX 9042" OR "api v2"');
  });

  test("drops stop words unless nothing else is left", () => {
    expect(toFtsQuery("How do I reset the VPN token?")).toBe('"reset" OR "VPN" OR "token"');
    expect(toFtsQuery("who are they")).toBe('"who" OR "are" OR "they"');
    expect(toFtsQuery("?!")).toBeNull();
  });

  test("keeps a stop word written in capitals: a keyword of the documents' language", () => {
    expect(toFtsQuery("NULLS NOT DISTINCT unique index")).toBe('"NULLS" OR "NOT" OR "DISTINCT" OR "unique" OR "index"');
    expect(toFtsQuery("is it not WITH GRANT OPTION")).toBe('"WITH" OR "GRANT" OR "OPTION"');
  });
});
