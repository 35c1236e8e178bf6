// Tools of one name from several integrations merge into one with _integration: every
// integration's own arguments are offered, and the chosen one checks what it is given.
import { describe, expect, test } from "bun:test";
import { Type } from "@sinclair/typebox";
import { createToolRegistry, mergeCollisions, type ToolContext, type ToolDef } from "../../src/platform/tools/registry";

const called: { from: string; args: unknown }[] = [];
const def = (from: string, input: ToolDef["input"]): ToolDef => ({
  name: "list_issues",
  description: `Issues of ${from}`,
  input,
  group: { id: `${from}-0000-id`, title: from },
  run: async (args) => (called.push({ from, args }), { text: from }),
});
const tracker = def("WS1 tracker", Type.Object({ query: Type.Optional(Type.String()) }, { additionalProperties: false }));
const gitea = def("Gitea", Type.Object({ state: Type.Optional(Type.Union([Type.Literal("open"), Type.Literal("closed")])), limit: Type.Integer({ minimum: 1 }) }, { additionalProperties: false }));
const ctx = {} as ToolContext;

describe("mergeCollisions", () => {
  test("the second integration's own arguments are accepted (before, only the first one's were)", async () => {
    const [merged] = mergeCollisions([tracker, gitea]);
    const registry = createToolRegistry();
    expect(registry.argumentsError(merged!, { _integration: "Gitea", state: "open", limit: 5 })).toBeUndefined();
    await merged!.run({ _integration: "Gitea", state: "open", limit: 5 }, ctx);
    expect(called.at(-1)).toEqual({ from: "Gitea", args: { state: "open", limit: 5 } });
  });

  test("the chosen integration checks its own schema: another's argument, or its own required one missing, is refused", async () => {
    const [merged] = mergeCollisions([tracker, gitea]);
    await expect(merged!.run({ _integration: "WS1 tracker", state: "open" }, ctx)).rejects.toThrow(/list_issues of "WS1 tracker": .*state/);
    await expect(merged!.run({ _integration: "Gitea", state: "open" }, ctx)).rejects.toThrow(/list_issues of "Gitea": .*limit/);
    await expect(merged!.run({ _integration: "Gitea", limit: 1, query: "x" }, ctx)).rejects.toThrow(/query/);
  });
});
