// Schemas of the operational endpoints.
import { t } from "elysia";

const Check = t.Object({ status: t.UnionEnum(["ok", "loading", "unavailable"]), detail: t.Optional(t.String()), reason: t.Optional(t.String()) });
// The checks DESIGN.md names are always there; a part added later reports its own next to them.
export const Checks = t.Object({ database: Check, vectors: Check, embedder: Check, transcriber: Check, llm: Check }, { additionalProperties: Check });
